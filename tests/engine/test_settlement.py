"""Settlement: going out (per card or flat, the kitty), short payers, blocked hands.

Fixed ante (1 per boodle card, 2 for the dealer) on the four boodle cards
A♠ K♥ Q♣ J♦ unless a test says otherwise; 40 starting chips.  So before play a
non-dealer has 36 chips and the dealer 32, and each boodle card carries
1 per non-dealer + 2.
"""

from __future__ import annotations

import pytest

from engine import Match
from engine.events import (
    ChipsPaid,
    HandBlocked,
    HandEnded,
    KittyWon,
    PotShared,
    StakePlaced,
    WentOut,
)

from .scripted import deal, lead, of_type, play_events, played, rules, start, stopped, won_boodle

# Seat 1 leads 2S, seat 0 follows 3S, seat 2 plays its only card 4S and goes out
# holding nothing; seat 0 keeps 5S 6S 7D (3 cards) and seat 1 9D 9H (2 cards).
OUT_IN_ONE_RUN = ("3S 5S 6S 7D", "2S 9D 9H", "4S")


def go_out(**options: object) -> Match:
    match = start(rules(hand_limit=1, **options), deal(*OUT_IN_ONE_RUN), dealer=0)
    lead(match, "2S")
    return match


def test_per_card_each_other_player_pays_one_chip_per_card_held() -> None:
    match = go_out()
    assert play_events(match.events())[3:] == [
        WentOut(2),
        ChipsPaid(0, 2, 3, 3),
        ChipsPaid(1, 2, 2, 2),
    ]
    assert match.outcome().chips == (32 - 3, 36 - 2, 36 + 5)


def test_flat_each_other_player_pays_one_chip() -> None:
    match = go_out(payment="flat")
    assert play_events(match.events())[3:] == [
        WentOut(2),
        ChipsPaid(0, 2, 1, 1),
        ChipsPaid(1, 2, 1, 1),
    ]
    assert match.outcome().chips == (31, 35, 38)


@pytest.mark.parametrize(("payment", "collected"), [("per_card", 5), ("flat", 2)])
def test_the_kitty_is_swept_by_whoever_goes_out(payment: str, collected: int) -> None:
    # kitty ante 2: each player stakes 4 (8 for the dealer) plus 2 to the kitty.
    match = go_out(kitty_ante=2, payment=payment)
    events = match.events()
    assert [e.kitty for e in of_type(events, StakePlaced)] == [2, 2, 2]
    assert play_events(events)[-1] == KittyWon(2, 6)
    assert match.kitty == 0
    assert match.outcome().chips[2] == 40 - 6 + collected + 6
    assert match.total_chips() == 120


def test_a_player_who_cannot_pay_in_full_pays_what_they_have() -> None:
    # One boodle card: a non-dealer antes 1 chip, the dealer 2; 2 chips each to start.
    # After the ante seat 0 (the dealer) has 0, seats 1 and 2 have 1.
    match = go_out(boodle_cards="AS", starting_chips=2)
    assert play_events(match.events())[3:] == [
        WentOut(2),
        ChipsPaid(0, 2, 0, 3),
        ChipsPaid(1, 2, 1, 2),
    ]
    assert match.outcome().chips == (0, 0, 2)
    assert match.boodle_stacks == (4,)
    assert match.total_chips() == 6


# -- blocked hands (only with change_or_pass) ------------------------------------------
#
# Four players, seat 0 deals, seat 1 leads 2H and 3H is dead.  Everyone then holds
# only hearts, so nobody can change suit: the hand is blocked.  Cards left:
# seat 0: 1, seat 1: 2, seat 2: 3, seat 3: 4.  Before play seat 0 has 32 chips,
# seats 1-3 have 36, and each boodle card carries 5.
FOUR = ("AH", "2H 7H 8H", "9H TH JH", "4H 5H QH KH")


def blocked(mode: str, *hands: str, dealer: int = 0, **options: object) -> Match:
    rule_set = rules(lead_suit="change_or_pass", blocked_hand=mode, hand_limit=1, **options)
    match = start(rule_set, deal(*hands), dealer=dealer)
    lead(match, "2H")
    return match


def test_blocked_nobody_pays() -> None:
    match = blocked("nobody_pays", *FOUR)
    events = match.events()
    assert play_events(events) == [
        played(1, "2H", lead=True),
        stopped("2H", "dead", "3H"),
        HandBlocked(),
    ]
    assert of_type(events, HandEnded)[0].winners == ()
    assert match.outcome().chips == (32, 36, 36, 36)
    assert match.boodle_stacks == (5, 5, 5, 5)


def test_blocked_fewest_flat_single_winner() -> None:
    match = blocked("fewest_flat", *FOUR)
    events = match.events()
    assert play_events(events)[2:] == [
        HandBlocked(),
        ChipsPaid(1, 0, 1, 1),
        ChipsPaid(2, 0, 1, 1),
        ChipsPaid(3, 0, 1, 1),
    ]
    assert of_type(events, HandEnded)[0].winners == (0,)
    assert match.outcome().chips == (35, 35, 35, 35)


def test_blocked_fewest_difference_single_winner() -> None:
    match = blocked("fewest_difference", *FOUR)
    events = match.events()
    assert play_events(events)[2:] == [
        HandBlocked(),
        ChipsPaid(1, 0, 1, 1),
        ChipsPaid(2, 0, 2, 2),
        ChipsPaid(3, 0, 3, 3),
    ]
    assert of_type(events, HandEnded)[0].winners == (0,)
    assert match.outcome().chips == (38, 35, 34, 33)


