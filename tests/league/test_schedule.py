"""Schedules: fair meetings, every seat for every bot, duplicate deals, all from the seed."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.deal import first_dealer
from referee.league.schedule import (
    BALANCED,
    ROUND_ROBIN,
    ScheduledMatch,
    ScheduleError,
    balanced_tables,
    build_schedule,
    choose_kind,
    pair_counts,
)
from referee.match.key import derive_seed


def meetings_of(schedule: list[ScheduledMatch], bots: int) -> list[int]:
    """How often each pair shares a table (counting tables, not their rotations)."""
    tables = {(m.cycle, m.table): m.bots for m in schedule}
    counts = pair_counts(list(tables.values()), bots)
    return [counts[a][b] for a, b in itertools.combinations(range(bots), 2)]


def seat_counts(schedule: list[ScheduledMatch], bots: int) -> list[Counter[int]]:
    """For each bot, how often it sat in each seat."""
    seats: list[Counter[int]] = [Counter() for _ in range(bots)]
    for match in schedule:
        for seat, bot in enumerate(match.bots):
            seats[bot][seat] += 1
    return seats


sizes = st.integers(min_value=3, max_value=8).flatmap(
    lambda k: st.tuples(st.just(k), st.integers(min_value=k, max_value=k + 6))
)


@settings(max_examples=40, deadline=None)
@given(sizes=sizes, seed=st.integers(0, 2**32), cycles=st.integers(1, 2))
def test_round_robin_plays_every_combination_in_every_rotation(
    sizes: tuple[int, int], seed: int, cycles: int
) -> None:
    k, n = sizes
    schedule = build_schedule(n, k, seed, kind=ROUND_ROBIN, cycles=cycles)
    assert len(schedule) == math.comb(n, k) * k * cycles
    tables = Counter(tuple(sorted(m.bots)) for m in schedule)
    assert set(tables) == set(itertools.combinations(range(n), k))
    assert set(tables.values()) == {k * cycles}
    # every pair shares exactly C(n-2, k-2) tables per cycle
    assert set(meetings_of(schedule, n)) == {math.comb(n - 2, k - 2) * cycles}
    # every bot sits in every seat equally often
    for counter in seat_counts(schedule, n):
        assert len(counter) == k and len(set(counter.values())) == 1
    assert [m.index for m in schedule] == list(range(len(schedule)))
    assert len({m.match_id for m in schedule}) == len(schedule)


@settings(max_examples=30, deadline=None)
@given(
    k=st.integers(min_value=3, max_value=8),
    extra=st.integers(min_value=1, max_value=22),
    meetings=st.integers(1, 2),
    seed=st.integers(0, 2**32),
)
def test_balanced_schedules_keep_pairs_within_one_and_seats_equal(
    k: int, extra: int, meetings: int, seed: int
) -> None:
    n = k + extra
    schedule = build_schedule(n, k, seed, kind=BALANCED, meetings=meetings)
    met = meetings_of(schedule, n)
    assert min(met) >= meetings
    assert max(met) - min(met) <= 1
    for counter in seat_counts(schedule, n):
        assert len(counter) == k and len(set(counter.values())) == 1


def test_a_large_league_gets_a_balanced_schedule_far_shorter_than_round_robin() -> None:
    assert choose_kind("auto", 50, 4, 500) == BALANCED
    assert choose_kind("auto", 8, 4, 500) == ROUND_ROBIN
    schedule = build_schedule(50, 4, 1, kind="auto")
    tables = len(schedule) // 4
    assert tables <= 300  # the round robin has 230,300
    met = meetings_of(schedule, 50)
    assert min(met) == 1 and max(met) <= 2
    # every bot plays the same number of tables here (the plain cyclic form)
    plays = Counter(bot for match in schedule if match.rotation == 0 for bot in match.bots)
    assert len(set(plays.values())) == 1


def test_sizes_that_need_a_missing_design_still_get_a_balanced_schedule() -> None:
    # 43 bots at tables of 7 once each would be a projective plane of order 6: none exists.
    tables = balanced_tables(43, 7, 1, seed=5)
    counts = pair_counts(tables, 43)
    met = [counts[a][b] for a, b in itertools.combinations(range(43), 2)]
    assert min(met) >= 1 and max(met) - min(met) <= 1


@pytest.mark.parametrize("duplicate", [True, False])
def test_duplicate_deals_give_every_bot_every_seat_of_the_same_deal(duplicate: bool) -> None:
    schedule = build_schedule(6, 4, 11, duplicate=duplicate)
    by_table: dict[int, list[ScheduledMatch]] = {}
    for match in schedule:
        by_table.setdefault(match.table, []).append(match)
    for rotations in by_table.values():
        assert [m.rotation for m in rotations] == [0, 1, 2, 3]
        seeds = {m.seed for m in rotations}
        assert len(seeds) == (1 if duplicate else 4)
        for seat in range(4):
            # each bot of the table holds this seat once: the seat's cards go round
            assert sorted(m.bots[seat] for m in rotations) == sorted(rotations[0].bots)
        if duplicate:
            # the same first dealer seat, so each bot deals first once
            seed = rotations[0].seed
            dealers = [m.bots[first_dealer(seed, 4)] for m in rotations]
            assert sorted(dealers) == sorted(rotations[0].bots)
    all_seeds = [m.seed for m in schedule if m.rotation == 0]
    assert len(set(all_seeds)) == len(all_seeds)


def test_schedules_follow_the_seed_only() -> None:
    assert build_schedule(9, 4, 3) == build_schedule(9, 4, 3)
    assert build_schedule(9, 4, 3) != build_schedule(9, 4, 4)
    assert balanced_tables(20, 4, 1, 3) == balanced_tables(20, 4, 1, 3)


def test_a_repeated_balanced_schedule_is_refused() -> None:
    with pytest.raises(ScheduleError, match=r"^cycles: .*raise meetings"):
        build_schedule(30, 4, 1, kind=BALANCED, cycles=2)


# ---------------------------------------------------------------- the order of play


def widest_spread(schedule: list[ScheduledMatch], bots: int, group: set[int]) -> int:
    """The most matches one bot of ``group`` was ahead of another at any point of the order."""
    played = Counter({bot: 0 for bot in group})
    widest = 0
    for match in schedule:
        played.update(bot for bot in match.bots if bot in group)
        widest = max(widest, max(played.values()) - min(played.values()))
    return widest


@settings(max_examples=40, deadline=None)
@given(sizes=sizes, seed=st.integers(0, 2**32), cycles=st.integers(1, 2))
def test_a_round_robin_stopped_anywhere_has_every_bot_within_two_matches(
    sizes: tuple[int, int], seed: int, cycles: int
) -> None:
    """Interleaved, not bot 0's tables first: a stopped league's counts are all alike."""
    k, n = sizes
    schedule = build_schedule(n, k, seed, kind=ROUND_ROBIN, cycles=cycles)
    assert widest_spread(schedule, n, set(range(n))) <= 2
    # One pass of rotation 0 over every table, then rotation 1, ...: a table worker goes on
    # from one table to the next with the same bot processes (referee.tables.local_pool).
    passes = [(m.cycle, m.rotation) for m in schedule]
    assert passes == sorted(passes)


def test_the_first_bot_no_longer_plays_its_tables_first() -> None:
    # The league of the report: 9 bots, tables of 4, stopped after 108 of 504 matches.
    schedule = build_schedule(9, 4, 2024)
    played = Counter(bot for match in schedule[:108] for bot in match.bots)
    assert len(schedule) == 504
    assert max(played.values()) - min(played.values()) <= 2  # it was 108 against 38 to 42


@pytest.mark.parametrize(
    ("bots", "table_size", "kind"), [(30, 4, BALANCED), (43, 7, BALANCED), (14, 5, BALANCED)]
)
def test_balanced_schedules_are_interleaved_too(bots: int, table_size: int, kind: str) -> None:
    schedule = build_schedule(bots, table_size, 9, kind=kind)
    totals = Counter(bot for match in schedule for bot in match.bots)
    for total in set(totals.values()):  # bots of a 1-rotational form may play a few more
        group = {bot for bot, count in totals.items() if count == total}
        # Fewer tables to choose from than a round robin's: within one rotation group.
        assert widest_spread(schedule, bots, group) < table_size


def test_a_gauntlet_keeps_candidates_and_field_each_in_step() -> None:
    schedule = build_schedule(9, 4, 5, kind="gauntlet", candidates=3)
    assert widest_spread(schedule, 9, {0, 1, 2}) <= 2
    assert widest_spread(schedule, 9, set(range(3, 9))) <= 2


@pytest.mark.parametrize("duplicate", [True, False])
def test_tables_keep_their_numbers_ids_and_seeds_whatever_their_order(duplicate: bool) -> None:
    """A league stored before the order changed resumes with the very same matches."""
    n, k, seed = 7, 3, 41
    schedule = build_schedule(n, k, seed, duplicate=duplicate, cycles=2)
    combinations = list(itertools.combinations(range(n), k))
    for match in schedule:
        assert tuple(sorted(match.bots)) == combinations[match.table]
        assert match.match_id == f"c{match.cycle}-t{match.table + 1:05d}-r{match.rotation}"
        labels = (match.cycle, match.table) + (() if duplicate else (match.rotation,))
        assert match.seed == derive_seed(seed, "deal", *labels)
    # ... and are no longer played in that order.
    assert [m.table for m in schedule[:5]] != [0, 1, 2, 3, 4]
