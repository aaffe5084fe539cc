"""The fit from per-class summaries against the batch fit over every group's equations.

What must hold (referee/scoring/summary.py says why): the point estimates
equal to within float rounding in every kind of league; while a league has
few groups, the very same resamples, so the same intervals, ranks and LOS;
beyond, intervals that agree with the batch bootstrap's as two bootstraps of
the same data agree; and a summary fed one match at a time, in any order,
equal to one built in a single pass.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.scoring.duplicate import GroupMatch, forfeit_nets
from referee.scoring.fit import equations, solve
from referee.scoring.intervals import Bootstrap, bootstrap
from referee.scoring.summary import FitSummary

Group = list[GroupMatch[int]]


def deal(
    table: Sequence[int],
    truth: Sequence[float],
    rng: random.Random,
    *,
    rotations: int | None = None,
    own_deals: bool = False,
    heavy: bool = False,
    disqualified: int | None = None,
) -> Group:
    """A group of ``table``'s rotations: the seats' cards shared unless ``own_deals``.

    Chips are whole numbers as a match's are; ``heavy`` noise is Laplace (the
    close pairs' heavy tails, docs/fidelity.md); ``disqualified`` is a bot
    whose seats the default policy played and whose chips are capped.
    """
    k = len(table)
    order = list(table)
    rng.shuffle(order)
    cards = [rng.gauss(0, 3) for _ in range(k)]
    group = []
    for rotation in range(k if rotations is None else rotations):
        if own_deals:
            cards = [rng.gauss(0, 3) for _ in range(k)]
        holders = [order[(seat + rotation) % k] for seat in range(k)]
        noise = [
            rng.expovariate(1.0) * rng.choice((-1, 1)) if heavy else rng.gauss(0, 1)
            for _ in range(k)
        ]
        nets = [round(4 * (cards[s] + truth[holders[s]] + noise[s])) for s in range(k)]
        if disqualified is not None:
            out = [holder == disqualified for holder in holders]
            won = [net + 30 * seat for net, seat in zip(nets, out, strict=True)]
            nets = [round(net) for net in forfeit_nets(won, out)]
        group.append(GroupMatch(holders, nets, 4))
    return group


def round_robin(bots: int, size: int, cycles: int, seed: int, **options: object) -> list[Group]:
    rng = random.Random(seed)
    truth = [rng.gauss(0, 0.6) for _ in range(bots)]
    tables = list(itertools.combinations(range(bots), size))
    return [deal(t, truth, rng, **options) for _ in range(cycles) for t in tables]  # type: ignore[arg-type]


def gauntlet(seed: int) -> list[Group]:
    """Two candidates, each at every table of three of a field of four: fields differ."""
    rng = random.Random(seed)
    truth = [1.0, 0.3, 0.5, 0.0, -0.2, -0.6]
    groups = []
    for _ in range(3):
        for field in itertools.combinations(range(2, 6), 3):
            for candidate in (0, 1):
                groups.append(deal((candidate, *field), truth, rng))
    return groups


def bankroll(seed: int) -> list[Group]:
    """Each match its own deal at tables of shrinking size, as a bankroll league plays."""
    rng = random.Random(seed)
    truth = [0.8, 0.4, 0.0, -0.4, -0.8, 0.1, -0.1]
    groups = []
    for number in range(40):
        alive = list(range(7 - number // 10))
        rng.shuffle(alive)
        tables = [alive[:3], alive[3:]] if len(alive) >= 6 else [alive]
        groups += [deal(table, truth, rng, rotations=1) for table in tables]
    return groups


def alone(groups: list[Group]) -> list[Group]:
    """A remote table's rotations: each on its own deal, so each a group of its own."""
    return [[match] for group in groups for match in group]


LEAGUES = {
    "duplicate round robin": lambda: round_robin(6, 4, 3, seed=1),
    "round robin, tables of 3, heavy tails": lambda: round_robin(5, 3, 4, seed=2, heavy=True),
    "remote plain deals": lambda: alone(round_robin(5, 3, 3, seed=3, own_deals=True)),
    "matches alone": lambda: round_robin(6, 4, 2, seed=4, rotations=1),
    "partial groups": lambda: round_robin(6, 4, 2, seed=5, rotations=2),
    "a disqualified bot": lambda: round_robin(5, 4, 4, seed=6, disqualified=2),
    "gauntlet": lambda: gauntlet(7),
    "bankroll": lambda: bankroll(8),
}


