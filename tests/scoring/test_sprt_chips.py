"""The GSPRT on the chips score: its formula, guards and error rate; bots of known strength.

Synthetic data comes from seeded generators; the bots are the in-process
policies of ``referee.scoring.policies``, whose order of strength is
measured in docs/fidelity.md (boodler > tracker > its 10%-noisy copy > random).
"""

from __future__ import annotations

import math
import random
import statistics

import pytest

from engine import preset
from referee.scoring.policies import POLICIES
from referee.scoring.sequential import ELO_PER_CHIP, H0, H1, ChipsConfig, Decision, SprtState
from referee.scoring.simulate import formats, group_score


def test_the_llr_is_the_normal_gsprt_formula_with_the_small_sample_factor() -> None:
    config = ChipsConfig(chips0=0.0, chips1=0.5)
    state = SprtState(config)
    data = [0.9, 0.1, 0.7, 0.4, 1.2, -0.3]
    for x in data:
        state.add(x)
    mean = statistics.fmean(data)
    nu = len(data) - 1
    variance = statistics.variance(data) * (nu / (nu - 2)) ** 2
    assert state.llr() == pytest.approx(len(data) * 0.5 * (2 * mean - 0.5) / (2 * variance))
    summary = state.summary()
    assert summary.kind == "chips" and summary.elo == pytest.approx(mean * ELO_PER_CHIP)
    assert summary.score_low < mean < summary.score_high
    assert "chips/hand" in summary.line()


def test_elo_hypotheses_convert_to_chips() -> None:
    default = ChipsConfig()
    assert default.chips1 == pytest.approx(20 / ELO_PER_CHIP) and default.elo1 == pytest.approx(20)
    with pytest.raises(ValueError, match="chips1"):
        ChipsConfig(chips0=0.3, chips1=0.3)
    with pytest.raises(ValueError, match="min_groups"):
        ChipsConfig(min_groups=2)


def test_one_group_is_no_evidence_yet() -> None:
    state = SprtState(ChipsConfig())
    state.add(4.0)  # a single group has no spread to measure: no LLR, an unbounded interval
    summary = state.summary()
    assert summary.llr == 0.0 and summary.score_low == -math.inf and summary.score_high == math.inf
    assert "LLR +0.00" in summary.line() and "[-inf, +inf]" in summary.line()


def test_no_decision_on_a_handful_of_groups_even_with_no_variance() -> None:
    state = SprtState(ChipsConfig(min_groups=8))
    for _ in range(7):
        assert state.add(3.0) is None  # a huge, perfectly steady edge: still waits
    assert state.add(3.0) == H1
    equal = SprtState(ChipsConfig(min_groups=8))
    decisions = [equal.add(0.0) for _ in range(8)]  # identical deterministic bots
    assert decisions[:7] == [None] * 7 and decisions[7] == H0


def run_until_decided(mean: float, sd: float, rng: random.Random) -> tuple[str | None, int]:
    state = SprtState(ChipsConfig(chips0=0.0, chips1=1 / 3))
    decision = None
    while decision is None and state.n < 3000:
        decision = state.add(rng.gauss(mean, sd))
    return decision, state.n


@pytest.mark.parametrize("sd", [0.3, 0.65, 1.5])
def test_equal_bots_accept_h1_at_most_alpha_of_the_time(sd: float) -> None:
    rng = random.Random(20_261_124)
    runs = 400
    wrong = sum(run_until_decided(0.0, sd, rng)[0] == H1 for _ in range(runs))
    # alpha is 0.05; 400 runs at a true rate of 0.05 exceed 30 with probability < 2%.
    assert wrong <= 30, f"{wrong} of {runs} runs accepted H1 for equal bots"


def test_heavy_tailed_symmetric_groups_of_equal_bots_stay_within_alpha() -> None:
    # Equal bots' group scores are symmetric about 0 (swapping the names candidate and
    # baseline negates them) but heavier-tailed than normal: a Laplace law (kurtosis 6;
    # the alternate layout's groups measure about 4.5) at the sd of 10%-noisy trackers.
    rng = random.Random(14)
    runs = 400
    wrong = 0
    for _ in range(runs):
        state = SprtState(ChipsConfig())
        decision = None
        while decision is None and state.n < 3000:
            magnitude = rng.expovariate(math.sqrt(2) / 1.9)  # Laplace with sd 1.9
            decision = state.add(magnitude if rng.random() < 0.5 else -magnitude)
        wrong += decision == H1
    assert wrong <= 30, f"{wrong} of {runs} runs accepted H1 for equal bots"


def test_a_true_edge_of_chips1_is_accepted_most_of_the_time() -> None:
    rng = random.Random(5)
    runs = 200
    right = sum(run_until_decided(1 / 3, 0.65, rng)[0] == H1 for _ in range(runs))
    assert right >= 0.9 * runs  # power 1 - beta = 0.95


