"""How many groups the finals need to order the top three with 95% confidence.

    .venv/bin/python benchmarks/finals.py                  # 5 runs, up to 300 groups each
    .venv/bin/python benchmarks/finals.py --runs 3 --max-groups 200 --step 10
    .venv/bin/python benchmarks/finals.py --hands 30     # deep chips: nobody eliminated

Five bots of known strength play in-process (``referee.scoring.policies``: the
tracker starter's game with 0, 25, 50 and 75% of its leads random, and a random
bot), three to a table, as the server's finals play them: tables from
``referee.server.finals.plan_tables`` (every pair meeting about equally often),
each a duplicate rotation group (one deal, every rotation of the seats).  Against
it, a round robin on plain deals: every table of three in turn, each match its
own deal, as many matches.  Both are scored by the server's fit
(``referee.server.scoring.score_versions``: chips per hand, bootstrap score and
rank intervals).  After every ``--step`` groups (three matches each) the
benchmark asks whether the three strongest bots hold ranks 1, 2 and 3 with rank
intervals of one rank each; the first such count is what a run needed.  Each run
has its own seed; the table prints every run and the median.

In-process, so a run takes seconds, not hours: the referee adds nothing to a
match's result when no bot faults.  The load average is printed because the
time column depends on it; the group counts do not.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import sys
import time
from pathlib import Path

# This directory holds engine.py and referee.py benchmarks, which would shadow the packages.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import Rules
from referee.match.key import derive_seed, rotations
from referee.scoring.duplicate import fixed_hands
from referee.scoring.policies import Policy, noisy, play_match, random_policy, tracker
from referee.server.competition_db import PlayedMatch
from referee.server.finals import plan_tables
from referee.server.scoring import score_versions

PLAYERS = 3


def bots() -> dict[int, Policy]:
    """Strongest first: bot 1 is the best, bot 5 the weakest."""
    return {
        1: tracker(),
        2: noisy(tracker(), 0.25),
        3: noisy(tracker(), 0.5),
        4: noisy(tracker(), 0.75),
        5: random_policy,
    }


def ordered(played: list[PlayedMatch], versions: list[int]) -> bool:
    """The three strongest at ranks 1, 2, 3, each rank interval a single rank."""
    scores = score_versions(played, versions)
    return all(
        scores[v].rank == v and scores[v].rank_low == scores[v].rank_high == v for v in (1, 2, 3)
    )


def play_group(
    rules: Rules,
    policies: dict[int, Policy],
    table: tuple[int, ...],
    group: int,
    seed: int,
    duplicate: bool,
) -> list[PlayedMatch]:
    played = []
    for rotation, seats in enumerate(rotations(table)):
        deal = (
            derive_seed(seed, "group", group)
            if duplicate
            else derive_seed(seed, "match", group, rotation)
        )
        rngs = [random.Random(f"{deal}/{rotation}/{s}") for s in range(len(seats))]
        outcome = play_match(rules, deal, [policies[v] for v in seats], rngs).outcome()
        played.append(
            PlayedMatch(group, rotation, deal, seats, outcome.net_chips, outcome.hands_played)
        )
    return played


def needed(seed: int, duplicate: bool, max_groups: int, step: int, rules: Rules) -> int | None:
    """The groups a run needed to order the top three (None: not within ``max_groups``)."""
    policies = bots()
    versions = sorted(policies)
    if duplicate:
        tables = plan_tables(
            versions, {v: v for v in versions}, max_groups, PLAYERS, random.Random(seed)
        )
    else:
        cycle = list(itertools.combinations(versions, PLAYERS))
        random.Random(seed).shuffle(cycle)
        tables = [cycle[g % len(cycle)] for g in range(max_groups)]
    played: list[PlayedMatch] = []
    for group, table in enumerate(tables):
        played += play_group(rules, policies, table, group, seed, duplicate)
        if (group + 1) % step == 0 and ordered(played, versions):
            return group + 1
    return None


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--max-groups", type=int, default=300)
    parser.add_argument("--step", type=int, default=10)
    parser.add_argument(
        "--hands",
        type=int,
        default=0,
        help="play exactly this many hands with chips deep enough that nobody is eliminated "
        "(docs/fidelity.md); 0: the default rules, whose matches end at eliminations",
    )
    args = parser.parse_args()
    rules = fixed_hands(Rules(), args.hands) if args.hands else Rules()
    rules_said = f"{args.hands} fixed hands" if args.hands else "default"
    print(
        f"finals separation: 5 bots of known strength, {PLAYERS} seats, up to "
        f"{args.max_groups} groups ({args.max_groups * PLAYERS} matches), checked every "
        f"{args.step}; rules: {rules_said}; load {load()}",
        flush=True,
    )
    print(
        "| run | finals (duplicate groups) | round robin, plain deals (3-match groups) | seconds |"
    )
    print("|---|---|---|---|")
    found: dict[bool, list[int | None]] = {True: [], False: []}
    for run in range(args.runs):
        started = time.perf_counter()
        seed = derive_seed(20261128, "finals benchmark", run)
        for duplicate in (True, False):
            found[duplicate].append(needed(seed, duplicate, args.max_groups, args.step, rules))
        spent = time.perf_counter() - started

        def shown(value: int | None) -> str:
            return f"> {args.max_groups}" if value is None else str(value)

        print(
            f"| {run + 1} | {shown(found[True][-1])} | {shown(found[False][-1])} | {spent:.0f} |",
            flush=True,
        )
    for duplicate, name in ((True, "finals"), (False, "round robin")):
        values = [v if v is not None else args.max_groups + args.step for v in found[duplicate]]
        print(f"median {name}: {statistics.median(values):g} groups", flush=True)
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
