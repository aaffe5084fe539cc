"""The statistics of ``newmarket sprt``: is a candidate bot better than a baseline, or not?

Pure functions and one small accumulator, no matches and no I/O, so every
number the command prints can be checked on synthetic data
(``tests/search/test_sprt.py``).

Two scores, one test.  The default (``ChipsConfig``) is the duplicate chips
score of ``referee.scoring.duplicate``: the candidate's chips per hand
against the baselines that held the same cards in the group's other
matches, hypotheses in chips per hand (or Elo at ``ELO_PER_CHIP``), no
variance prior but no decision before ``min_groups`` and a small-sample
inflation of the variance, and a second, stricter road to each decision for
evidence far beyond the hypotheses (``decisive``, below; docs/fidelity.md
has the definitions and the measurements).  The places score below
(``SprtConfig``) is the original test, kept as ``newmarket sprt --score
places``.

The places model, chess engines' SPRT (cutechess, fastchess) carried over to
a table of N players:

* **A match's score.**  The candidate sits at a table with N-1 copies of the
  baseline.  Its score is the fraction of those opponents it finished ahead
  of, a tie counting half: ``(ahead + ties / 2) / (N - 1)``, from 0 to 1.
  Bots of equal strength average 0.5.  For N = 2 this is the chess score.
* **The observation.**  Matches are played in *rotation groups*: the
  candidate once in every seat, N matches.  With duplicate deals the N
  matches share one deal seed, so the candidate is dealt every seat's cards
  in turn and most of the luck of the deal cancels; without, each match
  draws its own seed.  The matches of a group are not independent (same
  cards), the groups are, so the unit of the test is a group's mean score,
  as fastchess's pentanomial model treats a game pair as one observation.
* **Elo.**  A score ``s`` is read as the logistic Elo difference of one
  candidate-baseline pair, ``elo = -400 log10(1/s - 1)``: 0 for equal bots,
  +100 for a candidate that finishes ahead of a given opponent 64% of the
  time.  ``elo0`` and ``elo1`` are turned into scores ``s0`` and ``s1`` the
  same way.
* **The test.**  H0: the mean group score is ``s0``; H1: it is ``s1``.  The
  generalized SPRT with a normal approximation (Van den Bergh's GSPRT, what
  fastchess calls the normalized model) gives the log-likelihood ratio after
  ``n`` groups with mean ``x`` and variance ``v``::

      LLR = n (s1 - s0) (2x - s0 - s1) / (2 v)

  H1 is accepted when ``LLR >= log((1 - beta) / alpha)``, H0 when
  ``LLR <= log(beta / (1 - alpha))``; in between, play on.
* **The variance.**  ``v`` is the groups' sample variance, pulled towards
  ``prior_variance`` by ``prior_weight`` pseudo-observations:
  ``v = (sum of squared deviations + w * v0) / (n - 1 + w)``.  With many
  groups the prior vanishes; with two identical groups it stops a zero
  variance from deciding the test on nothing.  It can only make the test
  slower to decide, never decide wrongly faster.

The interval printed for the score is the normal one, ``x +- z sqrt(v / n)``,
and the Elo interval is that interval mapped through the formula above.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import random
from collections.abc import Sequence
from typing import Literal

__all__ = [
    "ELO_PER_CHIP",
    "H0",
    "H1",
    "ChipsConfig",
    "Decision",
    "SprtConfig",
    "SprtState",
    "SprtSummary",
    "elo_to_score",
    "group_seed",
    "match_score",
    "score_to_elo",
    "stopping_groups",
]

H0: Literal["H0"] = "H0"
H1: Literal["H1"] = "H1"
Decision = Literal["H0", "H1"]

_SCORE_CLAMP = 1e-4  # scores of exactly 0 or 1 would be infinite Elo
_ELO_LIMIT = 1599.0  # |Elo| at the clamp (1600): printed as infinite
_Z95 = 1.959963984540054
_MIN_VARIANCE = 1e-9  # without a prior, identical scores must not divide by zero

DECISIVE_MARGIN = 2.5
"""Nats above ``log(1 / alpha)`` (``log(1 / beta)`` for H0) that the decisive road needs.

