"""Which suit may be led after a stop: any, change_or_same, change_or_pass.

Three players, seat 0 deals, seat 1 leads first; the boodle preset otherwise
(A♠ K♥ Q♣ J♦, aces high).  Seed 000/001's main rule is ``any``; their variation
and seed 004 say a different suit if possible, else the same; the other
variation and seeds 002/003 say a different suit if possible, else the lead
passes to the left, and if nobody holds another suit the hand is blocked.
"""

from __future__ import annotations

import pytest

from engine import DeadHandChoice, Decision, Match, Suit
from engine.events import ChipsPaid, HandBlocked, HandEnded, LeadPassed, WentOut

from .scripted import (
    cards,
    deal,
    lead,
    play_events,
    played,
    rules,
    start,
    stopped,
    won_boodle,
)

MODES = ["any", "change_or_same", "change_or_pass"]


def match_with(mode: str, *hands: str, dealer: int = 0) -> Match:
    return start(rules(lead_suit=mode, hand_limit=1), deal(*hands), dealer=dealer)


# After 4H stops (5H is dead), seat 1 still holds 7H and two clubs.
MIXED = ("6D 7D", "4H 7H 2C 9C", "3D 8D")


@pytest.mark.parametrize(
    ("mode", "legal"),
    [("any", "2C 7H"), ("change_or_same", "2C"), ("change_or_pass", "2C")],
)
def test_leader_holding_another_suit(mode: str, legal: str) -> None:
    match = match_with(mode, *MIXED)
    lead(match, "4H")
    assert play_events(match.events()) == [played(1, "4H", lead=True), stopped("4H", "dead", "5H")]
    assert match.current_seat() == 1
    assert match.legal_actions() == list(cards(legal))
    assert match.observation(1).stopped_suit is Suit.HEARTS


# After 4H stops, seat 1 holds only 7H.
ONLY_HEARTS = ("6D 7D", "4H 7H", "3D 8D")


@pytest.mark.parametrize("mode", ["any", "change_or_same"])
def test_leader_holding_only_the_stopped_suit_leads_it(mode: str) -> None:
    match = match_with(mode, *ONLY_HEARTS)
    lead(match, "4H")
    assert match.current_seat() == 1
    assert match.legal_actions() == list(cards("7H"))


def test_change_or_pass_passes_the_lead_to_the_left() -> None:
    match = match_with("change_or_pass", *ONLY_HEARTS)
    lead(match, "4H")
    assert play_events(match.events()) == [
        played(1, "4H", lead=True),
        stopped("4H", "dead", "5H"),
        LeadPassed(1, 2),
    ]
    assert match.current_seat() == 2
    assert match.legal_actions() == list(cards("3D"))
    # 3D then 4D is dead: seat 2 holds only diamonds (8D); seat 0 to its left holds
    # only diamonds too, so the lead passes over seat 0 to seat 1 (clockwise, wrapping).
    lead(match, "3D")
    assert play_events(match.events())[3:] == [
        played(2, "3D", lead=True),
        stopped("3D", "dead", "4D"),
        LeadPassed(2, 1),
    ]
    assert match.current_seat() == 1
    assert match.legal_actions() == list(cards("7H"))


def test_change_or_pass_passes_over_several_players() -> None:
    # five players; after 4H stops, seats 1, 2 and 3 hold only hearts.
    hands = ("6D", "4H 7H", "9H TH", "JH", "2C 3H")
    match = match_with("change_or_pass", *hands)
    lead(match, "4H")
    assert play_events(match.events()) == [
        played(1, "4H", lead=True),
        stopped("4H", "dead", "5H"),
        LeadPassed(1, 4),
    ]
    assert match.current_seat() == 4
    # the new leader must also change suit: 3H may not be led
    assert match.legal_actions() == list(cards("2C"))


