"""The deal and the dead hand: dealing modes, exchange, auction, purchase, secrecy.

Seeded deals are dealt one card at a time clockwise from the dealer's left,
the dead hand taking its turn after the dealer, so with seat 0 dealing the
extra cards go to seats 1, 2, ... first.  The scripted tests use the boodle
preset (fixed ante: the dealer has 32 chips before play, the others 36).
"""

from __future__ import annotations

import pytest

from engine import (
    CARDS,
    Bid,
    Card,
    DeadHandChoice,
    Decision,
    IllegalActionError,
    MalformedActionError,
    Match,
    NewmarketError,
)
from engine.events import (
    BidsRevealed,
    CardsDealt,
    ChipsPaid,
    DeadHandDecided,
    HandEnded,
    HandSwapped,
    KittyWon,
    WentOut,
)

from .scripted import (
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

# -- dealing modes ---------------------------------------------------------------------

# Hand sizes by seat with seat 0 dealing, and the dead hand's size (worked out from
# 52 cards dealt round the table; see the module docstring).
ROUND_ROBIN = {
    3: ((13, 13, 13), 13),
    4: ((10, 11, 11, 10), 10),
    5: ((8, 9, 9, 9, 9), 8),
    6: ((7, 8, 8, 8, 7, 7), 7),
    7: ((6, 7, 7, 7, 7, 6, 6), 6),
    8: ((5, 6, 6, 6, 6, 6, 6, 6), 5),
}
NO_DEAD_HAND = {
    3: ((17, 18, 17), 0),
    4: ((13, 13, 13, 13), 0),
    5: ((10, 11, 11, 10, 10), 0),
    6: ((8, 9, 9, 9, 9, 8), 0),
    7: ((7, 8, 8, 8, 7, 7, 7), 0),
    8: ((6, 7, 7, 7, 7, 6, 6, 6), 0),
}
# equal hands: 52 // (players + 1) each, the dead hand takes its share and the over-cards
EQUAL_HANDS = {
    3: ((13, 13, 13), 13),
    4: ((10, 10, 10, 10), 12),
    5: ((8, 8, 8, 8, 8), 12),
    6: ((7, 7, 7, 7, 7, 7), 10),
    7: ((6, 6, 6, 6, 6, 6, 6), 10),
    8: ((5, 5, 5, 5, 5, 5, 5, 5), 12),
}


def dealt(match: Match) -> CardsDealt:
    (event,) = of_type(match.events(), CardsDealt)
    return event


@pytest.mark.parametrize(
    ("options", "table"),
    [
        ({}, ROUND_ROBIN),
        ({"dead_hand": "false"}, NO_DEAD_HAND),
        ({"dealing": "equal_hands"}, EQUAL_HANDS),
    ],
    ids=["round_robin", "no_dead_hand", "equal_hands"],
)
@pytest.mark.parametrize("players", [3, 4, 5, 6, 7, 8])
@pytest.mark.parametrize("seed", [1, 2, 99])
def test_seeded_deal_sizes(
    options: dict[str, object],
    table: dict[int, tuple[tuple[int, ...], int]],
    players: int,
    seed: int,
) -> None:
    match = Match(rules(**options), players, seed, dealer=0)
    sizes, dead_size = table[players]
    event = dealt(match)
    assert event.hand_sizes == sizes
    assert event.dead_hand_size == dead_size
    assert match.hand_sizes() == sizes
    assert len(match.dead_hand()) == dead_size
    every = [c for seat in range(players) for c in match.hand_of(seat)] + list(match.dead_hand())
    assert sorted(every) == sorted(CARDS)


def test_the_extra_cards_go_first_to_the_dealers_left() -> None:
    match = Match(rules(), 4, seed=5, dealer=2)
    assert dealt(match).hand_sizes == (11, 10, 10, 11)
    match = Match(rules(dead_hand="false"), 5, seed=5, dealer=3)
    assert dealt(match).hand_sizes == (11, 10, 10, 10, 11)


def test_the_dead_hand_is_seen_by_nobody_until_the_hand_ends() -> None:
    match = start(rules(hand_limit=1), deal("3D 4D", "9S", "5D 6D 7D"), dealer=0)
    for seat in range(3):
        (seen,) = of_type(match.events(viewer=seat), CardsDealt)
        assert seen.dead_hand is None
        assert seen.hands[seat] is not None
        assert [h is None for h in seen.hands] == [s != seat for s in range(3)]
        assert match.observation(seat).dead_hand_size == 46
    (everything,) = of_type(match.events(), CardsDealt)
    assert everything.dead_hand is not None and len(everything.dead_hand) == 46
    lead(match, "9S")  # seat 1 goes out
    held = set(cards("3D 4D 9S 5D 6D 7D"))
    dead = tuple(c for c in CARDS if c not in held)
    for viewer in (None, 0, 1, 2):
        (ended,) = of_type(match.events(viewer=viewer), HandEnded)
        assert ended == HandEnded((cards("3D 4D"), (), cards("5D 6D 7D")), dead, (1,))


# -- exchange (seed 000 variation) -------------------------------------------------------

# Seat 0 deals; everything but these six cards is in the dead hand (46 cards).
SWAP_DEAL = ("3C 9S", "2C 5D", "7H 8H")
SWAP_HELD = set(cards("3C 9S 2C 5D 7H 8H"))
SWAP_DEAD = tuple(c for c in CARDS if c not in SWAP_HELD)


def test_exchange_dealer_may_keep() -> None:
    match = start(rules(dead_hand_exchange="exchange"), deal(*SWAP_DEAL), dealer=0)
    assert (match.current_seat(), match.decision) == (0, Decision.DEAD_HAND)
    assert match.legal_actions() == [DeadHandChoice.EXCHANGE, DeadHandChoice.KEEP]
    match.apply(DeadHandChoice.KEEP)
    assert of_type(match.events(), DeadHandDecided) == [DeadHandDecided(0, "keep")]
    assert of_type(match.events(), HandSwapped) == []
    assert match.hand_of(0) == cards("3C 9S")
    assert match.current_seat() == 1
    lead(match, "2C")  # 3C is still the dealer's
    assert play_events(match.events()) == [
        played(1, "2C", lead=True),
        played(0, "3C"),
        stopped("3C", "dead", "4C"),
    ]


def test_exchange_swaps_unseen_and_the_old_hand_becomes_the_dead_hand() -> None:
    match = start(rules(dead_hand_exchange="exchange"), deal(*SWAP_DEAL), dealer=0)
    before = match.observation(0)
    assert before.hand == cards("3C 9S")
    assert before.known_dead == ()
    assert before.dead_hand_size == 46
    match.apply(DeadHandChoice.EXCHANGE)
    assert of_type(match.events(), DeadHandDecided) == [DeadHandDecided(0, "exchange")]
    assert of_type(match.events(), HandSwapped) == [HandSwapped(0, 0, None, SWAP_DEAD, 46)]
    # the new hand is shown to the dealer only
    assert of_type(match.events(viewer=0), HandSwapped) == [HandSwapped(0, 0, None, SWAP_DEAD, 46)]
    assert of_type(match.events(viewer=1), HandSwapped) == [HandSwapped(0, 0, None, None, 46)]
    assert match.hand_of(0) == SWAP_DEAD
    assert match.dead_hand() == cards("3C 9S")
    assert match.hand_sizes() == (46, 2, 2)
    assert match.chips == (32, 36, 36)  # a free exchange
    after = match.observation(0)
    assert after.hand == SWAP_DEAD
    assert after.known_dead == cards("3C 9S")
    assert after.dead_hand_size == 2
    assert match.observation(1).known_dead == ()
    assert match.observation(2).known_dead == ()
    # the dealer's old 3C is now dead: 2C stops at once
    assert match.current_seat() == 1
    lead(match, "2C")
    assert play_events(match.events()) == [played(1, "2C", lead=True), stopped("2C", "dead", "3C")]


# -- exchange or auction (seed 000 variation) -----------------------------------------


def auction_match(dealer: int = 0, **options: object) -> Match:
    rule_set = rules(dead_hand_exchange="exchange_or_auction", **options)
    return start(rule_set, deal(*SWAP_DEAL), dealer=dealer)


def test_exchange_or_auction_offers_all_three() -> None:
    match = auction_match()
    assert match.legal_actions() == [
        DeadHandChoice.AUCTION,
        DeadHandChoice.EXCHANGE,
        DeadHandChoice.KEEP,
    ]


def test_exchange_or_auction_keep_and_exchange() -> None:
    match = auction_match()
    match.apply(DeadHandChoice.KEEP)
    assert match.hand_of(0) == cards("3C 9S")
    assert match.decision is Decision.LEAD
    match = auction_match()
    match.apply(DeadHandChoice.EXCHANGE)
    assert match.hand_of(0) == SWAP_DEAD
    assert match.dead_hand() == cards("3C 9S")


def test_auction_with_sealed_bids_highest_pays_the_dealer_and_swaps() -> None:
    match = auction_match()
    match.apply(DeadHandChoice.AUCTION)
    assert (match.current_seat(), match.decision) == (1, Decision.BID)
    assert match.legal_actions() == [Bid(n) for n in range(37)]  # 36 chips held
    match.apply(Bid(5))
    # sealed: nothing revealed, nothing paid, until every bidder has bid
    assert match.current_seat() == 2
    assert of_type(match.events(), BidsRevealed) == []
    assert match.observation(2).chips == (32, 36, 36)
    match.apply(Bid(7))
    events = match.events()
    assert of_type(events, DeadHandDecided) == [DeadHandDecided(0, "auction")]
    assert of_type(events, BidsRevealed) == [BidsRevealed(((1, 5), (2, 7)))]
    assert of_type(events, HandSwapped) == [HandSwapped(2, 7, 0, SWAP_DEAD, 46)]
    assert of_type(match.events(viewer=0), HandSwapped) == [HandSwapped(2, 7, 0, None, 46)]
    assert match.chips == (32 + 7, 36, 36 - 7)
    assert match.hand_of(2) == SWAP_DEAD
    assert match.dead_hand() == cards("7H 8H")
    assert match.hand_of(0) == cards("3C 9S")  # the dealer keeps their hand
    assert match.observation(2).known_dead == cards("7H 8H")
    assert match.observation(0).known_dead == ()
    assert match.total_chips() == 120
    # play starts left of the dealer as usual
    assert (match.current_seat(), match.decision) == (1, Decision.LEAD)


def test_auction_tie_goes_to_the_first_bidder_clockwise_from_the_dealers_left() -> None:
    match = auction_match()
    match.apply(DeadHandChoice.AUCTION)
    match.apply(Bid(6))
    match.apply(Bid(6))
    assert of_type(match.events(), HandSwapped) == [HandSwapped(1, 6, 0, SWAP_DEAD, 46)]
    assert match.chips == (38, 30, 36)


def test_auction_tie_with_another_dealer() -> None:
    # seat 1 deals: seat 2 bids first, then seat 0
    match = auction_match(dealer=1)
    match.apply(DeadHandChoice.AUCTION)
    assert match.current_seat() == 2
    match.apply(Bid(3))
    assert match.current_seat() == 0
    match.apply(Bid(3))
    assert of_type(match.events(), BidsRevealed) == [BidsRevealed(((2, 3), (0, 3)))]
    assert of_type(match.events(), HandSwapped) == [HandSwapped(2, 3, 1, SWAP_DEAD, 46)]
    assert match.chips == (36, 32 + 3, 36 - 3)


def test_auction_with_no_bids_swaps_nothing() -> None:
    match = auction_match()
    match.apply(DeadHandChoice.AUCTION)
    match.apply(Bid(0))
    match.apply(Bid(0))
    events = match.events()
    assert of_type(events, BidsRevealed) == [BidsRevealed(((1, 0), (2, 0)))]
    assert of_type(events, HandSwapped) == []
    assert match.chips == (32, 36, 36)
    assert match.dead_hand() == SWAP_DEAD
    assert (match.current_seat(), match.decision) == (1, Decision.LEAD)


def test_a_bid_above_the_chips_held_is_illegal() -> None:
    match = auction_match()
    match.apply(DeadHandChoice.AUCTION)
    with pytest.raises(IllegalActionError):
        match.apply(Bid(37))
    with pytest.raises(MalformedActionError):
        match.apply(Bid(-1))
    assert match.current_seat() == 1


def test_no_auction_when_nobody_else_has_a_chip() -> None:
    # everybody antes 1 on each of 4 cards out of 4 chips: all are left with 0
    match = auction_match(ante_per_card=1, dealer_ante_per_card=1, starting_chips=4)
    assert match.chips == (0, 0, 0)
    assert match.legal_actions() == [DeadHandChoice.EXCHANGE, DeadHandChoice.KEEP]
    with pytest.raises(IllegalActionError):
        match.apply(DeadHandChoice.AUCTION)


# -- purchase (seed 004 variation) -------------------------------------------------------


def test_purchase_fee_goes_to_the_kitty_and_the_one_who_goes_out_sweeps_it() -> None:
    rule_set = rules(dead_hand_exchange="purchase", hand_limit=1)
    match = start(rule_set, deal("3C 9S", "2D", "7H 8H"), dealer=0)
    assert match.legal_actions() == [DeadHandChoice.BUY, DeadHandChoice.KEEP]
    match.apply(DeadHandChoice.BUY)
    held = set(cards("3C 9S 2D 7H 8H"))
    new_hand = tuple(c for c in CARDS if c not in held)
    assert of_type(match.events(), HandSwapped) == [HandSwapped(0, 4, None, new_hand, 47)]
    assert match.chips == (32 - 4, 36, 36)
    assert match.kitty == 4
    assert match.dead_hand() == cards("3C 9S")
    lead(match, "2D")  # seat 1's only card
    # seat 2 pays for its 2 cards; the dealer owes 47 and pays the 28 chips it has
    assert play_events(match.events()) == [
        played(1, "2D", lead=True),
        WentOut(1),
        ChipsPaid(2, 1, 2, 2),
        ChipsPaid(0, 1, 28, 47),
        KittyWon(1, 4),
    ]
    assert match.outcome().chips == (0, 36 + 2 + 28 + 4, 34)
    assert match.total_chips() == 120


def test_purchase_fee_is_an_option() -> None:
    rule_set = rules(dead_hand_exchange="purchase", purchase_fee=5)
    match = start(rule_set, deal(*SWAP_DEAL), dealer=0)
    match.apply(DeadHandChoice.BUY)
    assert match.chips == (27, 36, 36)
    assert match.kitty == 5


@pytest.mark.parametrize(
    ("starting", "legal"),
    [
        (8, [DeadHandChoice.KEEP]),  # the dealer has 0 after the ante
        (11, [DeadHandChoice.KEEP]),  # 3 < 4
        (12, [DeadHandChoice.BUY, DeadHandChoice.KEEP]),  # exactly the fee
    ],
)
def test_purchase_is_offered_only_when_the_dealer_can_pay(
    starting: int, legal: list[DeadHandChoice]
) -> None:
    rule_set = rules(dead_hand_exchange="purchase", starting_chips=starting)
    match = start(rule_set, deal(*SWAP_DEAL), dealer=0)
    assert match.chips[0] == starting - 8
    assert match.legal_actions() == legal
    if DeadHandChoice.BUY not in legal:
        with pytest.raises(IllegalActionError):
            match.apply(DeadHandChoice.BUY)


def test_purchase_never_offers_a_free_exchange_or_auction() -> None:
    match = start(rules(dead_hand_exchange="purchase"), deal(*SWAP_DEAL), dealer=0)
    for choice in (DeadHandChoice.EXCHANGE, DeadHandChoice.AUCTION):
        with pytest.raises(IllegalActionError):
            match.apply(choice)
    exchange_only = start(rules(dead_hand_exchange="exchange"), deal(*SWAP_DEAL), dealer=0)
    for choice in (DeadHandChoice.BUY, DeadHandChoice.AUCTION):
        with pytest.raises(IllegalActionError):
            exchange_only.apply(choice)


def test_no_dead_hand_decision_when_exchange_is_off() -> None:
    match = start(rules(), deal(*SWAP_DEAL), dealer=0)
    assert match.decision is Decision.LEAD
    assert of_type(match.events(), DeadHandDecided) == []


def test_after_an_exchange_the_dealer_plays_the_cards_of_the_old_dead_hand() -> None:
    match = start(rules(dead_hand_exchange="exchange"), deal("3C 9S", "2C 5D 4H", "7H 8H"))
    match.apply(DeadHandChoice.EXCHANGE)
    lead(match, "2C", "5D")  # 2C stops at the discarded 3C; 6D..AD are the dealer's now
    assert play_events(match.events())[2:] == [
        played(1, "5D", lead=True),
        played(0, "6D"),
        played(0, "7D"),
        played(0, "8D"),
        played(0, "9D"),
        played(0, "TD"),
        played(0, "JD"),
        won_boodle(0, "JD", 4),
        played(0, "QD"),
        played(0, "KD"),
        played(0, "AD"),
        stopped("AD", "top"),
    ]
    assert match.current_seat() == 0
    assert match.chips == (36, 36, 36)
    # every seat is told who played: the same public events for all viewers
    for viewer in (0, 1, 2):
        assert play_events(match.events(viewer=viewer)) == play_events(match.events())
    assert match.observation(2).played[2:4] == ((0, Card.parse("6D")), (0, Card.parse("7D")))


def test_after_an_auction_the_buyer_plays_the_cards_it_bought() -> None:
    match = auction_match()
    match.apply(DeadHandChoice.AUCTION)
    before = [match.events(viewer=v) for v in (None, 0, 1, 2)]
    match.apply(Bid(1))
    # the first bid is sealed: no viewer's events change
    assert [match.events(viewer=v) for v in (None, 0, 1, 2)] == before
    match.apply(Bid(2))  # seat 2 buys
    lead(match, "2C")  # 3C is the dealer's; 4C..AC were dead and are now seat 2's
    assert play_events(match.events()) == [
        played(1, "2C", lead=True),
        played(0, "3C"),
        played(2, "4C"),
        played(2, "5C"),
        played(2, "6C"),
        played(2, "7C"),
        played(2, "8C"),
        played(2, "9C"),
        played(2, "TC"),
        played(2, "JC"),
        played(2, "QC"),
        won_boodle(2, "QC", 4),
        played(2, "KC"),
        played(2, "AC"),
        stopped("AC", "top"),
    ]
    assert match.chips == (32 + 2, 36, 36 - 2 + 4)
    assert match.dead_hand() == cards("7H 8H")


# -- scripted deals are checked ---------------------------------------------------------


@pytest.mark.parametrize(
    ("hands", "dead", "message"),
    [
        (("2C 3C", "2C", "4C"), None, "twice"),
        (("2C", "3C"), None, "hands for 3 seats"),
        (("2C", "", "4C"), None, "no cards"),
        (("2C", "3C", "4C"), "5C 6C", "missing"),
        (("2C", "3C", "4C"), " ".join(str(c) for c in CARDS[2:]), "twice"),
    ],
)
def test_a_bad_scripted_deal_is_refused(
    hands: tuple[str, ...], dead: str | None, message: str
) -> None:
    with pytest.raises(NewmarketError, match=message):
        Match(rules(), 3, 0, dealer=0, deals=[deal(*hands, dead=dead)])


def test_a_scripted_deal_with_an_explicit_dead_hand() -> None:
    held = ("2C", "3C", "4C")
    rest = " ".join(str(c) for c in CARDS if str(c) not in held)
    match = Match(rules(), 3, 0, dealer=0, deals=[deal(*held, dead=rest)])
    assert match.hand_sizes() == (1, 1, 1)
    assert len(match.dead_hand()) == 49