def groups_to_decide(
    config: ChipsConfig, mean: float, sd: float, seed: int, runs: int
) -> tuple[list[Decision | None], list[int]]:
    """Each run's decision and groups, on normal groups drawn from one seeded generator."""
    rng = random.Random(seed)
    decisions, lengths = [], []
    for _ in range(runs):
        state = SprtState(config)
        decision = None
        while decision is None and state.n < 4000:
            decision = state.add(rng.gauss(mean, sd))
        decisions.append(decision)
        lengths.append(state.n)
    return decisions, lengths


def test_the_decisive_road_is_the_likelihood_at_the_mean_against_h0() -> None:
    config = ChipsConfig()  # chips 0 / 0.267, alpha = beta = 0.05
    assert config.upper == pytest.approx(math.log(0.95 / 0.05) + 0.16)
    assert config.decisive_upper == pytest.approx(math.log(20) + 2.5)
    state = SprtState(config)
    data = [2.5, 1.0, 3.0, 1.5, 2.0, 3.2, 0.8, 2.0]  # far above H1's 0.267 chips
    for x in data:
        decision = state.add(x)
    mean, nu = statistics.fmean(data), len(data) - 1
    variance = statistics.variance(data) * (nu / (nu - 2)) ** 2
    assert state.glr() == pytest.approx(len(data) * mean**2 / (2 * variance))
    # The SPRT alone is far from its bound; the groups' own mean is decisive.
    assert state.llr() < config.upper < config.decisive_upper <= state.glr()  # type: ignore[operator]
    assert decision == H1 and state.decided_by == "decisive"
    summary = state.summary()
    assert summary.line().endswith("-> H1 accepted (decisive)") and "GLR +" in summary.line()
    assert summary.to_json()["decided_by"] == "decisive"
    plain = SprtState(ChipsConfig(decisive=False))
    assert [plain.add(x) for x in data][-1] is None and plain.glr() is None
    assert "GLR" not in plain.summary().line()


def test_a_candidate_far_ahead_or_behind_decides_in_fewer_groups() -> None:
    # Tracker against random bots: +1.27 chips per hand, group sd 3.08 (docs/fidelity.md).
    for mean, verdict in ((1.27, H1), (-1.27, H0)):
        plain = groups_to_decide(ChipsConfig(decisive=False), mean, 3.08, seed=3, runs=200)
        decisive = groups_to_decide(ChipsConfig(), mean, 3.08, seed=3, runs=200)
        assert set(plain[0]) == set(decisive[0]) == {verdict}
        assert statistics.fmean(decisive[1]) < 0.75 * statistics.fmean(plain[1])


def test_a_pair_near_the_hypotheses_pays_little_for_the_decisive_road() -> None:
    config = ChipsConfig()
    plain = groups_to_decide(ChipsConfig(decisive=False), config.chips1, 1.6, seed=4, runs=200)
    decisive = groups_to_decide(config, config.chips1, 1.6, seed=4, runs=200)
    assert decisive[0].count(H1) >= 0.9 * 200  # power 1 - beta = 0.95 at exactly H1
    assert statistics.fmean(decisive[1]) < 1.12 * statistics.fmean(plain[1])


FIXED = formats(preset("boodle"), 8)["new"]


def scores(candidate: str, baseline: str, groups: int, seed: int) -> list[float]:
    return [
        group_score(FIXED, POLICIES[candidate], POLICIES[baseline], 4, seed, g)[0]
        for g in range(groups)
    ]


def interval(values: list[float]) -> tuple[float, float]:
    mean = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values))
    return mean - half, mean + half


def test_equal_bots_score_zero_within_the_interval() -> None:
    low, high = interval(scores("tracker-noisy", "tracker-noisy", 60, seed=3))
    assert low < 0.0 < high
    # Identical deterministic bots: every group is exactly 0.
    assert set(scores("tracker", "tracker", 3, seed=3)) == {0.0}


@pytest.mark.parametrize(
    ("candidate", "baseline", "groups"),
    [("tracker", "random", 60), ("boodler", "tracker", 80), ("tracker", "lowest", 60)],
)
def test_the_stronger_bot_scores_above_zero(candidate: str, baseline: str, groups: int) -> None:
    low, _ = interval(scores(candidate, baseline, groups, seed=11))
    assert low > 0.0
    high = interval(scores(baseline, candidate, groups, seed=11))[1]
    assert high < 0.0  # and the weaker one, seated as the candidate, below


def test_the_test_decides_boodler_over_tracker() -> None:
    state = SprtState(ChipsConfig())
    decision = None
    group = 0
    while decision is None and group < 200:
        decision = state.add(
            group_score(FIXED, POLICIES["boodler"], POLICIES["tracker"], 4, 1, group)[0]
        )
        group += 1
    assert decision == H1