@pytest.mark.parametrize("mode", MODES)
def test_the_change_rule_also_follows_a_stop_at_the_top_card(mode: str) -> None:
    # seat 1 leads TH; seat 2 follows JH QH KH AH, then holds 3H and 4D.
    match = match_with(mode, "5D", "TH 2C", "3H JH QH KH AH 4D")
    lead(match, "TH")
    assert play_events(match.events()) == [
        played(1, "TH", lead=True),
        played(2, "JH"),
        played(2, "QH"),
        played(2, "KH"),
        won_boodle(2, "KH", 4),
        played(2, "AH"),
        stopped("AH", "top"),
    ]
    assert match.current_seat() == 2
    expected = "4D 3H" if mode == "any" else "4D"
    assert match.legal_actions() == list(cards(expected))


@pytest.mark.parametrize("mode", MODES)
def test_the_first_lead_of_a_hand_is_free(mode: str) -> None:
    # Hand 1: 4H stops (5H dead), then seat 1 goes out with 2C.  Hand 2 (seat 1
    # deals): seat 2 leads and may lead hearts, the suit of hand 1's last stop.
    first = deal("5D 6D", "4H 2C", "9D")
    second = deal("4S", "5S", "3H 3C")
    match = start(rules(lead_suit=mode), first, second, dealer=0)
    lead(match, "4H", "2C")
    assert match.hand_number == 2
    assert match.current_seat() == 2
    assert match.legal_actions() == list(cards("3C 3H"))


def test_blocked_when_nobody_holds_another_suit() -> None:
    match = match_with("change_or_pass", "JH QH", "4H 7H", "9H")
    lead(match, "4H")
    events = match.events()
    assert play_events(events) == [
        played(1, "4H", lead=True),
        stopped("4H", "dead", "5H"),
        HandBlocked(),
    ]
    assert [e.winners for e in events if isinstance(e, HandEnded)] == [()]
    # blocked_hand=nobody_pays (seed 000): the chips are as they were after the ante
    assert match.outcome().chips == (32, 36, 36)
    assert match.boodle_stacks == (4, 4, 4, 4)


@pytest.mark.parametrize("mode", ["any", "change_or_same"])
def test_other_modes_never_block(mode: str) -> None:
    match = match_with(mode, "JH QH", "4H 7H", "9H")
    lead(match, "4H")
    assert not match.is_over
    assert match.current_seat() == 1
    assert match.legal_actions() == list(cards("7H"))
    lead(match, "7H")  # seat 1's last card
    assert play_events(match.events())[2:] == [
        played(1, "7H", lead=True),
        WentOut(1),
        ChipsPaid(2, 1, 1, 1),
        ChipsPaid(0, 1, 2, 2),
    ]


# -- what a seat is told about the stopped suit ---------------------------------------


def test_observation_stopped_suit_follows_the_runs() -> None:
    match = match_with("change_or_pass", *MIXED)
    assert match.observation(1).stopped_suit is None  # no run yet this hand
    lead(match, "4H")
    assert [match.observation(s).stopped_suit for s in range(3)] == [Suit.HEARTS] * 3
    lead(match, "2C")  # 3C dead
    assert match.observation(0).stopped_suit is Suit.CLUBS


def test_observation_stopped_suit_is_none_before_the_first_run_of_a_hand() -> None:
    # Hand 1: 4H stops (5H dead), seat 1 goes out with 2C.  Hand 2 begins with the
    # dealer's dead-hand decision: no run has been played in hand 2.
    first = deal("5D 6D", "4H 2C", "9D")
    second = deal("4S", "5S", "3H 3C")
    rule_set = rules(lead_suit="change_or_same", dead_hand_exchange="exchange")
    match = start(rule_set, first, second, dealer=0)
    match.apply(DeadHandChoice.KEEP)
    lead(match, "4H", "2C")
    assert match.hand_number == 2
    assert match.decision is Decision.DEAD_HAND
    assert match.observation(1).played == ()
    assert match.observation(1).stopped_suit is None
