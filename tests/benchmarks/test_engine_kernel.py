"""The bare kernel of ``benchmarks/engine.py --kernel`` plays the engine's game, chip for chip.

The benchmark's API / kernel ratio means something only if the kernel does the
same work: the same seeded deal, antes, boodle captures, runs, going out,
payments and eliminations.  So for many seeds and tables, and the benchmark's
decision rule (the n-th of the sorted legal leads, n from a seeded draw), the
kernel's chips and boodle stacks after every hand's antes must be the engine's.
"""

from __future__ import annotations

import random

import pytest

from benchmarks.engine import kernel_match
from engine import Match, Rules, preset

Trace = list[tuple[tuple[int, ...], tuple[int, ...]]]


def engine_trace(rules: Rules, players: int, seed: int) -> tuple[Match, Trace]:
    """(chips, boodle stacks) as the kernel's trace gives them: when each hand's antes are
    paid (the engine pays them as the hand before ends), and at the end of the match."""
    match = Match(rules, players, seed)
    draw = random.Random(seed).random
    trace = [(match.chips, match.boodle_stacks)]
    hands = 0
    while not match.is_over:
        legal = match.legal_actions()
        match.apply(legal[int(draw() * len(legal))])
        if match.hands_played != hands:
            hands = match.hands_played
            trace.append((match.chips, match.boodle_stacks))
    return match, trace


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("boodle", {}),
        ("boodle", {"starting_chips": 12}),  # eliminations early, the dealer among them
        ("boodle", {"hand_limit": 6}),
        ("michigan", {}),  # no dead hand, other boodle cards
    ],
)
def test_the_kernel_keeps_the_engines_chips_hand_by_hand(
    name: str, options: dict[str, object]
) -> None:
    rules = preset(name).with_options(options)
    eliminated = 0
    for seed in [*range(36), 2**127 + 36]:  # seeds may be 128-bit secrets
        players = 3 + seed % 6
        match, expected = engine_trace(rules, players, seed)
        trace: Trace = []
        hands, chips = kernel_match(rules, players, seed, random.Random(seed).random, trace)
        assert trace == expected, f"seed {seed}, {players} players: hand {len(trace)}"
        assert hands == match.hands_played
        assert tuple(chips) == match.chips
        eliminated += len(match.outcome().eliminated)
    assert eliminated > 0  # the kernel's eliminations were compared too


def test_the_kernel_refuses_rules_it_does_not_play() -> None:
    for name in ("new-market", "stops"):
        with pytest.raises(ValueError, match="the kernel plays"):
            kernel_match(preset(name), 4, 1, random.Random(1).random)
