"""What each seat is told: every event of its own view, once, in order, one hand per message.

The match is replayed from its log's decisions into a fresh engine, and each
fake bot's received ``events`` must be exactly ``Match.events(viewer=seat)``
converted (plus the referee's ``seat_disqualified``), whatever the batching.
That is also the check that nothing hidden leaks: the engine's per-seat view
is the only source, and no message carries another seat's cards.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from engine import Match, Rules, preset
from protocol.events import Event
from referee.match.convert import protocol_events, to_action
from referee.match.log import read_log
from referee.match.referee import play_match
from referee.transport.timecontrol import TimeControl
from tests.referee.fakes import FakeWire, Message, fake_table, randomly

RULE_SETS = {
    "boodle": preset("boodle").with_options({"hand_limit": 6}),
    "new-market": preset("new-market").with_options({"hand_limit": 6}),
    "auction": preset("boodle").with_options(
        {"hand_limit": 6, "ante": "free", "dead_hand_exchange": "exchange_or_auction"}
    ),
    "stops": preset("stops"),
}


def replayed(log: Path, rules: Rules) -> Match:
    records = [record for _, record in read_log(log)]
    header = records[0]
    match = Match(rules, header["players"], header["seed"])
    for record in records:
        if record["type"] == "decision":
            match.apply(to_action(record["decision"], record["choice"]))
    assert match.is_over
    return match


def as_json(events: list[Event]) -> list[dict[str, Any]]:
    """The events as a bot decodes them (pairs become lists)."""
    decoded: list[dict[str, Any]] = msgspec.json.decode(msgspec.json.encode(events))
    return decoded


@pytest.mark.parametrize("name", list(RULE_SETS))
async def test_each_seat_gets_exactly_its_view_of_every_event(
    autojump_clock: object, tmp_path: Path, name: str
) -> None:
    rules = RULE_SETS[name]
    control = TimeControl()
    log = tmp_path / "m.jsonl"

    async def cheat_once(wire: FakeWire, request: Message) -> None:
        # seat 3 is disqualified mid-match: seat_disqualified lands in every stream
        await wire.reply(request, "XX" if wire.requests <= 3 else request["default"])

    policies = [randomly(1), randomly(2), randomly(3), cheat_once]
    async with fake_table(policies, control) as (sessions, wires):
        result = await play_match(
            sessions, rules, 7, time_control=control, match_id=name, log_path=log
        )
    assert result.seats[3].status == "disqualified"
    match = replayed(log, rules)
    for seat, wire in enumerate(wires):
        expected = as_json(protocol_events(match.events(viewer=seat)))
        got = [event for event in wire.events() if event["type"] != "seat_disqualified"]
        assert got == expected, f"seat {seat}"
        told = [event for event in wire.events() if event["type"] == "seat_disqualified"]
        assert told == [{"type": "seat_disqualified", "seat": 3, "reason": "malformed"}]
        for batch in wire.of_type("events"):
            kinds = [event["type"] for event in batch["events"]]
            assert kinds, "an empty events message"
            assert "hand_ended" not in kinds[:-1], "a message holds events of two hands"
        # everything arrives before match_end, which is the last message of the match
        assert wire.received[-2]["type"] == "match_end"
        assert wire.received[-1]["type"] == "shutdown"


async def test_seats_hear_of_a_hand_end_before_the_next_request(
    autojump_clock: object, tmp_path: Path
) -> None:
    """SPEC.md 6.2: just after each hand_ended, every seat is sent that hand's events."""
    control = TimeControl()
    rules = preset("boodle").with_options({"hand_limit": 4})
    async with fake_table([randomly(i) for i in range(3)], control) as (sessions, wires):
        await play_match(sessions, rules, 3, time_control=control, match_id="h")
    for wire in wires:
        ended = 0
        for message in wire.received:
            if message["type"] == "events":
                ended += sum(e["type"] == "hand_ended" for e in message["events"])
            elif message["type"] == "request":
                # a request of hand h comes after the seat was told hands 1 .. h-1 ended
                hands_started = sum(
                    e["type"] == "hand_started"
                    for m in wire.received[: wire.received.index(message)]
                    if m["type"] == "events"
                    for e in m["events"]
                )
                assert ended == hands_started - 1
