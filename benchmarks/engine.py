"""How fast the engine plays: hands per second and state copies per second, per preset.

    python benchmarks/engine.py [--seconds S] [--players N] [--seed N] [--check]
    python benchmarks/engine.py --kernel [--rounds R] [--seconds S] [--cpu]

``--kernel`` measures the default preset's public API against a bare kernel
of the same random play (``kernel_hand``: the seeded deal, leads, forced runs,
stops, going out; no chips, stakes, events or API), and the engine's
``engine.playout`` path, in rounds that alternate the three in one process; it
prints the median ratio and the spread of rounds (target: the API at 0.8x).
``--plain api|playout|kernel|none`` plays about 3,000 hands on one path and
exits: a fixed workload for an instruction count that no load can blur
(``valgrind --tool=callgrind``; subtract ``none``, the start-up).

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
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from engine import DEFAULT_PRESET, PRESETS, Decision, Match, Rules, preset
from engine.deal import shuffled
from engine.playout import random_playout

TARGET_HANDS_PER_SECOND = 20_000
TARGET_COPIES_PER_SECOND = 200_000
TARGET_KERNEL_RATIO = 0.8
Clock = Callable[[], float]
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


# -- the bare kernel ----------------------------------------------------------------

_DEAD = 8


def kernel_holders(players: int, dealer: int) -> list[int]:
    """Who gets the k-th card: clockwise from the dealer's left, the dead hand last."""
    order = [(dealer + 1 + i) % players for i in range(players)] + [_DEAD]
    return (order * (52 // len(order) + 1))[:52]


def kernel_hand(players: int, seed: int, hand: int, holders: list[int], choose: Any) -> int:
    """One hand of the default rules' play, bare: returns the seat that went out.

    Cards are codes ``suit * 13 + rank`` (aces high), a hand a 52-bit mask.
    """
    owner = shuffled(seed, hand, holders)
    hands = [0] * players
    for code, holder in enumerate(owner):
        if holder != _DEAD:
            hands[holder] |= 1 << code
    seat = holders[0]
    while True:
        held = hands[seat]
        leads = [
            13 * suit + ((m & -m).bit_length() - 1)
            for suit in range(4)
            if (m := held >> (13 * suit) & 0x1FFF)
        ]
        code = leads[int(choose() * len(leads))]
        while True:  # the run of forced follows
            held = hands[seat] ^ (1 << code)
            hands[seat] = held
            if not held:
                return seat
            if code % 13 == 12:
                break
            holder = owner[code + 1]
            if holder == _DEAD or not hands[holder] >> (code + 1) & 1:
                break
            code += 1
            seat = holder


def kernel_hands(
    players: int, seconds: float, seed: int, pick: random.Random, clock: Clock = time.perf_counter
) -> float:
    """Hands per second of the bare kernel (the dealer moves on each hand)."""
    choose = pick.random
    hands = 0
    start = clock()
    deadline = start + seconds
    holders = [kernel_holders(players, dealer) for dealer in range(players)]
    while True:
        for _ in range(50):
            kernel_hand(players, seed, hands + 1, holders[hands % players], choose)
            hands += 1
        now = clock()
        if now >= deadline:
            return hands / (now - start)


def playout_match(rules: Rules, players: int, seed: int, pick: random.Random) -> int:
    """One whole match on ``engine.playout`` (random decisions); returns the hands played."""
    return random_playout(Match(rules, players, seed), pick.random)


MatchPlayer = Callable[[Rules, int, int, random.Random], int]  # play_random_match or playout_match


def matches_rate(
    play: MatchPlayer,
    rules: Rules,
    players: int,
    seconds: float,
    seed: int,
    pick: random.Random,
    clock: Clock = time.perf_counter,
) -> float:
    """Hands per second of whole matches ``play``ed from ``seed`` on (one seed a match)."""
    hands = 0
    start = clock()
    deadline = start + seconds
    while True:
        hands += play(rules, players, seed, pick)
        seed += 1
        now = clock()
        if now >= deadline:
            return hands / (now - start)


def kernel_report(
    players: int, seconds: float, rounds: int, seed: int, cpu: bool = False
) -> list[str]:
    """Rounds alternating the API, the playout path and the kernel; ratios per round.

    ``cpu`` times each round by this thread's CPU time instead of the wall clock:
    on a host loaded by other work it leaves out the time they hold the core
    (not what sharing its caches costs), so the rounds differ less.
    """
    clock = time.thread_time if cpu else time.perf_counter
    rules = preset(DEFAULT_PRESET)
    pick = random.Random(seed)
    api: list[float] = []
    fast: list[float] = []
    bare: list[float] = []
    for number in range(rounds):
        order = [0, 1, 2] if number % 2 == 0 else [2, 1, 0]  # neither always goes first
        first = seed + 1000 * number  # the round's first match seed
        for which in order:
            if which == 0:
                api.append(
                    matches_rate(play_random_match, rules, players, seconds, first, pick, clock)
                )
            elif which == 1:
                fast.append(
                    matches_rate(playout_match, rules, players, seconds, first, pick, clock)
                )
            else:
                bare.append(kernel_hands(players, seconds, first, pick, clock))
    api_ratio = sorted(a / k for a, k in zip(api, bare, strict=True))
    fast_ratio = sorted(f / k for f, k in zip(fast, bare, strict=True))

    def spread(values: list[float]) -> str:
        return ", ".join(f"{v:.2f}" for v in values)

    return [
        f"{DEFAULT_PRESET}, {players} players, random decisions, {rounds} rounds of "
        f"{seconds:g} s {'of CPU time ' if cpu else ''}each (API, playout, kernel interleaved), "
        f"Python {sys.version.split()[0]}, "
        f"load average {os.getloadavg()[0]:.2f}",
        f"kernel  : {statistics.median(bare):9,.0f} hands/s (median of rounds)",
        f"API     : {statistics.median(api):9,.0f} hands/s; API / kernel median "
        f"{statistics.median(api_ratio):.2f} ({spread(api_ratio)}); target {TARGET_KERNEL_RATIO}",
        f"playout : {statistics.median(fast):9,.0f} hands/s; playout / kernel median "
        f"{statistics.median(fast_ratio):.2f} ({spread(fast_ratio)})",
    ]


def plain(path: str, players: int, seed: int, hands: int = 3000) -> int:
    """About ``hands`` hands of the default preset on one path (``--plain``); the hands played."""
    rules = preset(DEFAULT_PRESET)
    pick = random.Random(seed)
    played = 0
    match_seed = seed
    if path == "kernel":
        holders = [kernel_holders(players, dealer) for dealer in range(players)]
        for played in range(hands):
            kernel_hand(players, seed, played + 1, holders[played % players], pick.random)
        return hands
    play = play_random_match if path == "api" else playout_match
    while path != "none" and played < hands:
        played += play(rules, players, match_seed, pick)
        match_seed += 1
    return played


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
    parser.add_argument(
        "--kernel", action="store_true", help="the API and playout against the bare kernel"
    )
    parser.add_argument("--rounds", type=int, default=7, help="--kernel: rounds (default 7)")
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="--kernel: time rounds by this thread's CPU time (for a host loaded by other work)",
    )
    parser.add_argument("--plain", choices=("api", "playout", "kernel", "none"))
    args = parser.parse_args(argv)
    if not 3 <= args.players <= 8:
        parser.error(f"--players: a table seats 3 to 8 players, got {args.players}")
    if args.seconds <= 0:
        parser.error(f"--seconds: must be more than 0, got {args.seconds}")

    if args.plain is not None:
        print(f"{args.plain}: {plain(args.plain, args.players, args.seed):,} hands")
        return 0
    if args.kernel:
        print(
            "\n".join(kernel_report(args.players, args.seconds, args.rounds, args.seed, args.cpu))
        )
        return 0
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
