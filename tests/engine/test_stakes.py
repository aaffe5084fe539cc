"""Stakes before the deal: fixed ante, free placement (sealed), kitty, carry-over.

Three players and 40 starting chips unless a test says otherwise; boodle cards
in the order A♠ K♥ Q♣ J♦, so stakes and stacks read (A♠, K♥, Q♣, J♦).
"""

from __future__ import annotations

from math import comb

import pytest

from engine import (
    Bid,
    Card,
    Decision,
    IllegalActionError,
    MalformedActionError,
    Stakes,
)
from engine.events import CardsDealt, Event, HandStarted, StakePlaced

from .scripted import (
    deal,
    lead,
    of_type,
    play_events,
    played,
    rules,
    stake_all,
    start,
    stopped,
    won_boodle,
)

OUT_IN_ONE_RUN = ("3S 5S 6S 7D", "2S 9D 9H", "4S")


def before_play(events: list[Event]) -> list[Event]:
    """The events up to and including the deal, without the deal itself."""
    out: list[Event] = []
    for event in events:
        if isinstance(event, CardsDealt):
            break
        out.append(event)
    return out


def test_fixed_ante_one_per_card_and_two_for_the_dealer() -> None:
    match = start(rules(), deal(*OUT_IN_ONE_RUN), dealer=0)
    assert before_play(match.events()) == [
        HandStarted(1, 0),
        StakePlaced(1, (1, 1, 1, 1), 0),
        StakePlaced(2, (1, 1, 1, 1), 0),
        StakePlaced(0, (2, 2, 2, 2), 0),
    ]
    assert match.chips == (32, 36, 36)
    assert match.boodle_stacks == (4, 4, 4, 4)
    assert match.decision is Decision.LEAD  # no stake decision with a fixed ante


def test_fixed_ante_amounts_are_options_and_order_starts_left_of_the_dealer() -> None:
    rule_set = rules(ante_per_card=2, dealer_ante_per_card=3)
    match = start(rule_set, deal(*OUT_IN_ONE_RUN), dealer=2)
    assert before_play(match.events()) == [
        HandStarted(1, 2),
        StakePlaced(0, (2, 2, 2, 2), 0),
        StakePlaced(1, (2, 2, 2, 2), 0),
        StakePlaced(2, (3, 3, 3, 3), 0),
    ]
    assert match.chips == (32, 32, 28)
    assert match.boodle_stacks == (7, 7, 7, 7)


def test_fixed_ante_with_a_kitty() -> None:
    match = start(rules(kitty_ante=1), deal(*OUT_IN_ONE_RUN), dealer=0)
    assert of_type(match.events(), StakePlaced) == [
        StakePlaced(1, (1, 1, 1, 1), 1),
        StakePlaced(2, (1, 1, 1, 1), 1),
        StakePlaced(0, (2, 2, 2, 2), 1),
    ]
    assert match.kitty == 3
    assert match.chips == (31, 35, 35)


@pytest.mark.parametrize(("total", "count"), [(6, comb(9, 3)), (10, comb(13, 3)), (4, comb(7, 3))])
def test_legal_placements_are_every_split_of_the_stake(total: int, count: int) -> None:
    match = start(rules(ante="free", stake_total=total), deal(*OUT_IN_ONE_RUN), dealer=0)
    assert match.decision is Decision.STAKE
    legal = match.legal_actions()
    assert len(legal) == count
    assert legal == sorted(legal)
    assert len(set(legal)) == count
    assert all(isinstance(s, Stakes) and len(s.amounts) == 4 for s in legal)
    assert all(sum(s.amounts) == total and min(s.amounts) >= 0 for s in legal)
    assert legal[0] == Stakes((0, 0, 0, total))
    assert legal[-1] == Stakes((total, 0, 0, 0))


def test_one_boodle_card_leaves_one_placement() -> None:
    match = start(rules(ante="free", boodle_cards="QS"), deal(*OUT_IN_ONE_RUN), dealer=0)
    assert match.legal_actions() == [Stakes((6,))]


def test_free_placement_is_sealed_then_revealed_together() -> None:
    match = start(rules(ante="free"), deal(*OUT_IN_ONE_RUN), dealer=0)
    assert (match.current_seat(), match.decision) == (1, Decision.STAKE)
    match.apply(Stakes((6, 0, 0, 0)))
    # nothing is revealed or paid while others have still to place
    assert match.current_seat() == 2
    assert match.events() == [HandStarted(1, 0)]
    assert match.events(viewer=2) == [HandStarted(1, 0)]
    seen = match.observation(2)
    assert seen.boodle == tuple((Card.parse(t), 0) for t in ("AS", "KH", "QC", "JD"))
    assert seen.chips == (40, 40, 40)
    match.apply(Stakes((0, 3, 3, 0)))
    assert match.current_seat() == 0
    assert match.events() == [HandStarted(1, 0)]
    assert match.observation(0).chips == (40, 40, 40)
    match.apply(Stakes((1, 1, 2, 2)))
    # the dealer stakes the same total as everyone else; revealed in staking order
    assert before_play(match.events()) == [
        HandStarted(1, 0),
        StakePlaced(1, (6, 0, 0, 0), 0),
        StakePlaced(2, (0, 3, 3, 0), 0),
        StakePlaced(0, (1, 1, 2, 2), 0),
    ]
    assert match.boodle_stacks == (7, 4, 5, 2)
    assert match.chips == (34, 34, 34)
    assert (match.current_seat(), match.decision) == (1, Decision.LEAD)


