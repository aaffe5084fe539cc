"""How fast the engine plays: hands per second and state copies per second, per preset.

    python benchmarks/engine.py [--seconds S] [--players N] [--seed N] [--check]

Search bots play millions of random hands and copy states at every node, so
these two figures are the engine's budget.  Both loops do only what a random
playout does (list the legal actions, pick one with a seeded ``random.Random``
by one float multiply, apply it), so the figures are the engine's cost and not
the benchmark's.  Each figure is the best of a few timed rounds, which filters
out a noisy neighbour without hiding a slow engine.

The targets are for the default preset: ``--check`` exits with 1 if either is
missed, so CI can hold the line once the engine meets them.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from engine import DEFAULT_PRESET, PRESETS, Decision, Match, Rules, preset

TARGET_HANDS_PER_SECOND = 20_000
TARGET_COPIES_PER_SECOND = 200_000
ROUNDS = 3  # each figure is the best of this many rounds of seconds / ROUNDS


@dataclass(frozen=True)
class Figures:
    name: str
    hands_per_second: float
    matches: int
    hands: int
    copies_per_second: float


def play_random_match(rules: Rules, players: int, seed: int, pick: random.Random) -> int:
    """One whole match with uniform random decisions; returns the hands played."""
    match = Match(rules, players, seed)
    choose = pick.random
    while not match.is_over:
        legal = match.legal_actions()
        match.apply(legal[int(choose() * len(legal))])
    return match.hands_played


def hands_per_second(
    rules: Rules, players: int, seconds: float, seed: int
) -> tuple[float, int, int]:
    """(best hands/s over the rounds, matches played, hands played)."""
    pick = random.Random(seed)
    best = 0.0
    matches = hands = 0
    match_seed = seed
    for _ in range(ROUNDS):
        round_hands = 0
        start = time.perf_counter()
        deadline = start + seconds / ROUNDS
        while True:
            round_hands += play_random_match(rules, players, match_seed, pick)
            match_seed += 1
            matches += 1
            now = time.perf_counter()
            if now >= deadline:
                break
        hands += round_hands
        best = max(best, round_hands / (now - start))
    return best, matches, hands


def mid_hand_states(rules: Rules, players: int, seed: int, count: int = 200) -> list[Match]:
    """States in the middle of a hand (a lead to make, some cards played), from random play."""
    pick = random.Random(seed)
    states: list[Match] = []
    match_seed = seed
    while len(states) < count:
        match = Match(rules, players, match_seed)
        match_seed += 1
        while not match.is_over and len(states) < count:
            if match.decision is Decision.LEAD and match.played_cards() and pick.random() < 0.2:
                states.append(match.clone())
            legal = match.legal_actions()
            match.apply(legal[int(pick.random() * len(legal))])
    return states


def copies_per_second(rules: Rules, players: int, seconds: float, seed: int) -> float:
    states = mid_hand_states(rules, players, seed)
    best = 0.0
    for _ in range(ROUNDS):
        copies = 0
        start = time.perf_counter()
        deadline = start + seconds / ROUNDS
        while True:
            for state in states:  # one batch between clock reads keeps the timer out
                state.clone()
            copies += len(states)
            now = time.perf_counter()
            if now >= deadline:
                break
        best = max(best, copies / (now - start))
    return best


def measure(name: str, players: int, seconds: float, seed: int) -> Figures:
    rules = preset(name)
    rate, matches, hands = hands_per_second(rules, players, seconds, seed)
    copies = copies_per_second(rules, players, seconds, seed)
    return Figures(name, rate, matches, hands, copies)


def table(rows: list[Figures]) -> list[str]:
    header = f"{'preset':<12} {'hands/s':>10} {'matches':>8} {'hands':>8} {'copies/s':>11}"
    lines = [header, "-" * len(header)]
    for row in rows:
        mark = " (default)" if row.name == DEFAULT_PRESET else ""
        lines.append(
            f"{row.name:<12} {row.hands_per_second:>10,.0f} {row.matches:>8,} {row.hands:>8,} "
            f"{row.copies_per_second:>11,.0f}{mark}"
        )
    return lines


def verdict(default: Figures) -> tuple[list[str], bool]:
    hands_ok = default.hands_per_second >= TARGET_HANDS_PER_SECOND
    copies_ok = default.copies_per_second >= TARGET_COPIES_PER_SECOND
    lines = [
        f"target ({DEFAULT_PRESET}): >= {TARGET_HANDS_PER_SECOND:,} hands/s: "
        f"{default.hands_per_second:,.0f} {'met' if hands_ok else 'MISSED'}",
        f"target ({DEFAULT_PRESET}): >= {TARGET_COPIES_PER_SECOND:,} copies/s: "
        f"{default.copies_per_second:,.0f} {'met' if copies_ok else 'MISSED'}",
    ]
    return lines, hands_ok and copies_ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=1.0, help="time per figure (default 1)")
    parser.add_argument("--players", type=int, default=4, help="players at the table (3..8)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the matches and the picks")
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args(argv)
    if not 3 <= args.players <= 8:
        parser.error(f"--players: a table seats 3 to 8 players, got {args.players}")
    if args.seconds <= 0:
        parser.error(f"--seconds: must be more than 0, got {args.seconds}")

    print(
        f"{args.players} players, random decisions, {args.seconds:g} s per figure "
        f"(best of {ROUNDS}), seed {args.seed}, Python {sys.version.split()[0]}"
    )
    rows = []
    for name in PRESETS:
        rows.append(measure(name, args.players, args.seconds, args.seed))
    print("\n".join(table(rows)))
    default = next(row for row in rows if row.name == DEFAULT_PRESET)
    lines, met = verdict(default)
    print("\n".join(lines))
    return 0 if met or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
