"""Where the spread of the duplicate chips score comes from, and what unbiased corrections remove.

    .venv/bin/python benchmarks/fidelity_variance.py shape --groups 600    # moments, Huber
    .venv/bin/python benchmarks/fidelity_variance.py sources --groups 150  # the deals' share
    .venv/bin/python benchmarks/fidelity_variance.py chance --groups 300   # AIVAT per hand
    .venv/bin/python benchmarks/fidelity_variance.py skill --seeds 6       # a deal's skill

The measurements behind docs/fidelity.md's "What was tried" (issue 14's
last target: tracker vs random in half the hands).  In-process, as
``benchmarks/fidelity.py``: the groups of ``newmarket sprt``'s default
(alternate layout, 4-hand fixed-hands duplicate matches, boodle preset, four
players) played by the policies of ``referee.scoring.policies``.

* ``shape``: each pair's group score: mean, sd, skew, kurtosis, and what a
  Huber M-estimate of location (clipped at ``k`` sd) would change: its
  location, its efficiency against the mean (variance of the mean over the
  M-estimate's asymptotic variance) and the ratio of the SPRT's LLR drift
  per group, ``|2 theta - c0 - c1| / var``, against the mean's.
* ``sources``: each group's deal seed is played ``--plays`` times with
  other generators for the bots' own random choices.  The variance within a
  seed is the bots' own randomness; between seeds, what the deals leave after
  duplicate scoring: the most that a correction of the deal seed alone can
  remove, whatever its value function.
* ``chance``: AIVAT's chance correction per hand.  At the start of every
  hand's play the deal is a chance node: the correction subtracts, for each
  seat, ``v(state, deal) - mean of v(state, d_j)`` over ``--samples`` deals
  ``d_j`` drawn independently from a recorded seed, where ``v`` is the chips
  the reference policy wins in that hand from that state.  Unbiased for any
  ``v`` and any bots: the real deal is independent of the state (a hand's
  cards do not depend on the play before it), so each term has mean 0.  In a
  duplicate group the deals are shared, so only what the differing states
  (boodle stacks carried over) make of them is left.  Also printed: a free
  ``v``, the chips on the boodle cards a seat holds, whose mean over deals
  is exact (each card is the seat's with probability cards held / 52).
* ``skill``: the chance correction at the deal seed, with a ``v`` that
  measures how much a deal rewards skill: the group score of the reference
  policy against a uniformly random one on the same seed (``--replays``
  plays), its mean estimated on ``--shadows`` independent seeds per group,
  and the coefficient fitted by least squares on the groups so far (the
  regression control variate: a pair whose score does not follow ``v`` gets
  a coefficient near 0).  The SPRT of ``newmarket sprt`` is run on the
  corrected mean beside the plain one, on the same groups.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from benchmarks.fidelity import PAIRS  # the pairs of known strength, the same as its tables
from engine import CARDS, Deal, Decision, Match, Rules, preset
from referee.scoring.duplicate import GroupMatch, bridge_scores, candidate_seats
from referee.scoring.luck import held_boodle_luck
from referee.scoring.policies import (
    POLICIES,
    REFERENCE,
    Policy,
    play_match,
    play_step,
    random_policy,
)
from referee.scoring.sequential import ChipsConfig, SprtState, group_seed
from referee.scoring.sequential import Decision as SprtDecision
from referee.scoring.simulate import Format, formats, group_score

SEED = 100  # the groups of seed 100, as the first seed of benchmarks/fidelity.py sprt


def moments(xs: Sequence[float]) -> tuple[float, float, float, float]:
    """Mean, standard deviation, skew and kurtosis (3 for a normal law) of a sample."""
    mean = statistics.fmean(xs)
    var = statistics.pvariance(xs, mean)
    if not var:
        return mean, 0.0, 0.0, 0.0
    skew = statistics.fmean((x - mean) ** 3 for x in xs) / var**1.5
    kurt = statistics.fmean((x - mean) ** 4 for x in xs) / var**2
    return mean, math.sqrt(var), skew, kurt


def huber_location(xs: Sequence[float], clip: float) -> float:
    """The Huber M-estimate of location: theta with sum of clip(x - theta) = 0."""
    theta = statistics.median(xs)
    for _ in range(200):
        step = statistics.fmean(max(-clip, min(clip, x - theta)) for x in xs)
        theta += step
        if abs(step) < 1e-12:
            break
    return theta


def shape(args: argparse.Namespace) -> None:
    fmt = formats(preset(args.rules), args.hands)["new"]
    config = ChipsConfig()
    middle = config.chips0 + config.chips1
    for candidate, baseline in PAIRS:
        xs = [
            group_score(fmt, POLICIES[candidate], POLICIES[baseline], 4, SEED, g)[0]
            for g in range(args.groups)
        ]
        mean, sd, skew, kurt = moments(xs)
        line = (
            f"{candidate} vs {baseline}: mean {mean:+.3f} sd {sd:.3f} "
            f"skew {skew:+.2f} kurt {kurt:.2f}"
        )
        for k in (1.0, 1.5, 2.0):
            if not sd:
                break
            clip = k * sd
            theta = huber_location(xs, clip)
            inside = sum(abs(x - theta) < clip for x in xs) / len(xs)
            psi2 = statistics.fmean(max(-clip, min(clip, x - theta)) ** 2 for x in xs)
            avar = psi2 / inside**2  # the M-estimate's asymptotic variance, per group
            drift = (abs(2 * theta - middle) / avar) / (abs(2 * mean - middle) / sd**2)
            line += f" | k {k}: theta {theta:+.3f} eff {sd**2 / avar:.2f} drift {drift:.2f}"
        print(line, flush=True)


def play_group(
    fmt: Format, candidate: Policy, baseline: Policy, deal: int, tag: str
) -> tuple[float, int]:
    """One group on deal seed ``deal``, the bots' generators labelled by ``tag``."""
    matches: list[GroupMatch[int]] = []
    hands = 0
    for index, mine in enumerate(candidate_seats(fmt.layout, 4)):
        holders = [0 if s in mine else 1 for s in range(4)]
        seats = [candidate if h == 0 else baseline for h in holders]
        rngs = [random.Random(f"{tag}/{index}/{s}") for s in range(4)]
        outcome = play_match(fmt.rules, deal, seats, rngs).outcome()
        hands += outcome.hands_played
        matches.append(GroupMatch(holders, outcome.net_chips, outcome.hands_played))
    return bridge_scores(matches)[0], hands


