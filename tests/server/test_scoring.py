"""The leaderboard's score: the leagues' batch fit of duplicate chips per hand, without a server."""

from __future__ import annotations

import dataclasses
import random

import pytest

from referee.scoring.duplicate import GroupMatch, forfeit_nets
from referee.scoring.fit import equations
from referee.scoring.intervals import Bootstrap, bootstrap
from referee.server.scoring import BOOTSTRAP, MIN_GROUPS, SEED, Leaderboard, score_versions
from referee.server.store import PlayedMatch

HANDS = 10


def play_group(
    group_id: int,
    table: list[int],
    strength: dict[int, float],
    rng: random.Random,
    own_seeds: bool = False,
) -> list[PlayedMatch]:
    """A rotation group of ``table``: every version holds every seat once, on one deal.

    A seat's chips per hand are the value of its cards (the same in every rotation
    of a duplicate group) plus its holder's strength minus the table's mean strength
    (chips change hands: the table sums to zero), plus a little noise.  ``own_seeds``
    deals each rotation its own cards, as the remote table does.
    """
    n = len(table)
    cards = [rng.gauss(0, 3) for _ in range(n)]
    played = []
    for rotation in range(n):
        if own_seeds:
            cards = [rng.gauss(0, 3) for _ in range(n)]
        holders = tuple(table[(seat + rotation) % n] for seat in range(n))
        total = sum(strength[v] for v in holders)
        per_hand = [
            cards[s] - sum(cards) / n + strength[v] - total / n + rng.gauss(0, 0.3)
            for s, v in enumerate(holders)
        ]
        nets = tuple(round(value * HANDS) for value in per_hand)
        seed = group_id * 100 + (rotation if own_seeds else 0)
        played.append(PlayedMatch(group_id, rotation, seed, holders, nets, HANDS))
    return played


STRENGTH = {1: 3.0, 2: 2.0, 3: 1.0, 4: -1.0, 5: -2.0, 6: -3.0}


def test_the_score_is_true_strength_even_when_strong_versions_only_meet_strong_ones() -> None:
    # The scheduler seats neighbours on the leaderboard together: version 1 never meets 4-6.
    rng = random.Random(5)
    played: list[PlayedMatch] = []
    tables = [[1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]]
    for group in range(40):
        played += play_group(group, tables[group % 4], STRENGTH, rng)
    board = score_versions(played, list(STRENGTH))
    for version, strength in STRENGTH.items():
        score = board[version].score
        assert score is not None and score == pytest.approx(strength, abs=0.15)
        low, high = board[version].low, board[version].high
        assert low is not None and high is not None
        assert low <= strength + 0.15 and high >= strength - 0.15
    assert [board[v].rank for v in STRENGTH] == [1, 2, 3, 4, 5, 6]
    # A mean over its groups would have given version 1 about +1.5: it only met 2 and 3.
    assert board[1].score is not None and board[1].score > 2.5


def test_clear_gaps_have_tight_rank_intervals_and_new_versions_have_none() -> None:
    rng = random.Random(6)
    played: list[PlayedMatch] = []
    for group in range(30):
        played += play_group(group, [1, 2, 3], {1: 2.0, 2: 0.0, 3: -2.0}, rng)
    played += play_group(99, [1, 2, 7], {1: 2.0, 2: 0.0, 7: 0.0}, rng)  # 7: one group so far
    board = score_versions(played, [1, 2, 3, 7, 8])
    assert board[1].rank_low == board[1].rank_high == 1
    assert board[3].rank_low == board[3].rank_high == 3
    assert board[7].groups == 1 < MIN_GROUPS and board[7].score is not None
    assert board[7].low is None and board[7].width == float("inf")  # new: no interval yet
    assert board[8].score is None and board[8].rank == 5 and board[8].matches == 0  # never played
    assert (board[1].groups, board[1].matches) == (31, 93)


def test_a_remote_tables_rotations_with_their_own_deals_still_rank_the_versions() -> None:
    rng = random.Random(7)
    played: list[PlayedMatch] = []
    for group in range(60):
        played += play_group(group, [1, 2, 3], {1: 1.5, 2: 0.0, 3: -1.5}, rng, own_seeds=True)
    board = score_versions(played, [1, 2, 3])
    assert [board[v].rank for v in (1, 2, 3)] == [1, 2, 3]
    assert board[1].score == pytest.approx(1.5, abs=0.5)


