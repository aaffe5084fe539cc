"""referee/scoring/sequential.py on synthetic data: the scores, the Elo scale, the test's decisions.

The group scores here come from seeded generators with a known mean, so
every decision is the same on every run: a clear improvement must accept
H1, equal strength must accept H0, and a test never decides on the first
couple of identical observations.
"""

from __future__ import annotations

import math
import random

import pytest

from referee.scoring.sequential import (
    H0,
    H1,
    SprtConfig,
    SprtState,
    elo_to_score,
    group_seed,
    match_score,
    score_to_elo,
    stopping_groups,
)


def test_a_match_score_counts_opponents_beaten_and_ties_as_half() -> None:
    assert match_score([1, 2, 3, 4], 0) == 1.0
    assert match_score([1, 2, 3, 4], 3) == 0.0
    assert match_score([2, 1, 3, 4], 0) == pytest.approx(2 / 3)
    assert match_score([1, 1, 3], 0) == 0.75  # one beaten, one tie: 1.5 of 2
    assert match_score([2, 2], 1) == 0.5
    with pytest.raises(ValueError):
        match_score([1], 0)


def test_the_elo_scale_is_logistic_and_symmetric() -> None:
    assert elo_to_score(0) == 0.5
    assert elo_to_score(400) == pytest.approx(10 / 11)
    for elo in (-300.0, -20.0, 0.0, 35.0, 250.0):
        assert score_to_elo(elo_to_score(elo)) == pytest.approx(elo)
        assert elo_to_score(-elo) == pytest.approx(1 - elo_to_score(elo))
    assert math.isfinite(score_to_elo(1.0)) and math.isfinite(score_to_elo(0.0))


def test_the_bounds_are_walds() -> None:
    config = SprtConfig(alpha=0.05, beta=0.05)
    assert config.upper == pytest.approx(math.log(19))
    assert config.lower == pytest.approx(-math.log(19))
    skewed = SprtConfig(alpha=0.01, beta=0.1)
    assert skewed.upper == pytest.approx(math.log(0.9 / 0.01))
    assert skewed.lower == pytest.approx(math.log(0.1 / 0.99))


def test_bad_hypotheses_are_refused() -> None:
    with pytest.raises(ValueError, match="elo1"):
        SprtConfig(elo0=10, elo1=10)
    with pytest.raises(ValueError, match="alpha"):
        SprtConfig(alpha=0.6)


def test_the_llr_is_the_normal_gsprt_formula() -> None:
    config = SprtConfig(elo0=0, elo1=50, prior_weight=0.0)
    state = SprtState(config)
    data = [0.6, 0.7, 0.55, 0.65]
    for x in data:
        state.add(x)
    mean = sum(data) / 4
    variance = sum((x - mean) ** 2 for x in data) / 3
    s0, s1 = config.score0, config.score1
    expected = 4 * (s1 - s0) * (2 * mean - s0 - s1) / (2 * variance)
    assert state.llr() == pytest.approx(expected)
    summary = state.summary()
    assert summary.score == pytest.approx(mean)
    assert summary.score_low < mean < summary.score_high
    assert summary.elo == pytest.approx(score_to_elo(mean))
    assert summary.elo_low < summary.elo < summary.elo_high


def test_identical_observations_do_not_decide_at_once() -> None:
    state = SprtState(SprtConfig(elo0=0, elo1=20))
    assert state.add(0.9) is None
    assert state.add(0.9) is None  # a zero sample variance is held up by the prior
    assert state.variance() > 0


def noisy_groups(mean: float, rng: random.Random, spread: float = 0.25) -> float:
    """A group score: the mean plus uniform noise, kept within 0..1."""
    return min(1.0, max(0.0, mean + rng.uniform(-spread, spread)))


@pytest.mark.parametrize("seed", range(5))
def test_a_clear_improvement_accepts_h1(seed: int) -> None:
    rng = random.Random(seed)
    state = SprtState(SprtConfig(elo0=0, elo1=20))
    while state.decision is None:
        state.add(noisy_groups(0.62, rng))
        assert state.n < 400
    assert state.decision == H1
    assert state.summary().elo > 20


@pytest.mark.parametrize("seed", range(5))
def test_equal_strength_accepts_h0(seed: int) -> None:
    rng = random.Random(100 + seed)
    state = SprtState(SprtConfig(elo0=0, elo1=20))
    while state.decision is None:
        state.add(noisy_groups(0.5, rng))
        assert state.n < 2000
    assert state.decision == H0


def test_error_rates_hold_on_the_boundary_hypotheses() -> None:
    # At exactly elo0 the test should accept H1 about alpha of the time, at elo1 H0
    # about beta of the time.  Wald's bounds are conservative; allow for sampling.
    config = SprtConfig(elo0=0, elo1=40)
    h1_under_h0 = h0_under_h1 = 0
    trials = 300
    rng = random.Random(7)
    for _ in range(trials):
        for mean, wrong in ((config.score0, H1), (config.score1, H0)):
            state = SprtState(config)
            while state.decision is None:
                state.add(noisy_groups(mean, rng))
            if state.decision == wrong:
                if wrong == H1:
                    h1_under_h0 += 1
                else:
                    h0_under_h1 += 1
    assert h1_under_h0 / trials < 0.1
    assert h0_under_h1 / trials < 0.1


def test_stopping_groups_resamples_observed_scores() -> None:
    rng = random.Random(3)
    strong = [noisy_groups(0.7, rng) for _ in range(40)]
    lengths, outcomes = stopping_groups(strong, SprtConfig(), trials=200, seed=1)
    assert len(lengths) == 200 and outcomes[H1] > 190
    assert sum(lengths) / len(lengths) < 20
    capped, outcomes = stopping_groups([0.5, 0.52], SprtConfig(), trials=10, max_groups=3)
    assert capped == [3] * 10 and outcomes["undecided"] == 10


def test_group_seeds_are_stable_and_distinct() -> None:
    assert group_seed(1, 0) == group_seed(1, 0)
    seeds = {group_seed(1, g) for g in range(100)} | {group_seed(1, 0, m) for m in range(4)}
    assert len(seeds) == 104
    assert all(0 <= s < 2**48 for s in seeds)


def test_an_interval_reaching_a_perfect_score_prints_an_infinite_elo_bound() -> None:
    state = SprtState()
    for score in (1.0, 0.9):
        state.add(score)
    line = state.summary().line()
    assert "+inf]" in line and "1600" not in line
