"""The match's events lines, assembled from each event's JSON (``referee.match.convert``).

The referee encodes each event once and joins the pieces into a seat's
``events`` line instead of encoding an ``Events`` message per seat.  SPEC.md
section 4 promises compact JSON and lines of at most 65 536 bytes; these
tests hold the assembled line to ``protocol.messages.encode``, byte for byte
and at the limit, so the shortcut cannot drift from the one encoder.
"""

from __future__ import annotations

import dataclasses
from typing import cast

import msgspec
import pytest

from engine import Match, preset
from engine import events as engine_events
from protocol.events import Event
from protocol.framing import MAX_LINE_BYTES, LineTooLongError
from protocol.messages import Events, encode
from referee.match import convert
from referee.match.convert import events_line, protocol_event, wire_event
from tests.protocol.samples import EVENTS


def test_an_events_line_is_the_encoder_s_line_byte_for_byte() -> None:
    for count in (0, 1, len(EVENTS)):
        events = EVENTS[:count]
        assert events_line([wire_event(event) for event in events]) == encode(Events(events=events))


@pytest.mark.parametrize("over", [-1, 0, 1])
def test_the_line_limit_falls_where_the_encoder_s_does(over: int) -> None:
    # One string "event" padded so that the line is the limit plus ``over`` bytes.
    frame = len(encode(Events(events=[]))) - 1 + 2  # the message around it, and the quotes
    padding = "x" * (MAX_LINE_BYTES + over - frame)
    fake = cast(list[Event], [padding])  # msgspec encodes what it is given
    fragment = [msgspec.json.encode(padding)]
    if over <= 0:
        line = events_line(fragment)
        assert line == encode(Events(events=fake))
        assert len(line) == MAX_LINE_BYTES + over + 1
        return
    with pytest.raises(LineTooLongError) as encoder_s:
        encode(Events(events=fake))
    with pytest.raises(LineTooLongError) as assembled:
        events_line(fragment)
    assert str(assembled.value) == str(encoder_s.value)


def test_the_table_of_repeated_events_keeps_within_its_limit_and_gives_the_encoder_s_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The referee runs for a whole league: its table of pre-encoded events must not
    # grow with the events it meets, and a cached line must be the encoder's own.
    table: dict[engine_events.Event, bytes] = {}
    monkeypatch.setattr(convert, "_PUBLIC_JSON", table)
    monkeypatch.setattr(convert, "_PUBLIC_JSON_LIMIT", 5)
    for stake in range(40):
        event = engine_events.StakePlaced(seat=stake % 4, amounts=(stake, 1, 0, 2), kitty=1)
        fresh = wire_event(cast(Event, protocol_event(event)))
        first = convert.wire_views((event, None))
        again = convert.wire_views((event, None))
        assert first == fresh
        assert again is first  # the second time from the table, not encoded again
        assert len(table) <= 5


def test_the_log_s_own_converters_write_what_the_generic_one_writes() -> None:
    # card_played and cards_dealt skip the generic field walk for speed, and say they
    # build the very same dict; replay compares log lines, so hold them to it, key
    # order included, over real events (the dead hand dealt, and hands hidden per seat).
    special = {engine_events.CardPlayed, engine_events.CardsDealt}
    seen: set[type] = set()
    for seed in range(3):
        match = Match(dataclasses.replace(preset("boodle"), hand_limit=3), 4, seed)
        request_id = 0
        while match.current_seat() is not None:
            request_id += 1
            request = convert.build_request(match, request_id, time_left_ms=0, time_bank_ms=0)
            convert.apply_default(match, request)
        for omniscient, views in match.event_views():
            for event in (omniscient, *(views or ())):
                if type(event) in special:
                    seen.add(type(event))
                    generic = convert._generic_log_event(type(event))(event)
                    assert msgspec.json.encode(convert.log_event(event)) == msgspec.json.encode(
                        generic
                    )
    assert seen == special