def test_a_version_disqualified_in_every_match_is_scored_last() -> None:
    # A version that crashed at every start had its seats played by the referee's default
    # policy; given that policy winning chips, the leaderboard still puts it last (its
    # seats count at most the lowest of their tables' players), as places would.
    rng = random.Random(8)
    played: list[PlayedMatch] = []
    for group in range(30):
        for match in play_group(group, [1, 2, 3], {1: 0.0, 2: 1.0, 3: -1.0}, rng):
            seat = match.versions.index(1)
            nets = list(match.net_chips)
            nets[seat] += 40  # what the default policy won in version 1's seat
            out = tuple(version == 1 for version in match.versions)
            played.append(dataclasses.replace(match, net_chips=tuple(nets), disqualified=out))
    board = score_versions(played, [1, 2, 3])
    ranked = sorted(board, key=lambda version: board[version].rank)
    assert ranked == [2, 3, 1]
    uncapped = score_versions([dataclasses.replace(m, disqualified=()) for m in played], [1, 2, 3])
    assert min(uncapped, key=lambda version: uncapped[version].rank) == 1  # what it was before


def batch_board(played: list[PlayedMatch], versions: list[int]) -> Bootstrap:
    """The leaderboard's fit as it was computed before the summaries: every group's own
    equations, in (group, seed) order, and the batch bootstrap over them."""
    everyone = sorted({v for match in played for v in match.versions} | set(versions))
    index = {version: i for i, version in enumerate(everyone)}
    by_deal: dict[tuple[int, int], list[GroupMatch[int]]] = {}
    for match in played:
        nets = [float(net) for net in match.net_chips]
        if match.disqualified:
            nets = forfeit_nets(nets, match.disqualified)
        holders = [index[version] for version in match.versions]
        by_deal.setdefault((match.group_id, match.seed), []).append(
            GroupMatch(holders, nets, match.hands)
        )
    groups = [equations(matches) for _deal, matches in sorted(by_deal.items())]
    return bootstrap(len(everyone), groups, resamples=BOOTSTRAP, seed=SEED)


def test_results_added_as_they_arrive_give_the_batch_fits_leaderboard() -> None:
    # Duplicate groups and remote ones (each rotation its own deal), one group left
    # unfinished, one version disqualified now and then; the results arrive interleaved,
    # as tables finish, and the leaderboard fed one at a time is the batch fit's.
    rng = random.Random(11)
    strength = {1: 1.0, 2: 0.5, 3: 0.0, 4: -0.5, 5: -1.0}
    tables = [[1, 2, 3], [2, 3, 4], [3, 4, 5], [1, 3, 5], [1, 2, 4, 5]]
    played: list[PlayedMatch] = []
    for group in range(25):
        matches = play_group(group, tables[group % 5], strength, rng, own_seeds=group % 3 == 0)
        if group % 7 == 0:
            matches = [
                dataclasses.replace(m, disqualified=tuple(v == 4 for v in m.versions))
                for m in matches
            ]
        played += matches[:-1] if group == 24 else matches
    arriving = played[:]
    random.Random(12).shuffle(arriving)
    board = Leaderboard()
    for match in arriving:
        board.add(match)
    versions = list(strength)
    scores = board.scores(versions)
    reference = batch_board(played, versions)
    for i, version in enumerate(sorted(strength)):
        score = scores[version]
        assert score.score == pytest.approx(reference.strength[i], abs=1e-12)
        assert score.low == pytest.approx(reference.low[i], abs=1e-12)
        assert score.high == pytest.approx(reference.high[i], abs=1e-12)
        assert (score.rank_low, score.rank_high) == (reference.rank_low[i], reference.rank_high[i])
    at_once = score_versions(played, versions)  # and in one pass, in stored order
    for version in versions:
        a, b = dataclasses.asdict(scores[version]), dataclasses.asdict(at_once[version])
        assert a == pytest.approx(b, abs=1e-12)
    assert board.matches == len(played) and board.fit.groups == len(
        {(m.group_id, m.seed) for m in played}
    )
    # Version 1: five groups at each of three tables, one rotation of the last one missing.
    assert scores[1].groups == 15 and scores[1].matches == 5 * 3 + 5 * 3 + 5 * 4 - 1


def test_a_long_competitions_finished_groups_leave_only_their_summaries() -> None:
    # Past the summaries' exact range the leaderboard keeps no match of a finished group:
    # what it holds grows with the layouts played, not with the matches.
    rng = random.Random(13)
    board = Leaderboard()
    tables = [[1, 2, 3], [2, 3, 4], [1, 3, 4], [1, 2, 4]]
    for group in range(2100):
        for match in play_group(group, tables[group % 4], {1: 1, 2: 0, 3: 0, 4: -1}, rng):
            board.add(match)
    assert not board.fit.draws_groups and board.fit.groups == 2100
    assert board.fit.classes <= 4 * 2  # each table, in its two seating orders at most
    assert board.fit.open_groups == 0
    scores = board.scores([1, 2, 3, 4])
    assert scores[1].rank == 1 and scores[4].rank == 4
    low, high = scores[1].low, scores[1].high
    assert low is not None and high is not None and 0 < high - low < 0.1
