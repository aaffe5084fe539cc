"""The duplicate format and score: known inputs, and the engine keeping deals identical."""

from __future__ import annotations

import random

import pytest

from engine import Match, preset
from engine.events import E_DEAL
from referee.scoring.duplicate import (
    ALTERNATE,
    ROTATE,
    GroupMatch,
    bridge_scores,
    candidate_seats,
    deep_chips,
    fixed_hands,
    forfeit_nets,
    relative_score,
    seat_diffs,
)
from referee.scoring.luck import luck
from referee.scoring.policies import POLICIES, play_match


def test_a_seat_is_compared_with_the_other_holders_of_its_cards() -> None:
    # Two bots, two matches of one hand; in match 1 they swap seats.
    group = [
        GroupMatch(["a", "b"], [6, -6], 1),
        GroupMatch(["b", "a"], [2, -2], 1),
    ]
    diffs = seat_diffs(group)
    # seat 0 won 6 with a and 2 with b; seat 1 lost 6 with b and 2 with a.
    assert diffs == [[4.0, -4.0], [-4.0, 4.0]]
    assert bridge_scores(group) == {"a": 4.0, "b": -4.0}


@pytest.mark.parametrize("players", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("layout", [ROTATE, ALTERNATE])
def test_every_seat_is_held_by_both_sides_of_a_group(layout: str, players: int) -> None:
    seatings = candidate_seats(layout, players)
    assert len(seatings) == (players if layout == ROTATE else 2)
    for seat in range(players):
        held = [seat in mine for mine in seatings]
        assert any(held) and not all(held)  # a candidate and a baseline held these cards
    if layout == ALTERNATE:  # each seat exactly once by each side, neighbours on opposite sides
        assert sorted(seatings[0] + seatings[1]) == list(range(players))
        assert all(seat + 1 not in seatings[0] for seat in seatings[0])
    with pytest.raises(ValueError, match="layout"):
        candidate_seats("teams", players)


def test_the_alternate_layout_scores_each_seat_against_its_other_holder() -> None:
    # Four seats, candidates "c" at 0 and 2, then at 1 and 3, on the same cards.
    group = [
        GroupMatch(["c", "b", "c", "b"], [4, -1, 2, -5], 1),
        GroupMatch(["b", "c", "b", "c"], [2, 1, 0, -3], 1),
    ]
    # seats 0 and 2: c won 4 and 2 where b won 2 and 0; seats 1 and 3: c 1 and -3, b -1 and -5.
    assert bridge_scores(group) == {"c": 2.0, "b": -2.0}


def test_scores_are_per_hand_zero_sum_and_need_two_matches() -> None:
    group = [
        GroupMatch([0, 1, 2], [9, 0, -9], 3),
        GroupMatch([1, 2, 0], [3, 3, -6], 3),
        GroupMatch([2, 0, 1], [0, 6, -6], 3),
    ]
    scores = bridge_scores(group)
    assert sum(scores.values()) == pytest.approx(0.0)
    # bot 0: seat 0 in r0 (9 vs mean(3, 0)), seat 2 in r1 (-6 vs mean(-9, -6)),
    # seat 1 in r2 (6 vs mean(0, 3)); per hand, / 3.
    expected = ((9 - 1.5) + (-6 + 7.5) + (6 - 1.5)) / 3 / 3
    assert scores[0] == pytest.approx(expected)
    assert bridge_scores(group[:1]) == {}
    with pytest.raises(ValueError, match="two matches"):
        seat_diffs(group[:1])


def test_luck_is_subtracted_and_cancels_within_a_duplicate_group() -> None:
    plain = [GroupMatch(["a", "b", "b"], [5, 0, -5], 2), GroupMatch(["b", "a", "b"], [1, 1, -2], 2)]
    lucky = [
        GroupMatch(m.holders, m.nets, m.hands, luck=[4, -1, -3]) for m in plain
    ]  # the same seed: the same luck in every match
    assert seat_diffs(lucky) == seat_diffs(plain)
    single = GroupMatch(["a", "b", "c"], [6, 0, -6], 2, luck=[6, 0, -6])
    assert relative_score(single, 0) == 0.0  # exactly what the reference won: no skill shown
    assert relative_score(GroupMatch(["a", "b", "c"], [6, 0, -6], 2), 0) == pytest.approx(4.5)


def test_fixed_hands_keeps_every_rotation_dealt_the_same_cards_to_the_end() -> None:
    rules = fixed_hands(preset("boodle"), 12)
    assert rules.hand_limit == 12 and rules.starting_chips == deep_chips(preset("boodle"), 12)
    seed = 4242
    deals = []
    for rotation in range(4):
        # A different random player at each seat in each rotation: a worst case for stacks.
        rng = [random.Random(f"{rotation}/{s}") for s in range(4)]
        match = play_match(rules, seed, [POLICIES["random"]] * 4, rng)
        outcome = match.outcome()
        assert outcome.hands_played == 12 and outcome.eliminated == ()
        deals.append([raw for raw in match.raw_events() if raw[0] == E_DEAL])
    assert len(deals[0]) == 12
    assert all(d == deals[0] for d in deals[1:])
    # The session format, by contrast, eliminates players with the preset's 40 chips.
    session = Match(preset("boodle"), 4, seed)
    while not session.is_over:
        session.apply(session.legal_actions()[0])
    assert session.outcome().eliminated


def test_fixed_hands_refuses_no_hands() -> None:
    with pytest.raises(ValueError, match="at least one hand"):
        fixed_hands(preset("boodle"), 0)


def test_luck_is_the_reference_replay_of_the_seed_and_costs_no_bot() -> None:
    rules = fixed_hands(preset("boodle"), 6)
    first = luck(rules, 4, 77)
    assert first == luck(rules, 4, 77)  # a pure function of (rules, players, seed)
    assert first != luck(rules, 4, 78)
    assert sum(first) <= 0  # chips left on the boodle cards belong to nobody yet


def test_a_disqualified_seat_counts_no_more_than_its_table_s_worst_player() -> None:
    # The default policy's winnings for a disqualified seat are capped at the lowest net
    # of the seats that played; its losses stand; a table of disqualified seats is kept.
    assert forfeit_nets([30, -10, 5, -25], [True, False, False, False]) == [-25, -10, 5, -25]
    assert forfeit_nets([-40, -10, 5, 45], [True, False, False, False]) == [-40, -10, 5, 45]
    assert forfeit_nets([3, -3], [True, True]) == [3, -3]
    assert forfeit_nets([3, -3], [False, False]) == [3, -3]
    with pytest.raises(ValueError, match="one disqualified flag per seat"):
        forfeit_nets([1, 2], [True])