def sources(args: argparse.Namespace) -> None:
    fmt = formats(preset(args.rules), args.hands)["new"]
    for candidate, baseline in PAIRS:
        rows = [
            [
                play_group(
                    fmt, POLICIES[candidate], POLICIES[baseline], group_seed(SEED, g), f"{g}/{p}"
                )[0]
                for p in range(args.plays)
            ]
            for g in range(args.groups)
        ]
        total = statistics.variance([x for row in rows for x in row])
        within = statistics.fmean(statistics.variance(row) for row in rows)
        between = statistics.variance([statistics.fmean(row) for row in rows]) - within / args.plays
        print(
            f"{candidate} vs {baseline}: {args.groups} seeds x {args.plays} plays: variance "
            f"{total:.3f}; within a seed (the bots' own random choices) {within:.3f} "
            f"({within / total if total else 0:.0%}); between seeds (the deals, after "
            f"duplicate) {between:.3f} ({between / total if total else 0:.0%})",
            flush=True,
        )


# ---------------------------------------------------------------- per-hand chance correction


def _hand_value(match: Match) -> list[int]:
    """The chips each seat wins from here to the end of this hand, the reference at every seat."""
    start, hands = match.chips, match.hands_played
    rng = random.Random(0)  # the reference is deterministic; never drawn from
    while not match.is_over and match.hands_played == hands:
        play_step(match, [REFERENCE] * match.players, [rng] * match.players)
    return [after - before for after, before in zip(match.chips, start, strict=True)]


def _random_deal(sizes: Sequence[int], rng: random.Random) -> Deal:
    """A deal of the same hand sizes as the real one: a uniform partition of the pack."""
    pack = list(CARDS)
    rng.shuffle(pack)
    hands, at = [], 0
    for size in sizes:
        hands.append(tuple(pack[at : at + size]))
        at += size
    return Deal(tuple(hands), tuple(pack[at:]))


