"""Matches until a competition's leaderboard settles, and what it plays in a day after.

    .venv/bin/python -m benchmarks.settled_pace                    # 6 versions, 3 seeds
    .venv/bin/python -m benchmarks.settled_pace --seeds 1 --versions 4 --max-matches 2000

A competition simulated in-process (no bot process, no server): ``--versions``
bots of known strength, the tracker heuristic with a share of random leads
(``referee.scoring.policies.noisy``; 0, 0.2, 0.4 ... of the leads random,
so the order of strength is the order of the noise), each a version on the
server's own leaderboard (``referee.server.scoring.Leaderboard``, its
bootstrap intervals) and seated by the server's own scheduler
(``referee.server.scheduler.choose_table``: the widest interval first, its
nearest neighbours beside it), four to a table, each group's rotations
sharing one deal of ``--hands`` hands, played by the engine.  After every
group the pace's rule (``referee.server.pace.settled``) is read on the new
leaderboard, as the server reads it before each group.

Per seed it prints the matches played until the rule first said settled,
whether the settled order is the known order of strength, and the CPU the
simulation took (the matches and the fits).  Then the day after settling:
flat out, the tables play as fast as they can for 24 hours; settled, at
``--settled-per-minute`` (the server's default, 2).  The flat-out rate is
not simulated here: give the matches a second the same machine plays with
real bots (``--flat-out``; default 42, the middle of the 39 to 45 two tables
of short bundled bots play, ``benchmarks/league.py --bots 8`` in
docs/speed.md), and the CPU a real match costs follows from it (the tables
keep ``--cores`` busy).  The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

from engine import Rules
from referee.match.key import derive_seed, rotations
from referee.scoring.duplicate import fixed_hands
from referee.scoring.policies import Policy, noisy, play_match, tracker
from referee.server.competition_db import PlayedMatch
from referee.server.pace import SETTLED, settled
from referee.server.scheduler import Candidate, choose_table
from referee.server.scoring import Leaderboard

DAY = 86400


def simulate(
    versions: int, players: int, hands: int, seed: int, max_matches: int, overlap: int
) -> dict[str, float | int | bool | None]:
    """One competition until settled (or ``max_matches``); what it took."""
    rules = fixed_hands(Rules(), hands)
    noise = [i / max(1, versions - 1) for i in range(versions)]  # version i+1: noise[i]
    policies: dict[int, Policy] = {v + 1: noisy(tracker(), noise[v]) for v in range(versions)}
    candidates = [Candidate(version=v, participant=v) for v in policies]
    playing = list(policies)
    board = Leaderboard()
    rng = random.Random(derive_seed(seed, "scheduler"))
    recent: list[int] = []
    matches = 0
    group = 0
    fit_seconds = 0.0
    started = time.process_time()
    scores = board.scores(playing)
    settled_at: int | None = None
    while matches < max_matches:
        choice = choose_table(candidates, scores, recent, players, 1.0, rng)
        assert choice is not None
        group += 1
        deal = derive_seed(seed, "group", group)
        for rotation, seating in enumerate(rotations(choice.versions)):
            match = play_match(rules, deal, [policies[v] for v in seating])
            outcome = match.outcome()
            nets = tuple(c - s for c, s in zip(outcome.chips, outcome.starting_chips, strict=True))
            board.add(PlayedMatch(group, rotation, deal, seating, nets, outcome.hands_played))
            matches += 1
        recent = (recent + list(choice.versions))[-20 * players :]
        fit_started = time.process_time()
        scores = board.scores(playing)
        fit_seconds += time.process_time() - fit_started
        if settled(scores, playing, overlap).state == SETTLED:
            settled_at = matches
            break
    cpu = time.process_time() - started
    order = sorted(playing, key=lambda v: scores[v].rank)
    return {
        "matches": settled_at,
        "groups": group,
        "right_order": order == sorted(playing),  # version 1 is the strongest (no noise)
        "cpu": cpu,
        "fit_cpu": fit_seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--versions", type=int, default=6)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--hands", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--max-matches", type=int, default=8000)
    parser.add_argument("--overlap", type=int, default=0, help="settled_overlap (ranks)")
    parser.add_argument("--settled-per-minute", type=float, default=2.0)
    parser.add_argument("--flat-out", type=float, default=42.0, help="matches/s, flat out")
    parser.add_argument("--cores", type=float, default=2.0, help="cores the tables keep busy")
    args = parser.parse_args()
    print(
        f"settled pace: {args.versions} versions, {args.players} seats, {args.hands} hands, "
        f"settled_overlap {args.overlap}; load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    print("| seed | matches to settle | groups | order right | CPU s (fits) |")
    print("|---|---|---|---|---|")
    found = []
    for seed in range(1, args.seeds + 1):
        run = simulate(
            args.versions, args.players, args.hands, seed, args.max_matches, args.overlap
        )
        settled_in = run["matches"]
        shown = f"not within {args.max_matches}" if settled_in is None else f"{settled_in}"
        print(
            f"| {seed} | {shown} | {run['groups']} | {'yes' if run['right_order'] else 'no'} "
            f"| {run['cpu']:.1f} ({run['fit_cpu']:.1f}) |",
            flush=True,
        )
        if isinstance(settled_in, int):
            found.append(settled_in)
    flat_day = args.flat_out * DAY
    settled_day = args.settled_per_minute * 1440
    cpu_per_match = args.cores / args.flat_out
    print()
    if found:
        print(f"matches to settle: median {statistics.median(found):g} of {len(found)} seeds")
    print("| a day after settling | matches | CPU (core-seconds) |")
    print("|---|---|---|")
    print(f"| flat out | {flat_day:,.0f} | {flat_day * cpu_per_match:,.0f} |")
    print(f"| settled pace | {settled_day:,.0f} | {settled_day * cpu_per_match:,.0f} |")
    print(f"ratio: {flat_day / settled_day:,.0f}x fewer matches; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
