"""Play: leads, forced follows, stops, who leads next, boodle captures, going out.

Every deal here is written by hand; ``dead=None`` puts every card no seat holds
in the dead hand.  Unless a test says otherwise the rules are the boodle preset
(seed 000: aces high, boodle cards A♠ K♥ Q♣ J♦, fixed ante 1 per card and 2 for
the dealer, any suit after a stop) for 3 players, with seat 0 dealing: seat 1
leads first.  Before play seat 0 has 40 - 8 = 32 chips, seats 1 and 2 have
40 - 4 = 36, and each boodle card carries 1 + 1 + 2 = 4 chips.
"""

from __future__ import annotations

import pytest

from engine import CARDS, Card, Decision, IllegalActionError, Match, Rules
from engine.events import CardsDealt, ChipsPaid, HandEnded, HandStarted, WentOut

from .scripted import (
    card,
    cards,
    deal,
    lead,
    of_type,
    play_events,
    played,
    rules,
    start,
    stopped,
    won_boodle,
)

ONE_HAND = rules(hand_limit=1)


def boodle_match(*hands: str, dealer: int = 0, rule_set: Rules = ONE_HAND) -> Match:
    return start(rule_set, deal(*hands), dealer=dealer)


def test_the_player_left_of_the_dealer_leads_first() -> None:
    match = boodle_match("3C", "4C", "5C", dealer=0)
    assert (match.current_seat(), match.decision) == (1, Decision.LEAD)
    match = boodle_match("3C", "4C", "5C", dealer=2)
    assert match.current_seat() == 0
    four = start(ONE_HAND, deal("3C", "4C", "5C", "6C"), dealer=3)
    assert four.current_seat() == 0
    assert four.events()[0] == HandStarted(1, 3)


def test_a_lead_is_the_lowest_card_held_in_the_chosen_suit() -> None:
    match = boodle_match("3C 8D", "4H 9H 2C KS 7C", "5D 6D")
    assert match.legal_actions() == list(cards("2C 4H KS"))
    for not_lowest in ("9H", "7C"):
        with pytest.raises(IllegalActionError):
            lead(match, not_lowest)
    with pytest.raises(IllegalActionError):
        lead(match, "5D")  # not held by the leader
    assert match.current_seat() == 1


def test_forced_follows_are_played_by_the_engine_in_any_seat_order() -> None:
    match = boodle_match("6H 4D", "4H 7H 2C", "5H 3D")
    lead(match, "4H")
    assert play_events(match.events()) == [
        played(1, "4H", lead=True),
        played(2, "5H"),
        played(0, "6H"),
        played(1, "7H"),
        stopped("7H", "dead", "8H"),
    ]
    # seat 1 played the last card, so seat 1 leads again, with its one card left
    assert match.current_seat() == 1
    assert match.legal_actions() == [card("2C")]
    assert match.hand_sizes() == (1, 1, 1)
    assert match.played_cards() == cards("4H 5H 6H 7H")
    assert match.hand_of(0) == cards("4D")


def test_a_run_stops_after_the_ace_with_aces_high() -> None:
    match = boodle_match("AH 6D", "QH 2C 3C", "KH 5D")
    lead(match, "QH")
    assert play_events(match.events()) == [
        played(1, "QH", lead=True),
        played(2, "KH"),
        won_boodle(2, "KH", 4),
        played(0, "AH"),
        stopped("AH", "top"),
    ]
    assert match.current_seat() == 0  # the last player to play leads
    assert match.legal_actions() == [card("6D")]


def test_a_run_stops_after_the_king_with_aces_low() -> None:
    aces_low = rules(hand_limit=1, rank_order="aces_low")
    match = boodle_match("AH 6D", "QH 2C 3C", "KH 5D", rule_set=aces_low)
    lead(match, "QH")
    assert play_events(match.events()) == [
        played(1, "QH", lead=True),
        played(2, "KH"),
        won_boodle(2, "KH", 4),
        stopped("KH", "top"),
    ]
    assert match.current_seat() == 2
    assert match.hand_of(0) == cards("6D AH")  # the Ace does not follow the King


def test_a_lone_top_card_led_stops_at_once() -> None:
    match = boodle_match("3D", "AH 2C", "4D")
    lead(match, "AH")
    assert play_events(match.events()) == [played(1, "AH", lead=True), stopped("AH", "top")]
    assert match.current_seat() == 1


