"""The worked examples of the source texts, played out on hand-made deals."""

from __future__ import annotations

from engine import Decision
from engine.events import (
    ChipsPaid,
    HandBlocked,
    HandEnded,
    MatchEnded,
    PlayerEliminated,
    PotShared,
    StakePlaced,
)

from .scripted import (
    cards,
    deal,
    lead,
    of_type,
    play_events,
    played,
    rules,
    stake_all,
    start,
    stopped,
)

# -- seed 000 ----------------------------------------------------------------------------
# "Example: I play the 2 of Hearts. Another player plays the 3 and 4 of Hearts. I play
# the 5 of Hearts. No one has the 6. I play a different suit."
#
# Three players, seat 0 deals, so "I" am seat 1 (left of the dealer, the first lead)
# and "another player" is seat 2.  The 6 of Hearts is in the dead hand.
ME, ANOTHER = 1, 2
SEED_000_DEAL = ("7D 8D", "2H 5H 3C 7H", "3H 4H 9D")


def test_seed_000_the_run_of_hearts() -> None:
    match = start(rules("boodle"), deal(*SEED_000_DEAL), dealer=0)
    assert match.current_seat() == ME
    lead(match, "2H")
    assert play_events(match.events()) == [
        played(ME, "2H", lead=True),
        played(ANOTHER, "3H"),
        played(ANOTHER, "4H"),
        played(ME, "5H"),
        stopped("5H", "dead", "6H"),
    ]
    # "I" played the last card, so I lead again; the main rule lets me lead any suit,
    # and I play a different suit.
    assert (match.current_seat(), match.decision) == (ME, Decision.LEAD)
    assert match.legal_actions() == list(cards("3C 7H"))
    lead(match, "3C")
    assert play_events(match.events())[5:] == [
        played(ME, "3C", lead=True),
        stopped("3C", "dead", "4C"),
    ]


def test_seed_000_compulsory_change_of_suit_variation() -> None:
    match = start(rules("boodle", lead_suit="change_or_same"), deal(*SEED_000_DEAL), dealer=0)
    lead(match, "2H")
    assert match.current_seat() == ME
    assert match.legal_actions() == list(cards("3C"))  # a different suit, if possible


# -- seed 003 ----------------------------------------------------------------------------
# "If no player manages to get rid of all their cards, the winner is the player with
# fewest cards when the game becomes blocked. [...] each of their rivals [pays] the
# difference [...] if David had three cards left at the end of the game and his rivals
# Stewart and Sharon each had five, they would both have to pay the victorious David
# two counters."
#
# With the blocked hand of RULES.md (nobody holds a suit other than the one just
# stopped) every card still held is of that one suit, and at least one card of it has
# just been played, so at most 12 (in fact 11) cards can be held: 3 + 5 + 5 = 13 cannot
# happen.  The test keeps the example's difference of two: David holds 1 card,
# Stewart and Sharon 3 each, and each pays David 2.
DAVID, STEWART, SHARON = 0, 1, 2


def test_seed_003_blocked_hand_each_rival_pays_the_difference() -> None:
    # Newmarket preset: 20 counters each, 10 staked freely; Sharon deals, David leads.
    match = start(rules("newmarket"), deal("2S 9S", "4S 5S 6S", "7S 8S TS"), dealer=SHARON)
    assert match.current_seat() == DAVID
    stake_all(match, (10, 0, 0, 0), (0, 10, 0, 0), (5, 0, 0, 5))
    assert of_type(match.events(), StakePlaced) == [
        StakePlaced(DAVID, (10, 0, 0, 0), 0),
        StakePlaced(STEWART, (0, 10, 0, 0), 0),
        StakePlaced(SHARON, (5, 0, 0, 5), 0),
    ]
    assert match.chips == (10, 10, 10)
    lead(match, "2S")  # 3S is in the dummy: a stop; everybody holds only spades
    events = match.events()
    assert play_events(events) == [
        played(DAVID, "2S", lead=True),
        stopped("2S", "dead", "3S"),
        HandBlocked(),
        ChipsPaid(STEWART, DAVID, 2, 2),
        ChipsPaid(SHARON, DAVID, 2, 2),
    ]
    (ended,) = of_type(events, HandEnded)
    assert ended.winners == (DAVID,)
    assert ended.hands == (cards("9S"), cards("4S 5S 6S"), cards("7S 8S TS"))
    # David 10 + 4 = 14; Stewart and Sharon 8 each, short of the next stake of 10: both
    # are out before hand 2 and their counters go to David, the one player left.
    assert of_type(events, PlayerEliminated) == [
        PlayerEliminated(STEWART, 8, ((DAVID, 8),)),
        PlayerEliminated(SHARON, 8, ((DAVID, 8),)),
    ]
    assert events[-1] == MatchEnded((1, 2, 2), (30, 0, 0), "players_left")
    # boodle cards A♣ K♥ Q♦ J♠: nobody played one, the 30 staked counters stay on them
    assert match.boodle_stacks == (15, 10, 0, 5)


