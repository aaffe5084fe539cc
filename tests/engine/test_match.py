"""The match: eliminations, dividing an eliminated player's chips, the dealer's
rotation, the end (players left or hand limit), final places, chips conserved.

The scripted matches use the boodle preset (fixed ante: 1 chip per boodle card,
2 for the dealer, on A♠ K♥ Q♣ J♦, so a non-dealer needs 4 chips and the dealer 8)
with 20 starting chips unless a test says otherwise.  Every chip count is
worked out in the comments from the rules, hand by hand.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from engine import PRESETS, DeadHandChoice, Decision, Match, NewmarketError, Rules, preset
from engine.deal import first_dealer
from engine.events import (
    CardPlayed,
    CardsDealt,
    ChipsPaid,
    Event,
    HandStarted,
    MatchEnded,
    PlayerEliminated,
    StakePlaced,
)
from engine.outcome import Outcome

from .scripted import deal, lead, of_type, rules, stake_all, start

HEARTS = " ".join(r + "H" for r in "23456789TJQKA")
SPADES_BUT_3 = " ".join(r + "S" for r in "2456789TJQKA")


def after(events: list[Event], marker: Event) -> list[Event]:
    return events[events.index(marker) :]


def test_a_non_dealer_who_cannot_pay_is_out_and_their_chips_are_divided() -> None:
    # Hand 1, seat 0 deals: chips 12 16 16 16, 5 on each boodle card.  Seat 1 leads
    # its only card; seat 2 pays for 14 cards (2 left), seats 3 and 0 one each.
    # After hand 1: seat 0 11, seat 1 16+16=32, seat 2 2, seat 3 15.
    first = deal("4S", "2C", HEARTS + " 2D", "3S")
    # Hand 2, seat 1 deals; seat 2 (2 chips < 4) is out before the deal, its 2 chips go
    # one each clockwise from its left: seat 3, seat 0 (seat 1 gets the 0 remainder).
    # Antes: seat 3 16-4=12, seat 0 12-4=8, seat 1 32-8=24.  Seat 3 leads (seat 2 is
    # skipped) and goes out; seats 0 and 1 pay 1 each: 14, 7, 23.
    second = deal("3H", "4H", "", "2C")
    match = start(rules(starting_chips=20, end_players=1), first, second, dealer=0)
    lead(match, "2C")
    events = match.events()
    assert after(events, PlayerEliminated(2, 2, ((3, 1), (0, 1))))[:5] == [
        PlayerEliminated(2, 2, ((3, 1), (0, 1))),
        HandStarted(2, 1),
        StakePlaced(3, (1, 1, 1, 1), 0),
        StakePlaced(0, (1, 1, 1, 1), 0),
        StakePlaced(1, (2, 2, 2, 2), 0),
    ]
    assert match.live == (True, True, False, True)
    assert match.chips == (8, 24, 0, 12)
    assert match.boodle_stacks == (9, 9, 9, 9)
    assert (match.current_seat(), match.decision) == (3, Decision.LEAD)
    lead(match, "2C")
    # Hand 3: the deal passes from seat 1 over seat 2 (out) to seat 3.
    events = match.events()
    hand_3 = after(events, HandStarted(3, 3))
    assert of_type(hand_3, StakePlaced) == [
        StakePlaced(0, (1, 1, 1, 1), 0),
        StakePlaced(1, (1, 1, 1, 1), 0),
        StakePlaced(3, (2, 2, 2, 2), 0),
    ]
    # the seeded deal skips the eliminated seat: 3 players + a dead hand, 13 each
    (dealt,) = of_type(hand_3, CardsDealt)
    assert dealt.hand_sizes == (13, 13, 0, 13)
    assert dealt.dead_hand_size == 13
    assert match.chips == (3, 19, 0, 6)
    assert match.current_seat() == 0
    assert match.total_chips() == 80


def test_the_odd_chips_of_an_eliminated_seat_start_at_its_left_not_the_dealers_left() -> None:
    # SPEC 10.2 and 10.8: the remainder goes clockwise from the eliminated seat's left.
    # Here that seat (3) is not the dealer's left (1), so the two readings differ.
    # Hand 1, seat 3 deals: chips 16 16 16 12.  Seat 0 leads its only card and goes
    # out; seat 2 pays for 14 cards, seats 1 and 3 one each.
    # After hand 1: seat 0 16+16=32, seat 1 15, seat 2 2, seat 3 11.
    first = deal("2C", "3S", HEARTS + " 2D", "4S")
    match = start(rules(starting_chips=20, end_players=1), first, dealer=3)
    lead(match, "2C")
    # Hand 2, seat 0 deals; seat 2 (2 chips < 4) is out before the deal.  Its 2 chips go
    # one each to seats 3 and 0 (from its left), not to seats 1 and 3 (the dealer's left).
    (eliminated,) = of_type(match.events(), PlayerEliminated)
    assert eliminated == PlayerEliminated(2, 2, ((3, 1), (0, 1)))
    assert after(match.events(), eliminated)[1] == HandStarted(2, 0)
    # antes of hand 2: seat 1 15-4, seat 3 11+1-4, seat 0 (dealer) 32+1-8
    assert match.chips == (25, 11, 0, 8)
    assert match.total_chips() == 80


def test_an_eliminated_dealer_passes_the_deal_on_and_the_next_dealer_is_checked() -> None:
    # Five players.  Hand 1, seat 0 deals: chips 12 16 16 16 16, 6 on each card.
    # Seat 1 leads 2C, seat 3 plays 3C, its only card, and goes out.  Seat 4 pays 1,
    # seat 0 pays 1, seat 1 pays 11, seat 2 pays 11:
    # after hand 1: seat 0 11, seat 1 5, seat 2 5, seat 3 40, seat 4 15.
    first = deal(
        "KD",
        "2C 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH",
        "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS",
        "3C",
        "AD",
    )
    match = start(rules(starting_chips=20), first, dealer=0)
    lead(match, "2C")
    assert of_type(match.events(), ChipsPaid) == [
        ChipsPaid(4, 3, 1, 1),
        ChipsPaid(0, 3, 1, 1),
        ChipsPaid(1, 3, 11, 11),
        ChipsPaid(2, 3, 11, 11),
    ]
    # Hand 2 would be dealt by seat 1, who has 5 < 8: out; 5 chips over seats 2 3 4 0,
    # the odd chip to seat 2.  The deal passes to seat 2, now with 7 < 8: out; 7 chips
    # over seats 3 4 0, the odd chip to seat 3.  Seat 3 (44 chips) deals.
    events = match.events()
    assert after(events, PlayerEliminated(1, 5, ((2, 2), (3, 1), (4, 1), (0, 1))))[:3] == [
        PlayerEliminated(1, 5, ((2, 2), (3, 1), (4, 1), (0, 1))),
        PlayerEliminated(2, 7, ((3, 3), (4, 2), (0, 2))),
        HandStarted(2, 3),
    ]
    assert match.live == (True, False, False, True, True)
    # antes: seat 4 18-4, seat 0 14-4, seat 3 44-8
    assert match.chips == (10, 0, 0, 36, 14)
    assert match.boodle_stacks == (10, 10, 10, 10)
    (dealt,) = of_type(after(events, HandStarted(2, 3)), CardsDealt)
    assert dealt.hand_sizes == (13, 0, 0, 13, 13)
    assert match.current_seat() == 4
    assert match.total_chips() == 100


def test_the_dealers_double_ante_decides_elimination() -> None:
    # Seat 1 will deal hand 2 with 6 chips: enough for a non-dealer, not for the dealer.
    # Hand 1 (seat 0 deals): seat 1 leads 2C, seat 2 plays 3C (its only card), goes out;
    # seat 0 pays 1, seat 1 pays 10 (16 - 10 = 6).
    first = deal("KD", "2C 2H 3H 4H 5H 6H 7H 8H 9H TH JH", "3C")
    match = start(rules(starting_chips=20, end_players=1), first, dealer=0)
    lead(match, "2C")
    # seat 1 out with 6 chips: 3 each to seats 2 and 0; seat 2 (16 + 11 + 3 = 30) deals
    events = match.events()
    assert after(events, PlayerEliminated(1, 6, ((2, 3), (0, 3))))[:2] == [
        PlayerEliminated(1, 6, ((2, 3), (0, 3))),
        HandStarted(2, 2),
    ]
    assert match.chips == (11 + 3 - 4, 0, 30 - 8)


def test_the_match_ends_when_end_players_are_left_simultaneous_eliminations_share_a_place() -> None:
    # Four players.  Hand 1, seat 0 deals: chips 12 16 16 16.  Seat 1 leads its only
    # card; seats 2 and 3 pay 14 each (2 left), seat 0 pays 1 (11 left), so seat 1
    # has 16 + 14 + 14 + 1 = 45.
    first = deal("3S", "2C", HEARTS + " 2D", SPADES_BUT_3 + " 3D 4D")
    match = start(rules(starting_chips=20), first, dealer=0)
    lead(match, "2C")
    # Before hand 2 seats 2 and 3 (2 chips each, need 4) are out together; each
    # one's 2 chips go 1 and 1 to seats 0 and 1.  Two players left: the match ends.
    events = match.events()
    assert after(events, PlayerEliminated(2, 2, ((0, 1), (1, 1)))) == [
        PlayerEliminated(2, 2, ((0, 1), (1, 1))),
        PlayerEliminated(3, 2, ((0, 1), (1, 1))),
        MatchEnded((2, 1, 3, 3), (13, 47, 0, 0), "players_left"),
    ]
    assert match.is_over
    assert match.outcome() == Outcome(
        places=(2, 1, 3, 3),
        chips=(13, 47, 0, 0),
        starting_chips=(20, 20, 20, 20),
        hands_played=1,
        reason="players_left",
        eliminated=((2, 2), (3, 2)),
    )


def test_simultaneous_eliminations_rank_by_chips_at_elimination() -> None:
    # As above but seat 3 pays 13 and keeps 3: it places above seat 2 (2 chips).
    # Seat 2's 2 chips: 1 to seat 0, 1 to seat 1 (clockwise from seat 3, seat 3 out);
    # seat 3's 3 chips: 2 to seat 0, 1 to seat 1.  Seat 0 11+3 = 14, seat 1 44+2 = 46.
    first = deal("3S", "2C", HEARTS + " 2D", SPADES_BUT_3 + " 3D")
    match = start(rules(starting_chips=20), first, dealer=0)
    lead(match, "2C")
    assert of_type(match.events(), PlayerEliminated) == [
        PlayerEliminated(2, 2, ((0, 1), (1, 1))),
        PlayerEliminated(3, 3, ((0, 2), (1, 1))),
    ]
    assert match.outcome().places == (2, 1, 4, 3)
    assert match.outcome().chips == (14, 46, 0, 0)


def test_later_elimination_places_better() -> None:
    # Hand 1 (seat 0 deals): as in the first test; seat 2 is out before hand 2.
    first = deal("4S", "2C", HEARTS + " 2D", "3S")
    # Hand 2 (seat 1 deals; chips 8 24 0 12): seat 3 leads 2C and goes out; seat 0
    # pays 7 (1 left), seat 1 pays 1: seat 0 1, seat 1 23, seat 3 20.
    second = deal("2H 3H 4H 5H 6H 7H 8H", "9H", "", "2C")
    match = start(rules(starting_chips=20, hand_limit=5), first, second, dealer=0)
    lead(match, "2C")
    lead(match, "2C")
    # Before hand 3 seat 0 (1 chip) is out; its chip goes to seat 1.  Two left: over.
    assert match.outcome() == Outcome(
        places=(3, 1, 4, 2),
        chips=(0, 24, 0, 20),
        starting_chips=(20, 20, 20, 20),
        hands_played=2,
        reason="players_left",
        eliminated=((2, 2), (0, 3)),
    )
    assert match.total_chips() == 80
    assert match.boodle_stacks == (9, 9, 9, 9)


def test_the_last_survivor_with_end_players_one() -> None:
    # stops preset (seed 004): 4 spread + 1 kitty each, aces low, end_players 1.
    # 10 chips each: 5 left after the stake.  Seat 1 goes out at once; seats 2 and 0
    # owe 20 each and pay their 5.  Both are out before hand 2 with 0 chips: they
    # share 2nd place; seat 1 has 5 + 10 + the kitty of 3 = 18.
    twenty = "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH 2D 3D 4D 5D 6D 7D 8D"
    other = "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS 9D TD JD QD KD AD 6C"
    match = start(rules("stops", starting_chips=10), deal(twenty, "5C", other), dealer=0)
    stake_all(match, (4, 0, 0, 0), (4, 0, 0, 0), (4, 0, 0, 0))
    lead(match, "5C")
    events = match.events()
    assert after(events, PlayerEliminated(0, 0, ())) == [
        PlayerEliminated(0, 0, ()),
        PlayerEliminated(2, 0, ()),
        MatchEnded((2, 1, 2), (0, 18, 0), "players_left"),
    ]
    assert match.outcome().reason == "players_left"
    assert match.total_chips() == 30


def test_the_match_ends_at_the_hand_limit_ranked_by_chips_ties_share() -> None:
    # A blocked hand, nobody pays (seed 000): chips stay 32 36 36 36 after the ante.
    rule_set = rules(lead_suit="change_or_pass", hand_limit=1)
    match = start(rule_set, deal("AH", "2H 7H 8H", "9H TH JH", "4H 5H QH KH"), dealer=0)
    lead(match, "2H")
    assert match.outcome() == Outcome(
        places=(4, 1, 1, 1),
        chips=(32, 36, 36, 36),
        starting_chips=(40, 40, 40, 40),
        hands_played=1,
        reason="hand_limit",
        eliminated=(),
    )
    assert match.events()[-1] == MatchEnded((4, 1, 1, 1), (32, 36, 36, 36), "hand_limit")


def test_the_hand_limit_counts_hands() -> None:
    # Two scripted hands, each over at the first lead; the limit of 2 stops the match.
    first = deal("3D", "2C", "4D")  # seat 1 goes out: seats 2, 0 pay 1 each
    second = deal("5D", "6D", "2C")  # seat 1 deals, seat 2 goes out
    match = start(rules(hand_limit=2), first, second, dealer=0)
    lead(match, "2C")
    assert not match.is_over
    assert match.hand_number == 2
    lead(match, "2C")
    # hand 1: 31 38 35; hand 2 antes 4 8 4 -> 27 30 31, then seat 2 takes 1 + 1
    assert match.outcome() == Outcome(
        places=(3, 2, 1),
        chips=(26, 29, 33),
        starting_chips=(40, 40, 40),
        hands_played=2,
        reason="hand_limit",
        eliminated=(),
    )


def test_first_dealer_is_drawn_from_the_seed_and_the_deal_rotates() -> None:
    dealers = set()
    for seed in range(40):
        match = Match(Rules(), 5, seed)
        first = match.events()[0]
        assert isinstance(first, HandStarted)
        assert first == HandStarted(1, first_dealer(seed, 5))
        assert Match(Rules(), 5, seed).events()[0] == first  # same seed, same dealer
        dealers.add(first.dealer)
    assert dealers == {0, 1, 2, 3, 4}
    # seat 2 deals: seat 0 (its left, clockwise) leads first
    match = start(rules(), deal("3D 5D", "2C 6D", "4D 2S"), dealer=2)
    assert match.events()[0] == HandStarted(1, 2)
    assert match.current_seat() == 0
    lead(match, "3D")  # 4D is seat 2's, 5D seat 0's, 6D seat 1's, 7D dead
    assert match.current_seat() == 1


def test_outcome_before_the_end_is_an_error() -> None:
    match = start(rules(), deal("3D", "2C", "4D"), dealer=0)
    with pytest.raises(NewmarketError):
        match.outcome()


# -- whole random matches --------------------------------------------------------------


def random_match(rule_set: Rules, players: int, seed: int) -> tuple[Match, list[Any]]:
    match = Match(rule_set, players, seed)
    rng = random.Random(seed)
    total = match.total_chips()
    assert total == players * rule_set.starting_chips
    actions: list[Any] = []
    while not match.is_over:
        seat = match.current_seat()
        assert seat is not None and match.live[seat]  # an eliminated seat never acts
        legal = match.legal_actions()
        action = legal[rng.randrange(len(legal))]
        actions.append(action)
        match.apply(action)
        assert match.total_chips() == total
        assert min(match.chips) >= 0
        assert min(match.boodle_stacks) >= 0 and match.kitty >= 0
    return match, actions


VARIANTS = {
    **{name: preset(name) for name in PRESETS},
    "auction": rules(dead_hand_exchange="exchange_or_auction", starting_chips=12),
    "purchase": rules("stops", dead_hand_exchange="purchase", hand_limit=30),
    "blocked": rules("newmarket", blocked_hand="fewest_flat", kitty_ante=1),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
@pytest.mark.parametrize(("players", "seed"), [(3, 11), (5, 12), (8, 13)])
def test_chips_are_conserved_across_a_whole_match(name: str, players: int, seed: int) -> None:
    rule_set = VARIANTS[name]
    match, _ = random_match(rule_set, players, seed)
    outcome = match.outcome()
    starting = players * rule_set.starting_chips
    assert sum(outcome.chips) + sum(match.boodle_stacks) + match.kitty == starting
    ended = match.events()[-1]
    assert ended == MatchEnded(outcome.places, outcome.chips, outcome.reason)
    assert outcome.hands_played <= rule_set.hand_limit
    if outcome.reason == "players_left":
        assert sum(match.live) <= rule_set.end_players
    else:
        assert outcome.reason == "hand_limit"
        assert outcome.hands_played == rule_set.hand_limit
    # eliminated seats hold no chips; places run from 1
    for seat, _hand in outcome.eliminated:
        assert not match.live[seat]
        assert outcome.chips[seat] == 0
    assert min(outcome.places) == 1


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_the_same_seed_and_decisions_replay_card_for_card(name: str) -> None:
    rule_set = VARIANTS[name]
    match, actions = random_match(rule_set, 4, 21)
    replay = Match(rule_set, 4, 21)
    for action in actions:
        replay.apply(action)
    assert replay.events() == match.events()
    assert replay.outcome() == match.outcome()


def test_everybody_out_at_once_share_the_last_place_and_keep_nothing() -> None:
    # 3 chips on each of 4 cards for everyone, dealer included, out of 12: all have 0.
    # Hand 1 is blocked and nobody pays; nobody can stake for hand 2.
    rule_set = rules(
        ante_per_card=3, dealer_ante_per_card=3, starting_chips=12, lead_suit="change_or_pass"
    )
    match = start(rule_set, deal("JH QH", "4H 7H", "9H"), dealer=0)
    assert match.chips == (0, 0, 0)
    lead(match, "4H")
    assert of_type(match.events(), PlayerEliminated) == [
        PlayerEliminated(0, 0, ()),
        PlayerEliminated(1, 0, ()),
        PlayerEliminated(2, 0, ()),
    ]
    assert match.outcome() == Outcome(
        places=(1, 1, 1),
        chips=(0, 0, 0),
        starting_chips=(12, 12, 12),
        hands_played=1,
        reason="players_left",
        eliminated=((0, 2), (1, 2), (2, 2)),
    )
    assert match.boodle_stacks == (9, 9, 9, 9)


def test_events_since_an_event_count_are_the_new_events() -> None:
    match = start(rules(), deal("JC KC AC 4D", "9C 2D", "TC QC 3D"), dealer=0)
    count = match.event_count()
    seen = match.events()
    lead(match, "9C")  # a run of 6 cards with a boodle capture in the middle
    assert match.events(since=count) == match.events()[len(seen) :]
    assert len(match.events(since=count)) == 8
    for viewer in (0, 1, 2):
        assert match.events(viewer=viewer, since=count) == match.events(viewer=viewer)[len(seen) :]
    assert match.events(since=match.event_count()) == []


def test_a_clone_is_independent() -> None:
    match = start(rules(), deal("JC KC AC 4D", "9C 2D", "TC QC 3D"), dealer=0)
    original = (match.events(), match.chips, match.hand_sizes(), match.current_seat())
    other = match.clone()
    lead(other, "9C")
    assert (match.events(), match.chips, match.hand_sizes(), match.current_seat()) == original
    assert other.chips == (32, 36, 40)
    lead(match, "9C")
    assert match.events() == other.events()
    assert match.observation(0) == other.observation(0)


# -- determinization (Match.redeal_hidden) ----------------------------------------------


def test_a_redealt_clone_keeps_what_the_seat_knows() -> None:
    rule_set = rules(dead_hand_exchange="exchange")
    match = start(rule_set, deal("6H 4D 9S", "4H 2C 3S", "5H 3D 8S"), dealer=0)
    match.apply(DeadHandChoice.EXCHANGE)  # seat 0 knows its old hand is dead
    lead(match, "4H")
    for k in range(30):
        for seat in (0, 1, 2):
            other = match.redeal_hidden(seat, random.Random(k))
            assert other.observation(seat) == match.observation(seat)
            assert other.hand_of(seat) == match.hand_of(seat)
            assert other.hand_sizes() == match.hand_sizes()
            assert len(other.dead_hand()) == len(match.dead_hand())
            assert set(match.observation(seat).known_dead) <= set(other.dead_hand())
            assert other.played_cards() == match.played_cards()
            assert other.total_chips() == match.total_chips()


def test_a_redealt_clone_reports_who_really_plays() -> None:
    match = start(rules(), deal("6H 4D 9S", "4H 2C 3S", "5H 3D 8S"), dealer=0)
    for k in range(50):
        other = match.redeal_hidden(1, random.Random(k))
        holder = {card: seat for seat in range(3) for card in other.hand_of(seat)}
        lead(other, "4H")
        for event in of_type(other.events(), CardPlayed):
            assert event.seat == holder[event.card], (k, event)
        for seat, card in other.observation(1).played:
            assert seat == holder[card], (k, seat, card)