def test_with_aces_low_the_ace_is_the_lowest_card_and_runs_into_the_two() -> None:
    high = boodle_match("8D", "AC 5C 9D", "2C 3C 7D")
    assert high.legal_actions() == list(cards("5C 9D"))
    lead(high, "5C")
    assert play_events(high.events()) == [played(1, "5C", lead=True), stopped("5C", "dead", "6C")]

    low = boodle_match("8D", "AC 5C 9D", "2C 3C 7D", rule_set=rules(rank_order="aces_low"))
    assert low.legal_actions() == list(cards("AC 9D"))
    lead(low, "AC")
    assert play_events(low.events()) == [
        played(1, "AC", lead=True),
        played(2, "2C"),
        played(2, "3C"),
        stopped("3C", "dead", "4C"),
    ]
    assert low.current_seat() == 2


def test_a_run_stops_at_a_card_in_the_dead_hand() -> None:
    match = boodle_match("9C 3D", "7C 4D", "8C 5D")
    lead(match, "7C")
    assert play_events(match.events()) == [
        played(1, "7C", lead=True),
        played(2, "8C"),
        played(0, "9C"),
        stopped("9C", "dead", "TC"),
    ]
    assert match.current_seat() == 0


def test_a_run_stops_at_a_card_played_earlier_in_the_hand() -> None:
    match = boodle_match("4H 8D TD", "5H 6H 2C QD", "3C 2H 3H 9D")
    lead(match, "5H")  # 5H 6H (both seat 1), 7H is dead
    assert match.legal_actions() == list(cards("2C QD"))
    lead(match, "2C")  # 2C, 3C (seat 2), 4C is dead
    assert match.current_seat() == 2
    assert match.legal_actions() == list(cards("9D 2H"))
    lead(match, "2H")  # 2H 3H (seat 2), 4H (seat 0), then 5H was played
    assert play_events(match.events()) == [
        played(1, "5H", lead=True),
        played(1, "6H"),
        stopped("6H", "dead", "7H"),
        played(1, "2C", lead=True),
        played(2, "3C"),
        stopped("3C", "dead", "4C"),
        played(2, "2H", lead=True),
        played(2, "3H"),
        played(0, "4H"),
        stopped("4H", "played", "5H"),
    ]
    assert match.current_seat() == 0
    assert match.legal_actions() == list(cards("8D"))


def test_michigan_without_a_dead_hand_stops_only_at_the_ace_or_a_played_card() -> None:
    # seed 001: no extra hand; all 52 cards are in the players' hands.
    clubs = " ".join(r + "C" for r in "23456789TJQKA")
    hearts = " ".join(r + "H" for r in "23456789TJQKA")
    seat0 = clubs + " 6D 7D 8D 9D TD"
    seat1 = "2D 3D 4D 5D JD QD KD AD 2S 3S 4S 5S 6S 7S 8S 9S TS"
    seat2 = hearts + " JS QS KS AS"
    match = start(rules("michigan", hand_limit=1), deal(seat0, seat1, seat2), dealer=2)
    (dealt,) = of_type(match.events(), CardsDealt)
    assert dealt.hand_sizes == (18, 17, 17)
    assert dealt.dead_hand_size == 0
    assert match.current_seat() == 0
    lead(match, "6D")
    assert match.legal_actions() == list(cards("2D 2S"))
    lead(match, "2D")
    assert play_events(match.events()) == [
        played(0, "6D", lead=True),
        played(0, "7D"),
        played(0, "8D"),
        played(0, "9D"),
        played(0, "TD"),
        played(1, "JD"),
        played(1, "QD"),
        played(1, "KD"),
        played(1, "AD"),
        stopped("AD", "top"),
        played(1, "2D", lead=True),
        played(1, "3D"),
        played(1, "4D"),
        played(1, "5D"),
        stopped("5D", "played", "6D"),
    ]
    assert match.current_seat() == 1
    assert match.legal_actions() == [card("2S")]


