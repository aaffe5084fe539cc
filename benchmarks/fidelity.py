"""Hands and CPU seconds ``newmarket sprt`` needs to decide: the old default against the new.

    .venv/bin/python benchmarks/fidelity.py sprt --seeds 6          # the table of docs/fidelity.md
    .venv/bin/python benchmarks/fidelity.py false-h1 --runs 200     # equal bots: H1 rate <= alpha
    .venv/bin/python benchmarks/fidelity.py conversion --groups 150 # Elo per chip, per pair

An in-process simulation: the engine and the policies of
``referee.scoring.policies`` in one process, no bot processes, so hundreds
of tests cost minutes on a loaded machine.  The loop is the one
``newmarket sprt`` runs (``referee/commands/sprt.py``): rotation groups of
one match per seat for the candidate, the baseline's copies in the other
seats, one deal seed per group, the same scores and the same SPRT.  The
referee adds nothing to a match's result when no bot faults, so the figures
carry over to real bots, whose CPU per decision is larger.

Formats (``--formats``):

* ``old``: today's default.  Elimination sessions of the preset, the
  share-of-opponents-beaten score, Elo 0/20 with the 0.05 variance prior.
* ``new``: the new default.  Fixed-hands duplicate matches (``--hands``
  hands, one per player by default; deep stacks) in the alternate layout
  (candidates in alternate seats, then swapped: two matches a group), the
  duplicate chips score, chips 0/0.267 (Elo 0/20 by ``ELO_PER_CHIP``), no
  prior, no decision before 8 groups.
* ``rotate``: ``new`` with one candidate in every seat in turn (the first
  chips default: four matches a group at four players).
* ``hand-luck``: ``new`` with AIVAT's chance correction at every deal,
  ``referee.scoring.luck.held_boodle_luck`` (the chips on the boodle cards a
  seat was dealt minus their mean over deals): measured, not the command's.
* ``luck``: ``rotate`` without duplicate deals (every match its own seed) but
  with the luck correction: what the correction alone buys.
* ``single``: ``rotate`` without duplicate deals and without luck.

CPU seconds are this process's, engine and policies included (and the
luck replays for ``luck``); the ratio old/new is what carries over.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from engine import preset
from referee.commands.sprt import MAX_FIXED_HANDS_MATCHES
from referee.scoring.duplicate import candidate_seats
from referee.scoring.policies import POLICIES
from referee.scoring.sequential import ELO_PER_CHIP, SprtState, score_to_elo, stopping_groups
from referee.scoring.simulate import Format, formats, group_score

PAIRS = [
    ("tracker", "random"),
    ("boodler", "tracker"),
    ("tracker", "tracker-noisy"),
    ("tracker", "tracker-tiny"),
    ("tracker-noisy", "tracker-noisy"),
]
FORMATS = ("old", "new", "rotate", "luck", "single")


@dataclasses.dataclass
class Run:
    decision: str
    groups: int
    hands: int
    cpu: float


def default_max_groups(fmt: Format, players: int) -> int:
    """``newmarket sprt``'s default match limit in groups: 2,000 sessions or 8,000 fixed-hands."""
    matches = 2000 if fmt.name == "old" else MAX_FIXED_HANDS_MATCHES
    return matches // len(candidate_seats(fmt.layout, players))


def run_test(
    fmt: Format, candidate: str, baseline: str, players: int, seed: int, max_groups: int | None
) -> Run:
    if max_groups is None:
        max_groups = default_max_groups(fmt, players)
    state = SprtState(fmt.config())
    hands = 0
    started = time.process_time()
    decision = None
    while decision is None and state.n < max_groups:
        score, played = group_score(
            fmt, POLICIES[candidate], POLICIES[baseline], players, seed, state.n
        )
        hands += played
        decision = state.add(score)
    return Run(decision or "undecided", state.n, hands, time.process_time() - started)


def sprt_table(args: argparse.Namespace) -> None:
    kinds = formats(preset(args.rules), args.hands)
    chosen = [kinds[name] for name in args.formats.split(",")]
    pairs = PAIRS if not args.pair else [tuple(p.split(":")) for p in args.pair]
    print(
        f"{args.seeds} seeds per pair, {args.players} players, preset {args.rules}, "
        f"fixed-hands matches of {args.hands} hands; at most "
        f"{args.max_groups or 'the command default of 2000 sessions / 8000 matches in'} groups"
    )
    print(f"{'pair':28} {'format':7} {'hands (mean, min-max)':>26} {'cpu s':>7} {'decisions':>20}")
    for candidate, baseline in pairs:
        means: dict[str, float] = {}
        for fmt in chosen:
            runs = [
                run_test(fmt, candidate, baseline, args.players, 100 + s, args.max_groups)
                for s in range(args.seeds)
            ]
            hands = [r.hands for r in runs]
            means[fmt.name] = statistics.fmean(hands)
            tally = ", ".join(
                f"{k} {sum(r.decision == k for r in runs)}"
                for k in ("H1", "H0", "undecided")
                if any(r.decision == k for r in runs)
            )
            print(
                f"{candidate + ' vs ' + baseline:28} {fmt.name:7} "
                f"{means[fmt.name]:>10.0f} ({min(hands):>5}-{max(hands):>6}) "
                f"{statistics.fmean(r.cpu for r in runs):>7.1f} {tally:>20}",
                flush=True,
            )
        if "old" in means and "new" in means:
            print(f"{'':28} old/new hands: {means['old'] / means['new']:.1f}x", flush=True)