def test_free_placement_with_a_kitty() -> None:
    # seed 004: 1 chip to the kitty and 4 spread over the boodle cards
    match = start(rules("stops"), deal(*OUT_IN_ONE_RUN), dealer=0)
    assert len(match.legal_actions()) == comb(7, 3)
    stake_all(match, (4, 0, 0, 0), (0, 0, 0, 4), (1, 1, 1, 1))
    assert of_type(match.events(), StakePlaced) == [
        StakePlaced(1, (4, 0, 0, 0), 1),
        StakePlaced(2, (0, 0, 0, 4), 1),
        StakePlaced(0, (1, 1, 1, 1), 1),
    ]
    assert match.kitty == 3
    assert match.chips == (35, 35, 35)
    assert match.boodle_stacks == (5, 1, 1, 5)


@pytest.mark.parametrize(
    "amounts",
    [(1, 1, 1, 1), (7, 0, 0, 0), (0, 0, 0, 0), (2, 2, 2, 2), (5, 0, 0, 0)],
)
def test_a_placement_with_the_wrong_total_is_illegal(amounts: tuple[int, ...]) -> None:
    match = start(rules(ante="free"), deal(*OUT_IN_ONE_RUN), dealer=0)
    with pytest.raises(IllegalActionError):
        match.apply(Stakes(amounts))
    assert match.current_seat() == 1
    assert match.events() == [HandStarted(1, 0)]


@pytest.mark.parametrize(
    "action",
    [
        Stakes((6, 0, 0)),
        Stakes((6, 0, 0, 0, 0)),
        Stakes(()),
        Stakes([6, 0, 0, 0]),  # type: ignore[arg-type]
        Stakes((-1, 7, 0, 0)),
        Stakes((6.0, 0, 0, 0)),  # type: ignore[arg-type]
        Stakes((True, 5, 0, 0)),
        Stakes(("6", 0, 0, 0)),  # type: ignore[arg-type]
        Bid(6),
        Card.parse("2C"),
        (6, 0, 0, 0),
        None,
    ],
)
def test_a_placement_of_the_wrong_shape_is_malformed(action: object) -> None:
    match = start(rules(ante="free"), deal(*OUT_IN_ONE_RUN), dealer=0)
    with pytest.raises(MalformedActionError):
        match.apply(action)  # type: ignore[arg-type]
    assert match.current_seat() == 1
    assert match.events() == [HandStarted(1, 0)]


def test_a_boodle_card_with_no_chips_on_it_wins_nothing() -> None:
    # Everybody stakes on A♠ only; K♥ then carries nothing.
    match = start(rules(ante="free"), deal("AH 5D", "QH 3D 4D", "KH 6D"), dealer=0)
    stake_all(match, (6, 0, 0, 0), (6, 0, 0, 0), (6, 0, 0, 0))
    lead(match, "QH")
    assert play_events(match.events()) == [
        played(1, "QH", lead=True),
        played(2, "KH"),
        played(0, "AH"),
        stopped("AH", "top"),
    ]
    assert match.boodle_stacks == (18, 0, 0, 0)


def test_unclaimed_boodle_chips_carry_over_and_new_stakes_stack_on_top() -> None:
    # Hand 1 (seat 0 deals): seat 2 goes out at once, no boodle card is played.
    # Hand 2 (seat 1 deals): seat 2 leads A♠ and takes both hands' stakes on it.
    second = deal("3D 4D", "5D 6D", "AS 7D")
    match = start(rules(ante="free"), deal(*OUT_IN_ONE_RUN), second, dealer=0)
    stake_all(match, (6, 0, 0, 0), (3, 3, 0, 0), (2, 0, 2, 2))
    lead(match, "2S")
    # hand 1 paid seat 2 three chips from seat 0 and two from seat 1
    assert match.hand_number == 2
    assert match.boodle_stacks == (11, 3, 2, 2)
    assert match.chips == (34 - 3, 34 - 2, 34 + 5)
    assert match.current_seat() == 2  # staking starts left of the new dealer
    stake_all(match, (6, 0, 0, 0), (0, 6, 0, 0), (0, 0, 0, 6))
    assert match.boodle_stacks == (17, 9, 2, 8)
    assert match.chips == (25, 26, 33)
    lead(match, "AS")
    hand_2 = match.events()
    hand_2 = hand_2[hand_2.index(HandStarted(2, 1)) :]
    assert of_type(hand_2, StakePlaced) == [
        StakePlaced(2, (6, 0, 0, 0), 0),
        StakePlaced(0, (0, 6, 0, 0), 0),
        StakePlaced(1, (0, 0, 0, 6), 0),
    ]
    assert play_events(hand_2) == [
        played(2, "AS", lead=True),
        won_boodle(2, "AS", 17),
        stopped("AS", "top"),
    ]
    assert match.boodle_stacks == (0, 9, 2, 8)
    assert match.chips == (25, 26, 50)
    assert match.total_chips() == 120


def test_before_the_first_deal_a_seat_holds_no_cards() -> None:
    match = start(rules(ante="free"), deal(*OUT_IN_ONE_RUN), dealer=0)
    seen = match.observation(1)
    assert (seen.hand, seen.hand_sizes, seen.dead_hand_size, seen.played) == ((), (0, 0, 0), 0, ())


def test_before_a_later_deal_a_seat_holds_no_cards() -> None:
    match = start(rules(ante="free"), deal(*OUT_IN_ONE_RUN), dealer=0)
    stake_all(match, (6, 0, 0, 0), (6, 0, 0, 0), (6, 0, 0, 0))
    lead(match, "2S")  # seat 2 goes out; seat 0 is left with 7D 5S 6S
    assert (match.hand_number, match.decision) == (2, Decision.STAKE)
    seen = match.observation(0)
    assert (seen.hand, seen.hand_sizes, seen.dead_hand_size, seen.played) == ((), (0, 0, 0), 0, ())