def test_seed_003_with_the_largest_possible_blocked_hand() -> None:
    # 11 spades held at the block: David 3, Stewart and Sharon 4 each; each pays 1.
    hands = ("2S 4S 5S 6S", "7S 8S 9S TS", "JS QS KS AS")
    match = start(rules("newmarket"), deal(*hands), dealer=SHARON)
    stake_all(match, (10, 0, 0, 0), (10, 0, 0, 0), (10, 0, 0, 0))
    lead(match, "2S")
    assert play_events(match.events())[2:] == [
        HandBlocked(),
        ChipsPaid(STEWART, DAVID, 1, 1),
        ChipsPaid(SHARON, DAVID, 1, 1),
    ]
    # Stewart and Sharon keep 9 each, short of the next stake of 10: out, to David
    assert match.outcome().chips == (12 + 9 + 9, 0, 0)


# -- seed 002 ----------------------------------------------------------------------------
# "If no player gets rid of all his cards, the one who holds the fewest cards wins the
# hand, and if two players are left with an equal number of fewest cards they divide
# the winnings."  And the one who goes out "receives one chip from each of the other
# players".


def test_seed_002_equal_fewest_divide_the_winnings() -> None:
    # New Market preset, four players, seat 0 deals, 10 staked each.  Seat 1 leads 2H,
    # 3H is in the dummy, all hold only hearts: seats 1 and 2 hold 2 cards, seats 3
    # and 0 hold more and pay 1 each; the 2 chips are divided 1 and 1.
    hands = ("4H 5H 6H", "2H 7H 8H", "9H TH", "JH QH KH AH")
    match = start(rules("new-market"), deal(*hands), dealer=0)
    stake_all(match, *[(10, 0, 0, 0)] * 4)
    lead(match, "2H")
    events = match.events()
    assert play_events(events)[2:] == [
        HandBlocked(),
        ChipsPaid(3, None, 1, 1),
        ChipsPaid(0, None, 1, 1),
        PotShared(1, 1),
        PotShared(2, 1),
    ]
    assert of_type(events, HandEnded)[0].winners == (1, 2)


def test_seed_002_going_out_takes_one_chip_from_each() -> None:
    match = start(rules("new-market"), deal("4H 5H 6H", "2C", "9H TH", "JH QH"), dealer=0)
    stake_all(match, *[(10, 0, 0, 0)] * 4)
    lead(match, "2C")
    assert [e for e in play_events(match.events()) if isinstance(e, ChipsPaid)] == [
        ChipsPaid(2, 1, 1, 1),
        ChipsPaid(3, 1, 1, 1),
        ChipsPaid(0, 1, 1, 1),
    ]


def test_seed_003_the_literal_example_on_the_settlement_arithmetic() -> None:
    # "if David had three cards left at the end of the game and his rivals Stewart
    # and Sharon each had five, they would both have to pay the victorious David two
    # counters."  These counts cannot arise in a blocked hand (13 cards of the one
    # suit still held), so the text's own numbers are checked on the function the
    # engine settles with; the playable versions are the tests above.
    from engine.rules import BlockedHand
    from engine.settlement import blocked_hand_owed

    david, stewart, sharon = 0, 1, 2
    winners, owed = blocked_hand_owed(
        [(david, 3), (stewart, 5), (sharon, 5)], BlockedHand.FEWEST_DIFFERENCE
    )
    assert winners == (david,)
    assert owed == [(stewart, 2), (sharon, 2)]
    # seed 002's rule with the same cards: one chip from each.
    winners, owed = blocked_hand_owed(
        [(david, 3), (stewart, 5), (sharon, 5)], BlockedHand.FEWEST_FLAT
    )
    assert winners == (david,) and owed == [(stewart, 1), (sharon, 1)]
    # seed 000/001: play ends and nobody pays.
    assert blocked_hand_owed([(david, 3), (stewart, 5)], BlockedHand.NOBODY_PAYS) == ((), [])
