"""Per-seat starting chips: ``Match(..., chips=)``.

A bankroll league carries each bot's own chips to its next table, so seats may
start unequal.  The boodle preset's fixed ante is 1 chip per boodle card (4 in
all) for a non-dealer and 2 per card (8) for the dealer; a player going out is
paid 1 chip per card left in each other hand.
"""

from __future__ import annotations

import random

import pytest

from engine import Match, NewmarketError, preset
from engine.events import HandStarted, MatchEnded, PlayerEliminated, StakePlaced
from engine.position import build_match, position_of

from .scripted import deal, lead, rules


def unequal_match() -> Match:
    # Seat 0 deals.  Seat 1 holds only 2C, leads it and goes out; seats 2 and 0
    # hold one card each and pay 1 chip each.  Every other card is dead.
    return Match(
        rules(hand_limit=1),
        3,
        0,
        dealer=0,
        deals=[deal("3D", "2C", "4D")],
        chips=(10, 30, 50),
    )


def test_unequal_stacks_pay_their_antes_from_their_own_chips() -> None:
    match = unequal_match()
    # Antes: dealer seat 0 pays 8 (10 -> 2), seats 1 and 2 pay 4 (30 -> 26, 50 -> 46).
    assert match.starting_chips == (10, 30, 50)
    assert match.chips == (2, 26, 46)
    assert match.observation(2).chips == (2, 26, 46)
    assert match.total_chips() == 90
    assert [e for e in match.events() if isinstance(e, StakePlaced)] == [
        StakePlaced(1, (1, 1, 1, 1), 0),
        StakePlaced(2, (1, 1, 1, 1), 0),
        StakePlaced(0, (2, 2, 2, 2), 0),
    ]


def test_net_chips_are_measured_against_each_seats_own_start() -> None:
    match = unequal_match()
    lead(match, "2C")
    # Seat 1 takes 1 from seat 2 (46 -> 45) and 1 from seat 0 (2 -> 1): 28.
    outcome = match.outcome()
    assert outcome.chips == (1, 28, 45)
    assert outcome.starting_chips == (10, 30, 50)
    assert outcome.net_chips == (-9, -2, -5)
    assert outcome.places == (3, 2, 1)
    assert match.events()[-1] == MatchEnded((3, 2, 1), (1, 28, 45), "hand_limit")
    assert match.total_chips() == 90


def test_the_default_is_the_rules_starting_chips_for_every_seat() -> None:
    match = Match(preset("boodle"), 4, 7)
    assert match.starting_chips == (40, 40, 40, 40)
    assert Match(preset("boodle"), 4, 7, chips=[40] * 4).events() == match.events()


def test_a_seat_starting_below_its_stake_is_out_before_the_first_deal() -> None:
    # Seat 0 deals.  Seat 1 has 3 chips but owes 4: out before the deal, its 3 chips
    # go one each clockwise from its left (seats 2, 3, 0).  Seat 3 with exactly 4 plays.
    match = Match(rules(), 4, 0, dealer=0, deals=[deal("3D", "", "2C", "4D")], chips=(40, 3, 40, 4))
    events = match.events()
    assert events[:2] == [PlayerEliminated(1, 3, ((2, 1), (3, 1), (0, 1))), HandStarted(1, 0)]
    assert match.live == (True, False, True, True)
    # Antes after the shares: seat 0 41 - 8, seat 2 41 - 4, seat 3 5 - 4.
    assert match.chips == (33, 0, 37, 1)
    assert match.total_chips() == 87


def test_a_dealer_starting_below_the_dealers_stake_is_out_and_the_deal_passes() -> None:
    # Seat 0 would deal but has 5 chips, less than the dealer's 8: out; 5 chips to
    # seats 1, 2, 3 as 2, 2, 1.  Seat 1 deals the first hand instead.
    match = Match(rules(), 4, 0, dealer=0, chips=(5, 40, 40, 40))
    assert match.events()[:2] == [
        PlayerEliminated(0, 5, ((1, 2), (2, 2), (3, 1))),
        HandStarted(1, 1),
    ]
    assert match.dealer == 1
    assert match.live == (False, True, True, True)


def test_too_few_seats_able_to_pay_end_the_match_before_any_hand() -> None:
    match = Match(rules(), 3, 0, chips=(0, 0, 40))
    assert match.is_over
    outcome = match.outcome()
    assert outcome.hands_played == 0
    assert outcome.reason == "players_left"
    assert outcome.chips == (0, 0, 40)
    assert outcome.net_chips == (0, 0, 0)
    assert outcome.places[2] == 1


@pytest.mark.parametrize(
    ("chips", "problem"),
    [
        ((40, 40), "2 entries for 3 seats"),
        ((40, 40, 40, 40), "4 entries for 3 seats"),
        ((40, -1, 40), "seat 1"),
        ((40, 40, 2.5), "seat 2"),
        ((True, 40, 40), "seat 0"),
        ((40, "40", 40), "seat 1"),
        ("404", "sequence"),
        (40, "sequence"),
    ],
)
def test_bad_starting_chips_are_refused_naming_the_argument(chips: object, problem: str) -> None:
    with pytest.raises(NewmarketError, match=r"^chips: .*" + problem):
        Match(preset("boodle"), 3, 0, chips=chips)  # type: ignore[arg-type]


def test_clones_and_positions_keep_the_starting_chips() -> None:
    rng = random.Random(5)
    match = Match(preset("boodle"), 4, 11, chips=(12, 80, 40, 28))
    for _ in range(20):
        match.apply(rng.choice(match.legal_actions()))
    position = position_of(match)
    assert position.starting_chips == (12, 80, 40, 28)
    rebuilt = build_match(position)
    copy = match.clone()
    for other in (copy, rebuilt):
        assert other.starting_chips == (12, 80, 40, 28)
    while not copy.is_over:
        copy.apply(rng.choice(copy.legal_actions()))
    outcome = copy.outcome()
    assert outcome.starting_chips == (12, 80, 40, 28)
    assert sum(outcome.net_chips) + sum(copy.boodle_stacks) + copy.kitty == 0
