"""How much duplicate deals reduce the spread of league results (the figure in the README).

    .venv/bin/python benchmarks/league_spread.py            # 300 leagues of each kind
    .venv/bin/python benchmarks/league_spread.py --leagues 50

The same league is played many times with different league seeds, once with
duplicate deals (the seat rotations of a table share one deal seed) and once
without (every match draws its own seed); everything else, the schedule
included, is the real ``build_schedule``.  For each bot, the standard
deviation of its average place over the repeated leagues measures how much
luck moves its result; the ratio of the two is the spread reduction.  The
share of leagues that rank the bots in their true order (the order of their
mean place over all leagues) says what that buys.

To be quick and exactly repeatable this plays in-process on the engine with
five simple deterministic policies instead of bot processes over the
protocol; the referee adds nothing to a match's result when no bot faults,
so the spread of real bots differs only by how different the bots are.

Duplicate deals cancel the luck of the cards only while the rotations of a
table deal the same cards to the same seats, that is until the first player
is eliminated (the dealer then skips a seat and the deals part ways).  With
the boodle preset's 40 chips that is around hand 8; ``--chips 200`` shows
the effect when nobody is eliminated within the hand limit.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

# This directory holds engine.py and referee.py benchmarks, which would shadow the packages.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import Card, Match, Rules, preset
from referee.league.schedule import build_schedule

Policy = Callable[[Match, list[Card]], Card]


def _suit_sizes(match: Match) -> dict[int, int]:
    seat = match.current_seat()
    assert seat is not None
    sizes: dict[int, int] = {}
    for card in match.hand_of(seat):
        sizes[card.suit] = sizes.get(card.suit, 0) + 1
    return sizes


def lowest(match: Match, legal: list[Card]) -> Card:
    return min(legal, key=lambda c: (c.rank, c.suit))


def highest(match: Match, legal: list[Card]) -> Card:
    return max(legal, key=lambda c: (c.rank, c.suit))


def longest(match: Match, legal: list[Card]) -> Card:
    sizes = _suit_sizes(match)
    return max(legal, key=lambda c: (sizes.get(c.suit, 0), -c.suit))


def shortest(match: Match, legal: list[Card]) -> Card:
    sizes = _suit_sizes(match)
    return min(legal, key=lambda c: (sizes.get(c.suit, 0), c.suit))


def first(match: Match, legal: list[Card]) -> Card:
    return legal[0]


POLICIES: dict[str, Policy] = {
    "lowest": lowest,
    "highest": highest,
    "longest": longest,
    "shortest": shortest,
    "first": first,
}


def play(rules: Rules, seed: int, seats: Sequence[Policy]) -> tuple[int, ...]:
    match = Match(rules, len(seats), seed)
    while not match.is_over:
        seat = match.current_seat()
        assert seat is not None
        legal = match.legal_actions()
        if match.decision is not None and match.decision.value == "lead":
            match.apply(seats[seat](match, legal))
        else:
            match.apply(legal[0])
    return match.outcome().places


def league(
    rules: Rules, seed: int, duplicate: bool, table_size: int, policies: Sequence[Policy]
) -> list[float]:
    """Each bot's average place in one league; bot i plays ``policies[i]``."""
    places: list[list[int]] = [[] for _ in policies]
    for scheduled in build_schedule(len(policies), table_size, seed, duplicate=duplicate):
        seats = [policies[bot] for bot in scheduled.bots]
        for seat, place in enumerate(play(rules, scheduled.seed, seats)):
            places[scheduled.bots[seat]].append(place)
    return [sum(p) / len(p) for p in places]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leagues", type=int, default=300, help="leagues of each kind")
    parser.add_argument("--hands", type=int, default=30, help="hand limit per match")
    parser.add_argument("--table-size", type=int, default=4)
    parser.add_argument(
        "--chips", type=int, default=40, help="starting chips (the boodle preset's 40)"
    )
    parser.add_argument(
        "--same-policy",
        action="store_true",
        help="every bot plays the same policy: the control, where duplicate deals remove all luck",
    )
    args = parser.parse_args()
    rules = preset("boodle").with_options({"hand_limit": args.hands, "starting_chips": args.chips})
    names = list(POLICIES)
    policies = [POLICIES[name] for name in names]
    if args.same_policy:
        names = [f"first-{number}" for number in range(len(names))]
        policies = [first] * len(names)
    started = time.perf_counter()
    results: dict[bool, list[list[float]]] = {}
    for duplicate in (False, True):
        results[duplicate] = [
            league(rules, 1000 + number, duplicate, args.table_size, policies)
            for number in range(args.leagues)
        ]
    # The true order: mean place over every league of both kinds.
    every = results[False] + results[True]
    truth = sorted(range(len(names)), key=lambda b: statistics.fmean(r[b] for r in every))
    matches = len(build_schedule(len(names), args.table_size, 0))
    print(
        f"{len(names)} bots ({'one policy' if args.same_policy else 'five policies'}) "
        f"at tables of {args.table_size}, {matches} matches per league "
        f"(every table, every seat rotation), hand limit {args.hands}, "
        f"{args.chips} starting chips, "
        f"{args.leagues} leagues of each kind ({time.perf_counter() - started:.0f} s)"
    )
    print(f"{'policy':10} {'mean place':>10} {'sd without':>11} {'sd with':>8} {'ratio':>6}")
    ratios = []
    spreads: dict[bool, list[float]] = {False: [], True: []}
    for bot in truth:
        without = statistics.stdev(r[bot] for r in results[False])
        with_dup = statistics.stdev(r[bot] for r in results[True])
        ratios.append(with_dup / without)
        spreads[False].append(without)
        spreads[True].append(with_dup)
        mean = statistics.fmean(r[bot] for r in every)
        print(f"{names[bot]:10} {mean:10.3f} {without:11.3f} {with_dup:8.3f} {ratios[-1]:6.2f}")
    for duplicate in (False, True):
        right = sum(
            1
            for r in results[duplicate]
            if sorted(range(len(names)), key=lambda b: (r[b], b)) == truth
        )
        best = sum(
            1 for r in results[duplicate] if min(range(len(names)), key=r.__getitem__) == truth[0]
        )
        kind = "with duplicate deals   " if duplicate else "without duplicate deals"
        print(
            f"{kind}: true order in {100 * right / args.leagues:.0f}% of leagues, "
            f"true best first in {100 * best / args.leagues:.0f}%"
        )
    without, with_dup = statistics.fmean(spreads[False]), statistics.fmean(spreads[True])
    print(
        f"standard deviation of a bot's average place, mean over bots: {without:.3f} without "
        f"duplicate deals, {with_dup:.3f} with ({100 * (1 - with_dup / without):.0f}% less)"
    )


if __name__ == "__main__":
    main()