def corrected_match(
    rules: Rules, seed: int, seats: Sequence[Policy], rngs: Sequence[random.Random], samples: int
) -> tuple[tuple[int, ...], int, list[float], list[float]]:
    """Play a match; return its nets, hands, and per seat the two chance corrections.

    A sampled deal is played from the real state by replaying the match with
    the public API: the real deals of the hands before as scripted deals, the
    sampled one for this hand, and every action taken so far.  (The sampled
    deals' generator is labelled by the deal seed and the hand, so every match
    of a group draws the same ones: common random numbers.)
    """
    match = Match(rules, len(seats), seed)
    players = len(seats)
    actions: list[object] = []
    deals: list[Deal] = []
    aivat = [0.0] * players
    boodle = [0.0] * players
    while not match.is_over:
        if match.decision is Decision.LEAD and match.hand_number > len(deals):
            sizes = match.hand_sizes()
            deals.append(Deal(tuple(match.hand_of(s) for s in range(players)), match.dead_hand()))
            if samples:
                real = _hand_value(match.clone())
                sampled: list[list[int]] = []
                rng = random.Random(f"chance/{seed}/{match.hand_number}")
                for _ in range(samples):
                    replay = Match(
                        rules, players, seed, deals=[*deals[:-1], _random_deal(sizes, rng)]
                    )
                    for action in actions:
                        replay.apply(action)  # type: ignore[arg-type]
                    sampled.append(_hand_value(replay))
                for s in range(players):
                    aivat[s] += real[s] - statistics.fmean(v[s] for v in sampled)
            held = held_boodle_luck(match.rules.boodle_cards, match.boodle_stacks, deals[-1].hands)
            for s in range(players):
                boodle[s] += held[s]
        actions.append(play_step(match, seats, rngs))
    outcome = match.outcome()
    return outcome.net_chips, outcome.hands_played, aivat, boodle


def chance(args: argparse.Namespace) -> None:
    fmt = formats(preset(args.rules), args.hands)["new"]
    for candidate, baseline in PAIRS:
        started = time.process_time()
        plain, aivat, boodle = [], [], []
        for g in range(args.groups):
            deal = group_seed(SEED, g)
            rows: dict[str, list[GroupMatch[int]]] = {"plain": [], "aivat": [], "boodle": []}
            for index, mine in enumerate(candidate_seats(fmt.layout, 4)):
                holders = [0 if s in mine else 1 for s in range(4)]
                seats = [POLICIES[candidate] if h == 0 else POLICIES[baseline] for h in holders]
                rngs = [random.Random(f"{SEED}/{g}/{index}/{s}") for s in range(4)]
                nets, hands, luck_a, luck_b = corrected_match(
                    fmt.rules, deal, seats, rngs, args.samples
                )
                rows["plain"].append(GroupMatch(holders, nets, hands))
                rows["aivat"].append(GroupMatch(holders, nets, hands, luck_a))
                rows["boodle"].append(GroupMatch(holders, nets, hands, luck_b))
            plain.append(bridge_scores(rows["plain"])[0])
            aivat.append(bridge_scores(rows["aivat"])[0])
            boodle.append(bridge_scores(rows["boodle"])[0])
        base = statistics.variance(plain)
        line = f"{candidate} vs {baseline}: {args.groups} groups, variance {base:.3f}"
        if base == 0:  # a deterministic pair can score alike in a few groups: no ratio to give
            print(line + " | nothing to correct", flush=True)
            continue
        for name, corrected in (("reference playout", aivat), ("boodle chips held", boodle)):
            correction = [p - c for p, c in zip(plain, corrected, strict=True)]
            rho = (
                statistics.correlation(plain, correction) if statistics.pstdev(correction) else 0.0
            )
            line += (
                f" | {name}: mean {statistics.fmean(corrected):+.3f} (plain "
                f"{statistics.fmean(plain):+.3f}), variance "
                f"x{statistics.variance(corrected) / base:.3f}, "
                f"best coefficient x{1 - rho * rho:.3f}"
            )
        print(line + f" | cpu {time.process_time() - started:.0f} s", flush=True)


# ---------------------------------------------------------------- the skill of a deal


def _label_seed(label: str) -> int:
    return int.from_bytes(hashlib.sha256(label.encode()).digest()[:6], "big")


class ControlledSprt:
    """The command's GSPRT on the mean corrected by a control variate with a fitted coefficient.

    Each group gives its score ``x`` and a control ``z`` of known mean 0.  The
    estimate is the regression estimator ``mean(x) - beta * mean(z)``, ``beta``
    the least-squares slope of x on z over the groups so far; its variance
    the residual variance (two degrees of freedom spent) times
    ``1/n + mean(z)^2 / Szz``, then the command's small-sample factor.
    """

    def __init__(self, config: ChipsConfig) -> None:
        self.config = config
        self.xs: list[float] = []
        self.zs: list[float] = []
        self.decision: SprtDecision | None = None

    def add(self, x: float, z: float) -> SprtDecision | None:
        self.xs.append(x)
        self.zs.append(z)
        n = len(self.xs)
        if self.decision is not None or n < self.config.min_groups:
            return self.decision
        mx, mz = statistics.fmean(self.xs), statistics.fmean(self.zs)
        sxx = sum((x - mx) ** 2 for x in self.xs)
        szz = sum((z - mz) ** 2 for z in self.zs)
        sxz = sum((x - mx) * (z - mz) for x, z in zip(self.xs, self.zs, strict=True))
        beta = sxz / szz if szz else 0.0
        mean = mx - beta * mz
        nu = n - 2
        residual = max(sxx - beta * sxz, 0.0) / nu
        variance_of_mean = residual * (1 / n + (mz * mz / szz if szz else 0.0))
        variance_of_mean *= (nu / (nu - 2)) ** 2 if nu > 2 else 9.0
        variance_of_mean = max(variance_of_mean, 1e-12)
        c0, c1 = self.config.chips0, self.config.chips1
        llr = (c1 - c0) * (2 * mean - c0 - c1) / (2 * variance_of_mean)
        if llr >= self.config.upper:
            self.decision = "H1"
        elif llr <= self.config.lower:
            self.decision = "H0"
        return self.decision


