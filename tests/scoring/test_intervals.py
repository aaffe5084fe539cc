"""Bootstrap intervals, the batch fit, rank intervals and LOS on data with a known truth."""

from __future__ import annotations

import random

import pytest

from referee.scoring.duplicate import GroupMatch
from referee.scoring.fit import equations, solve
from referee.scoring.intervals import bootstrap, mean_interval, percentile, t_quantile, widening


def test_percentiles_interpolate() -> None:
    assert percentile([0.0, 10.0], 0.5) == 5.0
    assert percentile([1.0, 2.0, 3.0], 0.0) == 1.0 and percentile([1.0, 2.0, 3.0], 1.0) == 3.0
    with pytest.raises(ValueError):
        percentile([], 0.5)


def covered(trials: int, size: int, seed: int) -> int:
    """In how many of ``trials`` samples of ``size`` normal values the interval holds the mean."""
    rng = random.Random(seed)
    count = 0
    for trial in range(trials):
        data = [rng.gauss(1.5, 2.0) for _ in range(size)]
        _, low, high = mean_interval(data, resamples=400, seed=trial)
        count += low <= 1.5 <= high
    return count


def test_the_bootstrap_interval_covers_the_true_mean_about_95_percent_of_the_time() -> None:
    trials = 200
    # Percentile bootstrap at n = 40 slightly undercovers; 200 trials: binomial spread ~1.5%.
    assert 0.88 * trials <= covered(trials, 40, seed=7) <= 0.99 * trials


def test_a_short_leagues_interval_still_covers_the_truth_about_95_percent_of_the_time() -> None:
    # Five groups, as a league of five bots at one table of four played once: the plain
    # percentile bootstrap covered 87% of these trials, the widened one 94%.
    trials = 300
    assert covered(trials, 5, seed=11) >= 0.91 * trials


def test_t_quantiles_match_the_table() -> None:
    for df, table in [(1, 12.706), (2, 4.303), (3, 3.182), (4, 2.776), (9, 2.262), (29, 2.045)]:
        assert t_quantile(0.975, df) == pytest.approx(table, rel=0.002)
    assert widening(1) == 1.0 and widening(5) > 1.5 and 1.0 < widening(200) < 1.01


def play_group(
    strength: list[float], table: list[int], rng: random.Random
) -> list[GroupMatch[int]]:
    """A duplicate group on synthetic cards: seat luck shared by the rotations, skill per bot."""
    k = len(table)
    cards = [rng.gauss(0, 3) for _ in range(k)]  # what each seat's cards are worth
    group = []
    for rotation in range(k):
        holders = [table[(seat + rotation) % k] for seat in range(k)]
        nets = [cards[s] + strength[holders[s]] + rng.gauss(0, 0.5) for s in range(k)]
        mean = sum(nets) / k
        group.append(GroupMatch(holders, [n - mean for n in nets], 1))
    return group


def test_the_fit_recovers_known_strengths_whatever_the_order() -> None:
    rng = random.Random(1)
    truth = [0.6, 0.2, 0.0, -0.3, -0.5]
    tables = [[a, b, c] for a in range(5) for b in range(a + 1, 5) for c in range(b + 1, 5)]
    groups = [equations(play_group(truth, t, rng)) for t in tables * 6]
    fitted = solve(5, groups)
    assert sum(fitted) == pytest.approx(0.0, abs=1e-9)
    centred = [t - sum(truth) / 5 for t in truth]
    for got, want in zip(fitted, centred, strict=True):
        assert got == pytest.approx(want, abs=0.1)
    shuffled = groups[:]
    random.Random(2).shuffle(shuffled)
    assert solve(5, shuffled) == pytest.approx(fitted, abs=1e-9)


def test_a_bot_that_never_played_gets_zero() -> None:
    rng = random.Random(3)
    groups = [equations(play_group([1.0, 0.0, -1.0, 0.0], [0, 1, 2], rng)) for _ in range(4)]
    assert solve(4, groups)[3] == 0.0


def test_rank_intervals_and_los_separate_clear_gaps_and_not_ties() -> None:
    rng = random.Random(4)
    truth = [1.0, 0.0, 0.0, -1.0]
    tables = [[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]
    groups = [equations(play_group(truth, t, rng)) for t in tables * 10]
    result = bootstrap(4, groups, resamples=300, seed=1)
    assert result.rank_low[0] == result.rank_high[0] == 1
    assert result.rank_low[3] == result.rank_high[3] == 4
    assert {result.rank_low[1], result.rank_low[2]} <= {2, 3}
    assert result.los(0, 1) > 0.99 and result.los(3, 2) < 0.01
    assert 0.02 < result.los(1, 2) < 0.98  # equal bots: neither is sure to be better
    assert result.los(1, 2) + result.los(2, 1) == pytest.approx(1.0)
    for bot in range(4):
        assert result.low[bot] <= result.strength[bot] <= result.high[bot]
