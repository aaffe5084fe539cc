"""How much a league's final ranking moves between seeds: the old standings against the new.

    .venv/bin/python benchmarks/fidelity_league.py --leagues 40

The same league (five in-process bots of known strength, every table of 4,
every seat rotation, duplicate deals) is played with many league seeds, two
ways:

* ``old``: elimination sessions of the boodle preset, ranked by openskill's
  conservative rating (``referee.scoring.ratings``), fed in schedule order;
* ``new``: fixed-hands matches of one round of deals (4 hands), ranked by the batch fit of duplicate
  chips scores (``referee.scoring.fit``), what ``newmarket standings`` sorts by.

For each bot, the standard deviation of its final rank over the leagues
says how much luck moves it; the share of leagues that put every bot in its
true order (its mean rank over every league played here) says what that
buys.  In-process, as ``benchmarks/fidelity.py``, to be quick and exactly
repeatable.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from engine import Rules, preset
from referee.league.schedule import build_schedule
from referee.scoring.duplicate import GroupMatch, fixed_hands
from referee.scoring.fit import equations, solve
from referee.scoring.policies import POLICIES, play_match
from referee.scoring.ratings import rate

BOTS = ["boodler", "tracker", "tracker-tiny", "tracker-noisy", "random"]  # strongest first


def league(rules: Rules, seed: int, chips: bool) -> list[int]:
    """Each bot's final rank (1 best) in one league."""
    schedule = build_schedule(len(BOTS), 4, seed)
    rated: list[tuple[list[str], list[int]]] = []
    groups: dict[int, list[GroupMatch[int]]] = {}
    for match in schedule:
        outcome = play_match(rules, match.seed, [POLICIES[BOTS[b]] for b in match.bots]).outcome()
        rated.append(([BOTS[b] for b in match.bots], list(outcome.places)))
        groups.setdefault(match.seed, []).append(
            GroupMatch(match.bots, outcome.net_chips, outcome.hands_played)
        )
    if chips:
        strength = solve(len(BOTS), [equations(group) for group in groups.values()])
    else:
        ratings = rate(BOTS, rated)
        strength = [ratings[name].conservative for name in BOTS]
    order = sorted(range(len(BOTS)), key=lambda bot: -strength[bot])
    return [order.index(bot) + 1 for bot in range(len(BOTS))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leagues", type=int, default=40)
    parser.add_argument("--hands", type=int, default=4)
    args = parser.parse_args()
    kinds = {
        "old": (preset("boodle"), False),
        "new": (fixed_hands(preset("boodle"), args.hands), True),
    }
    matches = len(build_schedule(len(BOTS), 4, 0))
    print(f"{len(BOTS)} bots, tables of 4, {matches} matches per league, {args.leagues} leagues")
    results: dict[str, list[list[int]]] = {}
    for name, (rules, chips) in kinds.items():
        started = time.process_time()
        results[name] = [league(rules, 5000 + n, chips) for n in range(args.leagues)]
        print(f"  {name}: {time.process_time() - started:.0f} cpu s", flush=True)
    print(f"{'bot':14} {'sd of rank, old':>16} {'new':>6}   mean rank old / new")
    for bot, name in enumerate(BOTS):
        old = [r[bot] for r in results["old"]]
        new = [r[bot] for r in results["new"]]
        print(
            f"{name:14} {statistics.stdev(old):16.2f} {statistics.stdev(new):6.2f}   "
            f"{statistics.fmean(old):.2f} / {statistics.fmean(new):.2f}"
        )
    # The true order: by mean rank over every league of both kinds.
    every = results["old"] + results["new"]
    means = [statistics.fmean(r[bot] for r in every) for bot in range(len(BOTS))]
    by_mean = sorted(range(len(BOTS)), key=lambda bot: means[bot])
    truth = [by_mean.index(bot) + 1 for bot in range(len(BOTS))]
    print("true order: " + " > ".join(BOTS[bot] for bot in by_mean))
    for name in kinds:
        right = sum(r == truth for r in results[name]) / args.leagues
        top = sum(r[by_mean[0]] == 1 for r in results[name]) / args.leagues
        spread = statistics.fmean(
            statistics.stdev(r[bot] for r in results[name]) for bot in range(len(BOTS))
        )
        print(
            f"{name}: true order in {100 * right:.0f}% of leagues, the strongest first in "
            f"{100 * top:.0f}%, mean sd of a rank {spread:.2f}"
        )


if __name__ == "__main__":
    main()