def _pair(text: str) -> tuple[str, str]:
    candidate, _, baseline = text.partition(":")
    return candidate, baseline


def skill(args: argparse.Namespace) -> None:
    fmt = formats(preset(args.rules), args.hands)["new"]

    @functools.cache
    def value(deal: int) -> float:
        """How much the deal rewards skill: the reference against random on it, mean of plays."""
        return statistics.fmean(
            play_group(fmt, REFERENCE, random_policy, deal, f"skill/{deal}/{r}")[0]
            for r in range(args.replays)
        )

    def control(seed: int, group: int) -> float:
        deal = group_seed(seed, group)
        shadows = [_label_seed(f"shadow/{deal}/{j}") for j in range(args.shadows)]
        return value(deal) - statistics.fmean(value(s) for s in shadows)

    pairs = PAIRS if not args.pair else [_pair(text) for text in args.pair]
    for candidate, baseline in pairs:
        started = time.process_time()
        results: dict[str, list[tuple[str, int]]] = {"plain": [], "skill": []}
        for seed in range(SEED, SEED + args.seeds):
            plain, controlled = SprtState(ChipsConfig()), ControlledSprt(ChipsConfig())
            done: dict[str, tuple[str, int]] = {}
            group, hands = 0, 0
            while len(done) < 2 and group < args.max_groups:
                x, played = group_score(
                    fmt, POLICIES[candidate], POLICIES[baseline], 4, seed, group
                )
                hands += played
                if "plain" not in done and plain.add(x):
                    done["plain"] = (str(plain.decision), hands)
                if "skill" not in done and controlled.add(x, control(seed, group)):
                    done["skill"] = (str(controlled.decision), hands)
                group += 1
            for name in results:
                results[name].append(done.get(name, ("undecided", hands)))
        line = f"{candidate} vs {baseline}, {args.seeds} seeds:"
        for name, runs in results.items():
            hands_list = [h for _, h in runs]
            tally = " ".join(
                f"{d} {sum(r == d for r, _ in runs)}"
                for d in ("H1", "H0", "undecided")
                if any(r == d for r, _ in runs)
            )
            line += (
                f" {name} {statistics.fmean(hands_list):.0f} hands "
                f"({min(hands_list)}-{max(hands_list)}) {tally} |"
            )
        print(line + f" cpu {time.process_time() - started:.0f} s", flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    commands: dict[str, Callable[[argparse.Namespace], None]] = {
        "shape": shape,
        "sources": sources,
        "chance": chance,
        "skill": skill,
    }
    for name in commands:
        p = sub.add_parser(name)
        p.add_argument("--rules", default="boodle")
        p.add_argument("--hands", type=int, default=4, help="hands per fixed-hands match")
    sub.choices["shape"].add_argument("--groups", type=int, default=600)
    sub.choices["sources"].add_argument("--groups", type=int, default=150)
    sub.choices["sources"].add_argument("--plays", type=int, default=8)
    sub.choices["chance"].add_argument("--groups", type=int, default=300)
    sub.choices["chance"].add_argument("--samples", type=int, default=16)
    sub.choices["skill"].add_argument("--seeds", type=int, default=6)
    sub.choices["skill"].add_argument("--replays", type=int, default=8)
    sub.choices["skill"].add_argument("--shadows", type=int, default=2)
    sub.choices["skill"].add_argument("--max-groups", type=int, default=4000)
    sub.choices["skill"].add_argument("--pair", action="append", help="CANDIDATE:BASELINE")
    args = parser.parse_args(argv)
    commands[args.command](args)


if __name__ == "__main__":
    main()