def labelled(groups: Sequence[Group]) -> list[tuple[tuple[int, ...], Group]]:
    """Each group with a label of its own (its number)."""
    return [((number,), group) for number, group in enumerate(groups)]


def summary_of(groups: Sequence[Group], exact_groups: int = 2000) -> FitSummary:
    summary = FitSummary(exact_groups)
    for label, group in labelled(groups):
        summary.add_group(label, group)
    return summary


def batch(groups: Sequence[Group], bots: int, resamples: int, seed: int) -> Bootstrap:
    return bootstrap(bots, [equations(g) for g in groups], resamples=resamples, seed=seed)


def bots_of(groups: Sequence[Group]) -> int:
    return 1 + max(bot for group in groups for match in group for bot in match.holders)


@pytest.mark.parametrize("kind", list(LEAGUES))
def test_the_point_estimates_are_the_batch_fits(kind: str) -> None:
    groups = LEAGUES[kind]()
    bots = bots_of(groups) + 1  # and one that never played: pinned to 0 by both
    old = solve(bots, [equations(g) for g in groups])
    new = summary_of(groups).strengths(list(range(bots)))
    assert new == pytest.approx(old, abs=1e-12)
    assert new[-1] == 0.0
    assert abs(max(new) - min(new)) > 0.1  # the league does separate the bots


@pytest.mark.parametrize("kind", list(LEAGUES))
def test_a_small_league_draws_the_batch_bootstraps_own_resamples(kind: str) -> None:
    groups = LEAGUES[kind]()
    bots = bots_of(groups)
    old = batch(groups, bots, resamples=300, seed=11)
    summary = summary_of(groups)
    assert summary.draws_groups
    new = summary.bootstrap(list(range(bots)), resamples=300, seed=11)
    assert new.resamples == old.resamples == 300
    assert new.strength == pytest.approx(old.strength, abs=1e-12)
    assert new.low == pytest.approx(old.low, abs=1e-12)
    assert new.high == pytest.approx(old.high, abs=1e-12)
    assert (new.rank_low, new.rank_high) == (old.rank_low, old.rank_high)
    assert new.ahead == old.ahead


@pytest.mark.parametrize(
    "kind",
    ["duplicate round robin", "round robin, tables of 3, heavy tails", "remote plain deals"],
)
def test_the_class_bootstrap_gives_the_batch_bootstraps_intervals(kind: str) -> None:
    # Two bootstraps of the same data agree to within their own resampling noise: with 3,000
    # resamples the worst of these leagues' interval ends moves by 2.7-3.9% of its width
    # between two seeds of the batch bootstrap, and by 3.0-4.7% from batch to classes.
    groups = LEAGUES[kind]()
    bots = bots_of(groups)
    summary = summary_of(groups, exact_groups=0)
    assert not summary.draws_groups
    assert summary.classes < summary.groups  # it does draw over fewer things
    old = batch(groups, bots, resamples=3000, seed=1)
    new = summary.bootstrap(list(range(bots)), resamples=3000, seed=2)
    for bot in range(bots):
        width = old.high[bot] - old.low[bot]
        assert new.high[bot] - new.low[bot] == pytest.approx(width, rel=0.1)
        assert new.low[bot] == pytest.approx(old.low[bot], abs=0.08 * width)
        assert new.high[bot] == pytest.approx(old.high[bot], abs=0.08 * width)
    for a in range(bots):
        for b in range(bots):
            assert new.los(a, b) == pytest.approx(old.los(a, b), abs=0.04)


def test_the_class_bootstrap_of_a_wrong_spread_would_be_caught() -> None:
    # The check above can fail: the same league with each group's result doubled has
    # intervals twice as wide, and they are told apart.
    groups = LEAGUES["duplicate round robin"]()
    doubled = [[GroupMatch(m.holders, [2 * n for n in m.nets], m.hands) for m in g] for g in groups]
    bots = bots_of(groups)
    plain = summary_of(groups, exact_groups=0).bootstrap(list(range(bots)), resamples=500)
    wide = summary_of(doubled, exact_groups=0).bootstrap(list(range(bots)), resamples=500)
    for bot in range(bots):
        ratio = (wide.high[bot] - wide.low[bot]) / (plain.high[bot] - plain.low[bot])
        assert ratio == pytest.approx(2.0, rel=0.15)