def test_a_boodle_card_played_mid_run_is_captured_at_once() -> None:
    match = boodle_match("JC KC AC 4D", "9C 2D", "TC QC 3D")
    lead(match, "9C")
    assert play_events(match.events()) == [
        played(1, "9C", lead=True),
        played(2, "TC"),
        played(0, "JC"),
        played(2, "QC"),
        won_boodle(2, "QC", 4),
        played(0, "KC"),
        played(0, "AC"),
        stopped("AC", "top"),
    ]
    assert match.chips == (32, 36, 40)
    # boodle cards A♠ K♥ Q♣ J♦: only the Q♣ stack was taken
    assert match.boodle_stacks == (4, 4, 0, 4)


def test_a_boodle_card_led_is_captured_by_the_leader() -> None:
    match = boodle_match("3D", "AS 2D", "4D")
    lead(match, "AS")
    assert play_events(match.events()) == [
        played(1, "AS", lead=True),
        won_boodle(1, "AS", 4),
        stopped("AS", "top"),
    ]
    assert match.chips == (32, 40, 36)
    assert match.boodle_stacks == (0, 4, 4, 4)


def test_going_out_mid_run_ends_the_hand_at_once() -> None:
    hands = ("3S 5S 6S 7D", "2S 9D 9H", "4S")
    match = boodle_match(*hands)
    lead(match, "2S")
    events = match.events()
    assert play_events(events) == [
        played(1, "2S", lead=True),
        played(0, "3S"),
        played(2, "4S"),  # seat 2's last card: 5S and 6S are never played
        WentOut(2),
        ChipsPaid(0, 2, 3, 3),
        ChipsPaid(1, 2, 2, 2),
    ]
    dealt = {card(t) for hand in hands for t in hand.split()}
    ended = [e for e in events if isinstance(e, HandEnded)]
    assert ended == [
        HandEnded(
            hands=(cards("7D 5S 6S"), cards("9D 9H"), ()),
            dead_hand=tuple(c for c in CARDS if c not in dealt),
            winners=(2,),
        )
    ]
    assert match.is_over
    assert match.outcome().chips == (32 - 3, 36 - 2, 36 + 5)


def test_going_out_on_a_boodle_card_captures_it_first() -> None:
    match = boodle_match("AH 5D", "QH 3D 4D", "KH")
    lead(match, "QH")
    assert play_events(match.events()) == [
        played(1, "QH", lead=True),
        played(2, "KH"),
        won_boodle(2, "KH", 4),
        WentOut(2),
        ChipsPaid(0, 2, 2, 2),
        ChipsPaid(1, 2, 2, 2),
    ]
    assert match.outcome().chips == (30, 34, 36 + 4 + 4)
    assert match.boodle_stacks == (4, 0, 4, 4)


def test_going_out_on_a_lead() -> None:
    match = boodle_match("3D 4D", "9S", "5D 6D 7D")
    lead(match, "9S")
    assert play_events(match.events()) == [
        played(1, "9S", lead=True),
        WentOut(1),
        ChipsPaid(2, 1, 3, 3),
        ChipsPaid(0, 1, 2, 2),
    ]
    assert match.outcome().chips == (30, 41, 33)


def test_the_leader_plays_the_card_led_not_another() -> None:
    match = boodle_match("6H 4D", "4H 7H 2C", "5H 3D")
    lead(match, "2C")  # 3C is dead
    assert play_events(match.events()) == [played(1, "2C", lead=True), stopped("2C", "dead", "3C")]
    assert match.hand_of(1) == cards("4H 7H")
    assert Card.parse("2C") in match.played_cards()


def test_one_suit_boodle_cards_are_each_captured_in_one_run() -> None:
    # seed 004's Michigan note: A K Q J of one suit; 4 chips on each.
    rule_set = rules(boodle_cards="AH,KH,QH,JH", hand_limit=1)
    match = start(rule_set, deal("QH 2D", "TH AH 3D", "JH KH 4D"), dealer=0)
    lead(match, "TH")
    assert play_events(match.events()) == [
        played(1, "TH", lead=True),
        played(2, "JH"),
        won_boodle(2, "JH", 4),
        played(0, "QH"),
        won_boodle(0, "QH", 4),
        played(2, "KH"),
        won_boodle(2, "KH", 4),
        played(1, "AH"),
        won_boodle(1, "AH", 4),
        stopped("AH", "top"),
    ]
    assert match.boodle_stacks == (0, 0, 0, 0)
    assert match.chips == (36, 40, 44)