The road is a generalized likelihood ratio: the likelihood of the groups at
their own mean against the hypothesis that mean lies beyond.  Searching over
the mean makes it larger than a fixed-alternative ratio, so it needs a higher
bar; 2.5 nats above Wald's is the bar at which, together with
``SPRT_WIDENING``, the test's error rates stayed where the plain SPRT keeps
them (simulated: normal, Laplace and t(4) groups, group variances from 0.05 to
100 times ``(chips1 - chips0)**2``, alpha and beta from 0.01 to 0.2;
docs/fidelity.md, section 3).
"""

SPRT_WIDENING = 0.16
"""Nats added to both of Wald's bounds when the decisive road is open.

The decisive road adds a little to each error rate; moving Wald's bounds out
by 0.16 nats (the SPRT's own alpha and beta times about 0.85) pays for it.
It costs pairs near the hypotheses about 1 to 9% more groups.
"""


def match_score(places: Sequence[int], seat: int) -> float:
    """The fraction of the other seats that ``seat`` finished ahead of (ties count half).

    ``places[i]`` is seat i's final place, 1 best, equal places shared.
    """
    if len(places) < 2:
        raise ValueError("match_score: a match has at least two seats")
    mine = places[seat]
    points = 0.0
    for other, place in enumerate(places):
        if other == seat:
            continue
        if mine < place:
            points += 1.0
        elif mine == place:
            points += 0.5
    return points / (len(places) - 1)


def elo_to_score(elo: float) -> float:
    """The expected score of a pair ``elo`` points apart (logistic, 400-point scale)."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def score_to_elo(score: float) -> float:
    """The Elo difference that gives ``score`` (clamped away from 0 and 1)."""
    s = min(1.0 - _SCORE_CLAMP, max(_SCORE_CLAMP, score))
    return -400.0 * math.log10(1.0 / s - 1.0)


def group_seed(seed: int, group: int, match: int | None = None) -> int:
    """The deal seed of a rotation group (or of one match of it, without duplicate deals).

    SHA-256 of the labels: the same on every machine and Python, below 2**48
    so JSON readers keep it exact.
    """
    label = f"newmarket/sprt/{seed}/{group}" + ("" if match is None else f"/{match}")
    return int.from_bytes(hashlib.sha256(label.encode()).digest()[:6], "big")


class _ErrorRates:
    """Wald's bounds from the error rates ``alpha`` and ``beta``, shared by both configs."""

    alpha: float
    beta: float

    def _check_error_rates(self) -> None:
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0.0 < value < 0.5:
                raise ValueError(f"{name}: must be between 0 and 0.5, got {value}")

    @property
    def lower(self) -> float:
        """Accept H0 at or below this LLR."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 at or above this LLR."""
        return math.log((1.0 - self.beta) / self.alpha)


@dataclasses.dataclass(frozen=True)
class SprtConfig(_ErrorRates):
    """The hypotheses (in Elo), the error rates, and the variance prior."""

    elo0: float = 0.0
    elo1: float = 20.0
    alpha: float = 0.05
    beta: float = 0.05
    prior_variance: float = 0.05
    prior_weight: float = 1.0
    min_groups: int = 1  # no decision before this many groups

    kind = "places"

    def __post_init__(self) -> None:
        if not self.elo1 > self.elo0:
            raise ValueError(f"elo1 ({self.elo1}) must be greater than elo0 ({self.elo0})")
        self._check_error_rates()
        if self.prior_variance <= 0 or self.prior_weight < 0:
            raise ValueError("prior_variance must be > 0 and prior_weight >= 0")
        if self.min_groups < 1:
            raise ValueError(f"min_groups: must be at least 1, got {self.min_groups}")

    def elo_of(self, score: float) -> float:
        return score_to_elo(score)

    @property
    def score0(self) -> float:
        return elo_to_score(self.elo0)

    @property
    def score1(self) -> float:
        return elo_to_score(self.elo1)


ELO_PER_CHIP = 75.0
"""Elo per chip of duplicate score per hand: the conversion behind ``--elo0/--elo1`` on chips.

Measured on the default preset at tables of 4 (``benchmarks/fidelity.py
conversion``, docs/fidelity.md): pairs of known strength that score +74 to
+104 Elo (tracker vs random) and +30 to +36 Elo (a stronger heuristic vs
tracker) on finishing places in elimination sessions score +1.2 to +1.3 and
+0.4 to +0.56 chips per hand in fixed-hands matches: 60 to 85 Elo per chip,
75 in between.  A rule of thumb for choosing hypotheses, not a law: give
``--chips0/--chips1`` to state them in chips directly.
"""


@dataclasses.dataclass(frozen=True)
class ChipsConfig(_ErrorRates):
    """The hypotheses on the duplicate chips score (chips per hand), error rates, variance prior.

    ``chips0``/``chips1`` are the candidate's edge over the baseline in chips
    per hand under H0 and H1.  The variance of a group score is the sample
    variance pulled towards ``prior_variance`` by ``prior_weight``
    pseudo-groups.  The default prior is none: a chips score's scale depends
    on the rules and the bots, and any fixed prior either slows close pairs
    (too large) or does nothing (too small).  Instead the test does not
    decide before ``min_groups`` groups, and while the groups are few the
    estimated variance is inflated by ``(nu / (nu - 2))**2`` (``nu = n - 1``;
    the square of the t distribution's variance factor), which keeps the
    false-H1 rate at or below alpha when the variance is estimated from a
    handful of groups (measured in docs/fidelity.md; 1.04 at 100 groups).

    ``decisive`` (the default) opens a second road to each decision, for
    pairs far apart: H1 is also accepted once the mean is above ``chips1``
    and ``n (x - chips0)**2 / (2 v)``, the log-likelihood of the groups at
    their own mean against H0, reaches ``log(1 / alpha) + DECISIVE_MARGIN``
    (and H0 symmetrically, below ``chips0``, against H1 and with beta).  A
    fixed-alternative SPRT gathers evidence against H0 at the rate the H1
    point allows, however far beyond it the truth lies; a candidate 5 times
    the H1 edge ahead decides in about 0.67 of the groups this way.  Wald's
    bounds move out by ``SPRT_WIDENING`` to keep alpha and beta.
    """

    chips0: float = 0.0
    chips1: float = 20.0 / ELO_PER_CHIP
    alpha: float = 0.05
    beta: float = 0.05
    prior_variance: float = 0.0
    prior_weight: float = 0.0
    min_groups: int = 8
    small_sample: bool = True  # inflate the variance by (nu / (nu - 2))**2, nu = groups - 1
    decisive: bool = True  # also decide on a likelihood ratio at the groups' own mean

    kind = "chips"

    @property
    def lower(self) -> float:
        """Accept H0 at or below this LLR: Wald's bound, moved out if the decisive road is open."""
        return super().lower - (SPRT_WIDENING if self.decisive else 0.0)

    @property
    def upper(self) -> float:
        """Accept H1 at or above this LLR: Wald's bound, moved out if the decisive road is open."""
        return super().upper + (SPRT_WIDENING if self.decisive else 0.0)

    @property
    def decisive_upper(self) -> float:
        """Accept H1 when the mean is above chips1 and its likelihood ratio to H0 reaches this."""
        return math.log(1.0 / self.alpha) + DECISIVE_MARGIN if self.decisive else math.inf

    @property
    def decisive_lower(self) -> float:
        """Accept H0 when the mean is below chips0 and its likelihood ratio to H1 reaches this."""
        return math.log(1.0 / self.beta) + DECISIVE_MARGIN if self.decisive else math.inf

    def __post_init__(self) -> None:
        if not self.chips1 > self.chips0:
            raise ValueError(f"chips1 ({self.chips1}) must be greater than chips0 ({self.chips0})")
        self._check_error_rates()
        if self.prior_variance < 0 or self.prior_weight < 0:
            raise ValueError("prior_variance and prior_weight must be >= 0")
        if self.min_groups < 4:
            raise ValueError(f"min_groups: must be at least 4, got {self.min_groups}")

    @property
    def elo0(self) -> float:
        return self.chips0 * ELO_PER_CHIP

    @property
    def elo1(self) -> float:
        return self.chips1 * ELO_PER_CHIP

    def elo_of(self, score: float) -> float:
        return score * ELO_PER_CHIP

    @property
    def score0(self) -> float:
        return self.chips0

    @property
    def score1(self) -> float:
        return self.chips1


@dataclasses.dataclass(frozen=True)
class SprtSummary:
    """Where the test stands: the estimate, its 95% interval, the LLR and its bounds."""

    groups: int
    score: float
    score_low: float
    score_high: float
    elo: float
    elo_low: float
    elo_high: float
    variance: float
    llr: float
    lower: float
    upper: float
    decision: Decision | None
    kind: str = "places"  # "places" (share of opponents beaten) or "chips" (per hand)
    # The decisive road (chips only; None where it is closed): the likelihood ratio of the
    # groups at their own mean against the hypothesis it lies beyond, + against H0 (mean above
    # H1), - against H1 (mean below H0), 0 in between; its bounds; and which road decided.
    glr: float | None = None
    glr_lower: float | None = None
    glr_upper: float | None = None
    decided_by: Literal["sprt", "decisive"] | None = None

    def to_json(self) -> dict[str, object]:
        """The fields for ``--json``; an unbounded interval or LLR (one group, or identical
        groups) is null, since ``Infinity`` is not JSON and most readers refuse it."""
        return {
            name: None if isinstance(value, float) and not math.isfinite(value) else value
            for name, value in dataclasses.asdict(self).items()
        }

    def line(self) -> str:
        """One line for people: score, Elo with interval, LLR within its bounds."""
        verdict = f"  -> {self.decision} accepted" if self.decision else ""
        if self.decided_by == "decisive":
            verdict += " (decisive)"

        def elo(value: float) -> str:  # a score interval reaching 0 or 1 has no Elo bound
            return f"{value:+.0f}" if abs(value) < _ELO_LIMIT else ("+inf" if value > 0 else "-inf")

        name = "chips/hand" if self.kind == "chips" else "score"
        # identical groups (equal deterministic bots) have no variance: an infinite LLR
        llr = _signed(self.llr)
        return (
            (
                f"{name} {self.score:+.3f} [{self.score_low:+.3f}, {self.score_high:+.3f}]  "
                if self.kind == "chips"
                else f"{name} {self.score:.3f} [{self.score_low:.3f}, {self.score_high:.3f}]  "
            )
            + (
                f"Elo {elo(self.elo)} [{elo(self.elo_low)}, {elo(self.elo_high)}]  "
                f"LLR {llr} ({self.lower:+.2f}, {self.upper:+.2f})"
            )
            + (
                f"  GLR {_signed(self.glr)} ({-self.glr_lower:+.2f}, {self.glr_upper:+.2f})"
                if self.glr is not None
                and self.glr_lower is not None
                and self.glr_upper is not None
                else ""
            )
            + verdict
        )


def _signed(value: float) -> str:
    """A log-likelihood ratio for the running line; identical groups make it infinite."""
    return f"{value:+.2f}" if abs(value) < 1e6 else ("+inf" if value > 0 else "-inf")


class SprtState:
    """The running test: ``add`` one group score at a time, read ``summary()``.

    Sums are kept with Welford's update, so a long test loses no precision.
    Once decided, the decision stays (more data is still added to the estimate).
    """

    def __init__(self, config: SprtConfig | ChipsConfig | None = None) -> None:
        self.config: SprtConfig | ChipsConfig = config if config is not None else SprtConfig()
        self.n = 0
        self.mean = 0.0
        self.squares = 0.0  # sum of squared deviations from the mean
        self.decision: Decision | None = None
        self.decided_by: Literal["sprt", "decisive"] | None = None

    def add(self, score: float) -> Decision | None:
        """Add one observation (a rotation group's score); return the decision.

        A places score is between 0 and 1; a chips score is any finite number.
        """
        if self.config.kind == "places" and not 0.0 <= score <= 1.0:
            raise ValueError(f"a score is between 0 and 1, got {score}")
        if not math.isfinite(score):
            raise ValueError(f"a score is a finite number, got {score}")
        self.n += 1
        delta = score - self.mean
        self.mean += delta / self.n
        self.squares += delta * (score - self.mean)
        if self.decision is None and self.n >= self.config.min_groups:
            llr, glr = self.llr(), self.glr()
            if llr >= self.config.upper:
                self.decision, self.decided_by = H1, "sprt"
            elif llr <= self.config.lower:
                self.decision, self.decided_by = H0, "sprt"
            elif glr is not None and isinstance(self.config, ChipsConfig):
                if glr >= self.config.decisive_upper:
                    self.decision, self.decided_by = H1, "decisive"
                elif -glr >= self.config.decisive_lower:
                    self.decision, self.decided_by = H0, "decisive"
        return self.decision

    def variance(self) -> float:
        """The sample variance of a group score, with the prior's pseudo-observations."""
        c = self.config
        if self.n - 1 + c.prior_weight <= 0:
            return math.inf  # one group and no prior: no spread to measure yet, so no evidence
        pooled = (self.squares + c.prior_weight * c.prior_variance) / max(
            1.0, self.n - 1 + c.prior_weight
        )
        if isinstance(c, ChipsConfig) and c.small_sample:
            nu = self.n - 1
            pooled *= (nu / (nu - 2)) ** 2 if nu > 2 else 9.0
        return max(_MIN_VARIANCE, pooled)

    def llr(self) -> float:
        if self.n == 0:
            return 0.0
        s0, s1 = self.config.score0, self.config.score1
        return self.n * (s1 - s0) * (2.0 * self.mean - s0 - s1) / (2.0 * self.variance())

    def glr(self) -> float | None:
        """The decisive road's statistic, or None where it is closed (places, ``decisive=False``).

        The log-likelihood ratio of the groups at their own mean against the
        hypothesis that mean lies beyond, ``n (x - s)**2 / (2 v)``: positive
        against H0 when the mean is above H1's edge, negative against H1 when
        it is below H0's, 0 in between (where only the SPRT decides).
        """
        c = self.config
        if not isinstance(c, ChipsConfig) or not c.decisive:
            return None
        if self.n == 0:
            return 0.0
        if self.mean > c.chips1:
            return self.n * (self.mean - c.chips0) ** 2 / (2.0 * self.variance())
        if self.mean < c.chips0:
            return -self.n * (self.mean - c.chips1) ** 2 / (2.0 * self.variance())
        return 0.0

    def summary(self) -> SprtSummary:
        c = self.config
        glr_bounds: tuple[float | None, float | None] = (None, None)
        if isinstance(c, ChipsConfig) and c.decisive:
            glr_bounds = (c.decisive_lower, c.decisive_upper)
        variance = self.variance()
        half = _Z95 * math.sqrt(variance / self.n) if self.n else 0.5
        low, high = self.mean - half, self.mean + half
        if c.kind == "places":
            low, high = max(0.0, low), min(1.0, high)
        return SprtSummary(
            groups=self.n,
            score=self.mean,
            score_low=low,
            score_high=high,
            elo=c.elo_of(self.mean) if self.n else 0.0,
            elo_low=c.elo_of(low),
            elo_high=c.elo_of(high),
            variance=variance,
            llr=self.llr(),
            lower=c.lower,
            upper=c.upper,
            decision=self.decision,
            kind=c.kind,
            glr=self.glr(),
            glr_lower=glr_bounds[0],
            glr_upper=glr_bounds[1],
            decided_by=self.decided_by,
        )


def stopping_groups(
    observations: Sequence[float],
    config: SprtConfig | ChipsConfig,
    *,
    trials: int = 2000,
    max_groups: int = 10_000,
    seed: int = 0,
) -> tuple[list[int], dict[str, int]]:
    """How many groups the test needs, by resampling observed group scores (a bootstrap).

    Each trial draws groups with replacement from ``observations`` and runs
    the test until it decides or reaches ``max_groups``.  Returns each
    trial's number of groups and how often each outcome ("H0", "H1",
    "undecided") happened.  This is how the matches-needed figures in
    docs/search.md were estimated from one batch of real matches.
    """
    if not observations:
        raise ValueError("stopping_groups: no observations to resample")
    rng = random.Random(seed)
    lengths: list[int] = []
    outcomes = {H0: 0, H1: 0, "undecided": 0}
    for _ in range(trials):
        state = SprtState(config)
        decision: Decision | None = None
        while decision is None and state.n < max_groups:
            decision = state.add(rng.choice(observations))
        lengths.append(state.n)
        outcomes[decision if decision is not None else "undecided"] += 1
    return lengths, outcomes
