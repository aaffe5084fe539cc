"""The viewer's steps hold the engine's own state: every preset, random play, many seeds.

``build_frames`` keeps its own account of chips and cards from the log's events;
here the engine is stopped at every decision and its chips, hands, boodle stacks,
kitty and live seats are compared with the frame that ends at the same event.
"""

from __future__ import annotations

import random

import pytest

from engine import Match, preset
from engine.presets import PRESETS
from referee.match.convert import log_event
from referee.report.frames import build_frames, pretty

# After a hand ends the viewer keeps showing the cards left in each hand (the log's
# hand_ended); the engine has already put them away.
_SHOWS_LEFTOVERS = {"hand_ended", "match_ended", "player_eliminated", "end"}

Snapshot = tuple[list[int], list[list[str]], list[int], int, list[bool]]


def _play(
    rules_name: str, players: int, seed: int, chips: list[int] | None = None
) -> tuple[Match, dict[int, Snapshot]]:
    rules = preset(rules_name).with_options({"hand_limit": 12})
    match = Match(rules, players, seed, chips=chips)
    rng = random.Random(seed)
    snapshots: dict[int, Snapshot] = {}
    while True:
        snapshots[len(match.events(viewer=None))] = (
            list(match.chips),
            [sorted(str(card) for card in match.hand_of(seat)) for seat in range(players)],
            list(match.boodle_stacks),
            match.kitty,
            list(match.live),
        )
        if match.is_over:
            return match, snapshots
        match.apply(rng.choice(match.legal_actions()))


@pytest.mark.parametrize("rules_name", sorted(PRESETS))
@pytest.mark.parametrize("players", [3, 5])
def test_frames_agree_with_the_engine(rules_name: str, players: int) -> None:
    compared = 0
    for seed in range(6):
        match, snapshots = _play(rules_name, players, seed)
        rules = match.rules
        events = [{"type": "event", "event": log_event(e)} for e in match.events(viewer=None)]
        frames = build_frames(
            [f"bot{seat}" for seat in range(players)],
            [rules.starting_chips] * players,
            [str(card) for card in rules.boodle_cards],
            events,
        )
        assert frames[-1].events == len(events)
        for frame in frames:
            snapshot = snapshots.get(frame.events)
            if snapshot is None:
                continue
            chips, hands, stacks, kitty, live = snapshot
            assert frame.chips == chips, (seed, frame.events, frame.lines)
            if frame.kind not in _SHOWS_LEFTOVERS:
                assert [sorted(hand) for hand in frame.hands] == hands, (seed, frame.events)
            assert frame.boodle == stacks, (seed, frame.events)
            assert frame.kitty == kitty
            assert [status == "in" for status in frame.status] == live
            compared += 1
        # Chips are conserved in every step: nothing appears or vanishes.
        total = rules.starting_chips * players
        for frame in frames:
            assert sum(frame.chips) + sum(frame.boodle) + frame.kitty + frame.pot == total
    assert compared > 50


def test_pretty_cards() -> None:
    assert pretty("TS") == "10♠"
    assert pretty("QH") == "Q♥"
    assert pretty("<b>") == "<b>"


def test_frames_start_from_each_seats_own_chips() -> None:
    """A bankroll league seats bots with different chips; the log header says how many."""
    chips = [12, 40, 75, 23]
    for seed in range(4):
        match, snapshots = _play("boodle", 4, seed, chips)
        events = [{"type": "event", "event": log_event(e)} for e in match.events(viewer=None)]
        boodle = [str(card) for card in match.rules.boodle_cards]
        frames = build_frames([f"bot{s}" for s in range(4)], chips, boodle, events)
        assert frames[0].chips == chips
        for frame in frames:
            if frame.events in snapshots:
                assert frame.chips == snapshots[frame.events][0]
        assert frames[-1].chips == list(match.outcome().chips)