def false_h1(args: argparse.Namespace) -> None:
    """How often equal bots get H1, from real runs and from many runs on their groups.

    ``--runs`` full tests are played; then ``--groups`` groups of the pair are
    played once and the test is re-run 4,000 times on groups drawn from them
    (``referee.scoring.sequential.stopping_groups``): many runs for the CPU of a few.  The
    groups are resampled twice: centred on 0, and symmetrized (each score and
    its negative).  In the alternate layout (``new``) equal bots' true group
    score is symmetric about 0, not only centred: swapping the names
    "candidate" and "baseline" gives the same two seatings in the other order,
    negates the group score and changes nothing else.  A few hundred groups show a sample
    skew of a few tenths by chance, which the centred resampling keeps and
    the GSPRT, deciding when the mean is high and the variance low, turns
    into a false-H1 rate that belongs to the sample, not to the bots (both
    figures are printed; the full runs are the ground truth).
    """
    kinds = formats(preset(args.rules), args.hands)
    for name in args.formats.split(","):
        fmt = kinds[name]
        runs = [
            run_test(fmt, args.bot, args.bot, args.players, args.first_seed + s, args.max_groups)
            for s in range(args.runs)
        ]
        if runs:
            print(
                f"{args.bot} vs {args.bot}, {name}: {len(runs)} full runs, "
                f"H1 {sum(r.decision == 'H1' for r in runs)}, "
                f"H0 {sum(r.decision == 'H0' for r in runs)}, "
                f"mean hands {statistics.fmean(r.hands for r in runs):.0f}",
                flush=True,
            )
        if not args.groups:
            continue
        scores = [
            group_score(fmt, POLICIES[args.bot], POLICIES[args.bot], args.players, 20_000, g)[0]
            for g in range(args.groups)
        ]
        mean = statistics.fmean(scores)
        centred = [score - mean for score in scores]
        variance = statistics.fmean(x * x for x in centred)
        skew = statistics.fmean(x**3 for x in centred) / variance**1.5 if variance else 0.0
        for how, sample in (("centred", centred), ("symmetrized", centred + [-x for x in centred])):
            trials = 4000
            lengths, outcomes = stopping_groups(
                sample,
                fmt.config(),
                trials=trials,
                max_groups=args.max_groups or default_max_groups(fmt, args.players),
                seed=1,
            )
            rate = outcomes["H1"] / trials
            z = 1.645  # a one-sided 95% upper bound on the rate (Wilson)
            spread = z * math.sqrt(rate * (1 - rate) / trials + z * z / (4 * trials * trials))
            upper = (rate + z * z / (2 * trials) + spread) / (1 + z * z / trials)
            print(
                f"{args.bot} vs {args.bot}, {name}: {args.groups} groups (sd "
                f"{statistics.stdev(scores):.3f}, sample skew {skew:+.2f}), {how}, resampled "
                f"{trials} times: H1 {rate:.4f} (95% upper bound {upper:.4f}), "
                f"H0 {outcomes['H0'] / trials:.4f}, mean groups {statistics.fmean(lengths):.1f}",
                flush=True,
            )


def conversion(args: argparse.Namespace) -> None:
    """Per pair: the places score (as Elo) in sessions and the chips score in fixed hands."""
    kinds = formats(preset(args.rules), args.hands)
    for candidate, baseline in PAIRS[:-1]:
        places = [
            group_score(kinds["old"], POLICIES[candidate], POLICIES[baseline], args.players, 7, g)[
                0
            ]
            for g in range(args.groups)
        ]
        chips = [
            group_score(kinds["new"], POLICIES[candidate], POLICIES[baseline], args.players, 7, g)[
                0
            ]
            for g in range(args.groups)
        ]
        elo, chip = score_to_elo(statistics.fmean(places)), statistics.fmean(chips)
        se = statistics.stdev(chips) / math.sqrt(len(chips))
        print(
            f"{candidate} vs {baseline}: Elo {elo:+.0f}, "
            f"chips/hand {chip:+.3f} +- {1.96 * se:.3f}, "
            f"Elo per chip {elo / chip if chip else math.nan:.0f} "
            f"(ELO_PER_CHIP = {ELO_PER_CHIP:g})",
            flush=True,
        )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("sprt", "false-h1", "conversion"):
        p = sub.add_parser(name)
        p.add_argument("--rules", default="boodle")
        p.add_argument("--players", type=int, default=4)
        p.add_argument("--hands", type=int, default=4, help="hands per fixed-hands match")
        p.add_argument(
            "--max-groups",
            type=int,
            default=None,
            help="default: newmarket sprt's (2000 sessions, 8000 fixed-hands matches), in groups",
        )
        p.add_argument("--formats", default="old,new" if name != "sprt" else ",".join(FORMATS))
    sub.choices["sprt"].add_argument("--seeds", type=int, default=6)
    sub.choices["sprt"].add_argument("--pair", action="append", help="CANDIDATE:BASELINE")
    sub.choices["false-h1"].add_argument("--runs", type=int, default=10)
    sub.choices["false-h1"].add_argument("--groups", type=int, default=200)
    sub.choices["false-h1"].add_argument("--bot", default="tracker-noisy")
    sub.choices["false-h1"].add_argument(
        "--first-seed", type=int, default=10_000, help="the full runs' seeds count from here"
    )
    sub.choices["conversion"].add_argument("--groups", type=int, default=150)
    args = parser.parse_args(argv)
    {"sprt": sprt_table, "false-h1": false_h1, "conversion": conversion}[args.command](args)


if __name__ == "__main__":
    main()