def test_blocked_fewest_difference_short_payers_pay_what_they_have() -> None:
    # One boodle card and 2 chips each: after the ante seat 0 has 0, the others 1.
    match = blocked("fewest_difference", *FOUR, boodle_cards="AS", starting_chips=2)
    assert play_events(match.events())[2:] == [
        HandBlocked(),
        ChipsPaid(1, 0, 1, 1),
        ChipsPaid(2, 0, 1, 2),
        ChipsPaid(3, 0, 1, 3),
    ]
    assert match.outcome().chips == (3, 0, 0, 0)
    assert match.boodle_stacks == (5,)


# Five players; the leader leads 2H (3H dead) and everyone holds only hearts.
# Seats 1 and 3 are left with 1 card each (the equal fewest); seats 0 and 2 hold
# 2, seat 4 holds 3.  Before play the dealer has 32 chips, the others 36.
FIVE_DEALER_0 = ("4H 5H", "2H 7H", "6H 9H", "8H", "TH JH QH")
# The same counts with seat 2 dealing, so seat 3 leads.
FIVE_DEALER_2 = ("4H 5H", "7H", "6H 9H", "2H 8H", "TH JH QH")


def test_blocked_fewest_flat_equal_fewest_divide_remainder_from_dealers_left() -> None:
    match = blocked("fewest_flat", *FIVE_DEALER_0, dealer=0)
    events = match.events()
    # pot of 3 divided by 2: the first winner clockwise from the dealer's left (seat 1) gets 2
    assert play_events(events)[2:] == [
        HandBlocked(),
        ChipsPaid(2, None, 1, 1),
        ChipsPaid(4, None, 1, 1),
        ChipsPaid(0, None, 1, 1),
        PotShared(1, 2),
        PotShared(3, 1),
    ]
    assert of_type(events, HandEnded)[0].winners == (1, 3)
    assert match.outcome().chips == (31, 38, 35, 37, 35)


def test_blocked_fewest_flat_remainder_follows_the_dealer() -> None:
    match = blocked("fewest_flat", *FIVE_DEALER_2, dealer=2)
    events = match.events()
    # clockwise from the left of dealer 2: seats 3, 4, 0, 1 -- seat 3 gets the odd chip
    assert play_events(events)[:2] == [played(3, "2H", lead=True), stopped("2H", "dead", "3H")]
    assert play_events(events)[2:] == [
        HandBlocked(),
        ChipsPaid(4, None, 1, 1),
        ChipsPaid(0, None, 1, 1),
        ChipsPaid(2, None, 1, 1),
        PotShared(3, 2),
        PotShared(1, 1),
    ]
    assert of_type(events, HandEnded)[0].winners == (3, 1)
    assert match.outcome().chips == (35, 37, 31, 38, 35)


def test_blocked_fewest_difference_equal_fewest_divide() -> None:
    match = blocked("fewest_difference", *FIVE_DEALER_0, dealer=0)
    # seats 2 and 0 hold 1 card more than the winners, seat 4 two more: pot 4, 2 each
    assert play_events(match.events())[2:] == [
        HandBlocked(),
        ChipsPaid(2, None, 1, 1),
        ChipsPaid(4, None, 2, 2),
        ChipsPaid(0, None, 1, 1),
        PotShared(1, 2),
        PotShared(3, 2),
    ]
    assert match.outcome().chips == (31, 38, 35, 38, 34)


def test_blocked_nobody_pays_stakes_carry_over_to_the_next_hand() -> None:
    # Hand 1 (seat 0 deals) is blocked; hand 2 (seat 1 deals): seat 2 leads A♠.
    first = deal("JH QH", "4H 7H", "9H")
    second = deal("3D", "4D", "AS 5D")
    match = start(rules(lead_suit="change_or_pass"), first, second, dealer=0)
    lead(match, "4H")
    assert match.hand_number == 2
    # hand 1 cost only the antes; hand 2's antes stack on top (dealer: seat 1)
    assert match.chips == (32 - 4, 36 - 8, 36 - 4)
    assert match.boodle_stacks == (8, 8, 8, 8)
    start_of_hand_2 = len(match.events())
    lead(match, "AS")
    assert play_events(match.events()[start_of_hand_2:]) == [
        played(2, "AS", lead=True),
        won_boodle(2, "AS", 8),
        stopped("AS", "top"),
    ]
    assert match.chips == (28, 28, 40)


def test_a_blocked_hand_leaves_the_kitty_for_the_next_hand() -> None:
    # Nobody goes out, so nobody sweeps the kitty (it goes to "the one who goes out").
    first = deal("JH QH", "4H 7H", "9H")
    second = deal("3D", "4D", "5D 6D")
    rule_set = rules(lead_suit="change_or_pass", blocked_hand="fewest_flat", kitty_ante=1)
    match = start(rule_set, first, second, dealer=0)
    lead(match, "4H")
    ended = of_type(match.events(), HandEnded)
    assert ended[0].winners == (1, 2)
    assert match.kitty == 3 + 3
    assert match.total_chips() == 120


def test_blocked_pot_too_small_for_every_winner_shares_zero_too() -> None:
    # Four players; seats 1, 2, 3 hold 1 card each, seat 0 holds 2 and pays the pot of 1.
    match = blocked("fewest_flat", "TH JH", "2H 7H", "8H", "9H")
    assert play_events(match.events())[2:] == [
        HandBlocked(),
        ChipsPaid(0, None, 1, 1),
        PotShared(1, 1),
        PotShared(2, 0),
        PotShared(3, 0),
    ]
    assert match.outcome().chips == (31, 37, 36, 36)