def test_bots_never_compared_are_left_where_the_batch_fit_leaves_them() -> None:
    # Two tables with no bot in common: the strengths are fixed only within each, and both
    # fits resolve the free direction the same way (the batch fit's elimination).
    rng = random.Random(9)
    truth = [1.0, 0.0, -1.0, 0.5, 0.0, -0.5]
    groups = [deal((0, 1, 2), truth, rng) for _ in range(4)]
    groups += [deal((3, 4, 5), truth, rng) for _ in range(4)]
    old = solve(6, [equations(g) for g in groups])
    assert summary_of(groups).strengths(list(range(6))) == pytest.approx(old, abs=1e-12)
    resampled = summary_of(groups, exact_groups=0).bootstrap(list(range(6)), resamples=50)
    assert all(low <= high for low, high in zip(resampled.low, resampled.high, strict=True))


def test_every_bot_that_played_must_be_fitted() -> None:
    summary = summary_of(round_robin(4, 3, 1, seed=1))
    with pytest.raises(ValueError, match=r"\[3\] played"):
        summary.strengths([0, 1, 2])


@st.composite
def arrivals(draw: st.DrawFn) -> tuple[int, list[Group], list[tuple[int, GroupMatch[int]]]]:
    """A few groups (duplicate, partial, or one match alone) and an order their matches
    arrive in, interleaved."""
    bots = draw(st.integers(3, 6))
    size = draw(st.integers(3, min(4, bots)))
    rng = random.Random(draw(st.integers(0, 10**6)))
    truth = [rng.gauss(0, 1) for _ in range(bots)]
    groups = []
    for _ in range(draw(st.integers(1, 12))):
        table = draw(st.permutations(range(bots)))[:size]
        rotations = draw(st.sampled_from([1, 2, size, size]))
        groups.append(deal(table, truth, rng, rotations=rotations))
    pieces = [(number, match) for number, group in enumerate(groups) for match in group]
    order = draw(st.permutations(range(len(pieces))))
    return bots, groups, [pieces[i] for i in order]


@settings(max_examples=60, deadline=None)
@given(arrivals(), st.sampled_from([2000, 3, 0]))
def test_a_summary_fed_match_by_match_in_any_order_is_the_one_built_at_once(
    case: tuple[int, list[Group], list[tuple[int, GroupMatch[int]]]], exact_groups: int
) -> None:
    bots, groups, arriving = case
    whole = FitSummary(exact_groups)
    for number, group in enumerate(groups):
        whole.add_group(number, group)
    grown = FitSummary(exact_groups)
    left = {number: len(group) for number, group in enumerate(groups)}
    for number, match in arriving:
        grown.add(number, match)
        left[number] -= 1
        if not left[number]:
            grown.close(number)
    assert (grown.groups, grown.matches, grown.classes) == (
        whole.groups,
        whole.matches,
        whole.classes,
    )
    assert grown.draws_groups == whole.draws_groups
    everyone = list(range(bots))
    assert grown.strengths(everyone) == pytest.approx(whole.strengths(everyone), abs=1e-9)
    a = grown.bootstrap(everyone, resamples=40, seed=3)
    b = whole.bootstrap(everyone, resamples=40, seed=3)
    assert a.low == pytest.approx(b.low, abs=1e-9) and a.high == pytest.approx(b.high, abs=1e-9)
    old = solve(bots, [equations(g) for g in groups])
    assert grown.strengths(everyone) == pytest.approx(old, abs=1e-9)


def test_a_closed_group_takes_no_more_matches() -> None:
    group = round_robin(4, 3, 1, seed=1)[0]
    summary = FitSummary()
    for match in group:
        summary.add("g", match)
    summary.close("g")
    with pytest.raises(ValueError, match="was closed"):
        summary.add("g", group[0])
    with pytest.raises(ValueError, match="already"):
        summary.add_group("g", group)
