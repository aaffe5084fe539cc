"""The words of the report and of ``newmarket replay``: every capture told, hands named right.

Two narrators tell a match: ``referee.text.render`` (``newmarket replay``, ``demo``)
and ``referee.report.frames`` (the report's replay viewer and the ``#`` lines
of a fault's transcript).  Both are held here against the engine's own events
over random matches of every preset.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from engine import Match, preset
from engine.events import BoodleWon, CardPlayed, WentOut
from engine.presets import PRESETS
from referee.match.convert import log_event
from referee.report.data import transcripts
from referee.report.frames import build_frames, plural, pretty, pretty_text
from referee.text.render import render

CAPTURE = re.compile(r"(\S+) wins the (\S+) boodle: (\d+) chips")


def _random_match(rules_name: str, players: int, seed: int) -> Match:
    match = Match(preset(rules_name).with_options({"hand_limit": 15}), players, seed)
    rng = random.Random(seed)
    while not match.is_over:
        match.apply(rng.choice(match.legal_actions()))
    return match


@pytest.mark.parametrize("rules_name", sorted(PRESETS))
def test_every_boodle_capture_is_told_once_with_its_run(rules_name: str) -> None:
    going_out_captures = 0
    for seed in range(12):
        players = 3 + seed % 4
        match = _random_match(rules_name, players, seed)
        events = list(match.events(viewer=None))
        names = [f"s{seat}" for seat in range(players)]
        boodle = [str(card) for card in match.rules.boodle_cards]
        won = [
            (f"s{e.seat}", e.card.pretty, str(e.chips)) for e in events if isinstance(e, BoodleWon)
        ]
        for index, event in enumerate(events):
            going_out_captures += isinstance(event, WentOut) and isinstance(
                events[index - 1], BoodleWon
            )
        # newmarket replay / demo
        told = render(events, names, match.rules.boodle_cards)
        assert [m.groups() for line in told for m in CAPTURE.finditer(line)] == won, seed
        # the report's viewer: a capture is told in the step of its run, never a later one
        records: list[dict[str, Any]] = [{"type": "event", "event": log_event(e)} for e in events]
        frames = build_frames(names, [match.rules.starting_chips] * players, boodle, records)
        lines = [line for frame in frames for line in frame.lines]
        assert [m.groups() for line in lines for m in CAPTURE.finditer(line)] == won, seed
        for line in lines:
            # After a capture the run goes on in a part of its own, with the player named.
            assert not re.search(r"boodle: \d+ chips [^·]", line), line
        for frame in frames:
            if frame.kind == "went_out":
                assert records[frame.events - 1]["event"]["type"] == "went_out"
                previous = records[frame.events - 2]["event"]
                if previous["type"] == "boodle_won":
                    assert CAPTURE.search(frame.lines[-1]), frame.lines
    assert going_out_captures > 0  # the case that matters: the last card takes a boodle


def test_a_capture_by_the_going_out_card_is_told_before_the_hand_ends() -> None:
    """Seed 0 of boodle: the last card, K♥ led, takes its boodle and ends the hand."""
    match = _random_match("boodle", 4, 0)
    events = list(match.events(viewer=None))
    at = next(
        i
        for i, e in enumerate(events)
        if isinstance(e, WentOut) and isinstance(events[i - 1], BoodleWon)
    )
    capture = events[at - 1]
    assert isinstance(capture, BoodleWon) and isinstance(events[at - 2], CardPlayed)
    names = [f"s{seat}" for seat in range(4)]
    told = render(events, names, match.rules.boodle_cards)
    said = f"s{capture.seat} wins the {capture.card.pretty} boodle: {capture.chips} chips"
    position = told.index("  " + said)
    assert "is out of cards" in told[position - 1]
    assert not told[position + 1].startswith("Hand ")


def _record(record_type: str, **fields: Any) -> dict[str, Any]:
    return {"type": record_type, **fields}


def test_a_fault_transcript_that_starts_mid_hand_names_the_hand_that_ends() -> None:
    """The transcript starts a few requests back, after the hand began: never "hand 0 ends"."""
    header = _record(
        "header",
        bots=[{"name": "alice"}, {"name": "bob"}, {"name": "carol"}],
        rules={"boodle_cards": ["AS", "KH", "QC", "JD"]},
    )
    records = [
        header,
        _record("event", event={"type": "hand_started", "hand": 6, "dealer": 0}),
        _record("request", seat=1, hand=6, id=40, decision="lead", legal=["TC"], default="TC"),
        _record("reply", seat=1, id=40, choice="TC", latency_ms=1.0),
        _record("decision", seat=1, decision="lead", choice="TC", by="bot"),
        _record("event", event={"type": "card_played", "seat": 1, "card": "TC", "lead": True}),
        _record("event", event={"type": "went_out", "seat": 1}),
        _record(
            "event",
            event={
                "type": "hand_ended",
                "hands": [["2D"], [], ["3S"]],
                "dead_hand": [],
                "winners": [1],
            },
        ),
        _record("event", event={"type": "hand_started", "hand": 7, "dealer": 1}),
        _record(
            "request", seat=1, hand=7, id=41, decision="lead", legal=["AD", "6H"], default="AD"
        ),
        _record("reply", seat=1, id=41, choice="TS", latency_ms=0.3),
        _record(
            "fault",
            seat=1,
            hand=7,
            kind="illegal",
            detail="TS may not be led now (legal: AD 6H)",
            applied="AD",
        ),
        _record("decision", seat=1, decision="lead", choice="AD", by="default"),
    ]
    (transcript,) = transcripts(records)
    text = "\n".join(line for _, line in transcript.lines)
    assert "hand 6 ends: won by bob" in text
    assert "hand 0" not in text
    assert "! " not in text  # marks are kept apart from the text
    assert ("!", "illegal fault: 10♠ may not be led now (legal: A♦ 6♥)") in transcript.lines
    assert ("=", "lead: A♦ applied (by default)") in transcript.lines
    assert ("<", "request 41: lead (hand 7); legal: A♦ 6♥; default A♦; None ms left") in (
        transcript.lines
    )


def test_one_card_notation_and_plurals() -> None:
    assert pretty("TC") == "10♣" and pretty("8C") == "8♣" and pretty("XC") == "XC"
    assert pretty_text("TC may not be led now (legal: AD 6H)") == (
        "10♣ may not be led now (legal: A♦ 6♥)"
    )
    assert pretty_text("ACK from 2DS and TCP") == "ACK from 2DS and TCP"  # only whole cards
    assert plural(1, "fault") == "1 fault" and plural(0, "fault") == "0 faults"
    assert plural(3, "match") == "3 matches" and plural(1, "match") == "1 match"
