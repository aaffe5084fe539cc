"""Rejected actions: malformed vs illegal for every decision, nothing changes, the end.

``MalformedActionError``: not an action of the kind the decision takes.
``IllegalActionError``: well-formed, but not among the legal actions now.
Either way the match must be exactly as it was: every seat's observation, the
event log, who acts and what they may do.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from engine import (
    Bid,
    Card,
    DeadHandChoice,
    Decision,
    IllegalActionError,
    MalformedActionError,
    Match,
    MatchOverError,
    NewmarketError,
    Stakes,
    preset,
)

from .scripted import cards, deal, lead, rules, stake_all, start


def snapshot(match: Match) -> tuple[Any, ...]:
    seats = range(match.players)
    return (
        tuple(match.observation(seat) for seat in seats),
        tuple(tuple(match.events(viewer=seat)) for seat in seats),
        tuple(match.events()),
        match.event_count(),
        tuple(match.legal_actions()),
        match.current_seat(),
        match.decision,
        match.chips,
        match.boodle_stacks,
        match.kitty,
        match.hand_sizes(),
        tuple(match.hand_of(seat) for seat in seats),
        match.dead_hand(),
        match.is_over,
    )


def rejects(match: Match, action: object, error: type[NewmarketError]) -> None:
    before = snapshot(match)
    with pytest.raises(error):
        match.apply(action)  # type: ignore[arg-type]
    assert snapshot(match) == before


def test_error_families() -> None:
    for error in (MalformedActionError, IllegalActionError, MatchOverError):
        assert issubclass(error, NewmarketError)
        assert issubclass(error, ValueError)
    assert not issubclass(MalformedActionError, IllegalActionError)
    assert not issubclass(IllegalActionError, MalformedActionError)


# -- leads -------------------------------------------------------------------------------


def lead_match() -> Match:
    # seat 1 leads; after 4H stops (5H dead) it holds 7H, 2C and 9C
    return start(rules(lead_suit="change_or_same"), deal("6D 7D", "4H 7H 2C 9C", "3D 8D"))


@pytest.mark.parametrize(
    "action",
    [
        "2C",
        "4H",
        Stakes((1, 1, 1, 1)),
        Bid(0),
        DeadHandChoice.KEEP,
        None,
        52,
        -1,
        True,
        2.5,
        (Card.parse("4H"),),
    ],
)
def test_lead_malformed(action: object) -> None:
    match = lead_match()
    assert match.decision is Decision.LEAD
    rejects(match, action, MalformedActionError)


@pytest.mark.parametrize("text", ["5D", "AS", "7H", "9C"])
def test_lead_illegal_not_held_or_not_lowest(text: str) -> None:
    match = lead_match()
    assert match.legal_actions() == list(cards("2C 4H"))
    rejects(match, Card.parse(text), IllegalActionError)


def test_lead_illegal_the_stopped_suit_under_a_change_rule() -> None:
    match = lead_match()
    lead(match, "4H")
    assert match.legal_actions() == list(cards("2C"))
    rejects(match, Card.parse("7H"), IllegalActionError)  # the lowest heart, but hearts stopped
    rejects(match, Card.parse("9C"), IllegalActionError)


# -- stakes ------------------------------------------------------------------------------


def stake_match() -> Match:
    return start(rules(ante="free"), deal("6D 7D", "4H 7H 2C 9C", "3D 8D"))


@pytest.mark.parametrize(
    "action",
    [
        Stakes((6, 0, 0)),
        Stakes((3, 3, 0, 0, 0)),
        Stakes((-1, 7, 0, 0)),
        Stakes((6.0, 0, 0, 0)),  # type: ignore[arg-type]
        Stakes([6, 0, 0, 0]),  # type: ignore[arg-type]
        (6, 0, 0, 0),
        Bid(6),
        Card.parse("2C"),
        DeadHandChoice.KEEP,
        None,
        6,
    ],
)
def test_stake_malformed(action: object) -> None:
    match = stake_match()
    assert match.decision is Decision.STAKE
    rejects(match, action, MalformedActionError)


@pytest.mark.parametrize("amounts", [(1, 1, 1, 1), (7, 0, 0, 0), (0, 0, 0, 0)])
def test_stake_illegal(amounts: tuple[int, ...]) -> None:
    match = stake_match()
    rejects(match, Stakes(amounts), IllegalActionError)
    # also after another seat has placed (the sealed stake must survive)
    match.apply(Stakes((6, 0, 0, 0)))
    rejects(match, Stakes(amounts), IllegalActionError)
    rejects(match, Stakes((6, 0, 0)), MalformedActionError)
    stake_all(match, (0, 6, 0, 0), (0, 0, 6, 0))
    assert match.boodle_stacks == (6, 6, 6, 0)


# -- the dealer's dead-hand choice and auction bids -------------------------------------


def exchange_match(mode: str) -> Match:
    return start(rules(dead_hand_exchange=mode), deal("6D 7D", "4H 7H 2C 9C", "3D 8D"))


@pytest.mark.parametrize(
    "action",
    ["keep", "exchange", Bid(0), Stakes((1, 1, 1, 1)), Card.parse("6D"), None, 0],
)
def test_dead_hand_choice_malformed(action: object) -> None:
    match = exchange_match("exchange_or_auction")
    assert match.decision is Decision.DEAD_HAND
    rejects(match, action, MalformedActionError)


@pytest.mark.parametrize(
    ("mode", "choice"),
    [
        ("exchange", DeadHandChoice.BUY),
        ("exchange", DeadHandChoice.AUCTION),
        ("exchange_or_auction", DeadHandChoice.BUY),
        ("purchase", DeadHandChoice.EXCHANGE),
        ("purchase", DeadHandChoice.AUCTION),
    ],
)
def test_dead_hand_choice_illegal(mode: str, choice: DeadHandChoice) -> None:
    match = exchange_match(mode)
    rejects(match, choice, IllegalActionError)


@pytest.mark.parametrize(
    "action",
    [
        Bid(-1),
        Bid(1.5),  # type: ignore[arg-type]
        Bid("3"),  # type: ignore[arg-type]
        Bid(True),
        3,
        DeadHandChoice.KEEP,
        Card.parse("6D"),
        Stakes((1,)),
        None,
    ],
)
def test_bid_malformed(action: object) -> None:
    match = exchange_match("exchange_or_auction")
    match.apply(DeadHandChoice.AUCTION)
    assert match.decision is Decision.BID
    rejects(match, action, MalformedActionError)


def test_bid_illegal_above_the_chips_held() -> None:
    match = exchange_match("exchange_or_auction")
    match.apply(DeadHandChoice.AUCTION)
    assert match.chips[1] == 36
    rejects(match, Bid(37), IllegalActionError)
    match.apply(Bid(36))  # everything held is allowed
    assert match.current_seat() == 2
    rejects(match, Bid(100), IllegalActionError)


# -- the end of the match ----------------------------------------------------------------


def finished_match() -> Match:
    match = start(rules(hand_limit=1), deal("3D", "2C", "4D"))
    lead(match, "2C")
    assert match.is_over
    return match


@pytest.mark.parametrize(
    "action",
    [Card.parse("3D"), Stakes((1, 1, 1, 1)), DeadHandChoice.KEEP, Bid(0), None, "2C"],
)
def test_any_action_after_the_end_is_match_over(action: object) -> None:
    match = finished_match()
    rejects(match, action, MatchOverError)
    assert match.legal_actions() == []
    assert match.current_seat() is None
    assert match.decision is None
    assert match.observation(0).to_act is None


@pytest.mark.parametrize(
    ("name", "players", "seed"),
    [
        ("boodle", 3, 1),
        ("stops", 5, 2),
        ("newmarket", 4, 3),
        ("new-market", 6, 4),
        ("michigan", 8, 5),
    ],
)
def test_legal_actions_sorted_and_empty_exactly_when_over(
    name: str, players: int, seed: int
) -> None:
    rule_set = preset(name)
    if rule_set.dead_hand:
        rule_set = rule_set.with_options({"dead_hand_exchange": "exchange_or_auction"})
    match = Match(rule_set, players, seed)
    rng = random.Random(seed)
    kinds: set[Decision] = set()
    while True:
        legal = match.legal_actions()
        assert (legal == []) == match.is_over
        if match.is_over:
            break
        assert match.decision is not None
        kinds.add(match.decision)
        assert legal == sorted(legal)
        assert len(set(legal)) == len(legal)
        seat = match.current_seat()
        assert seat is not None
        assert match.observation(seat).legal_actions == tuple(legal)
        match.apply(legal[rng.randrange(len(legal))])
    assert Decision.LEAD in kinds
    with pytest.raises(MatchOverError):
        match.apply(Bid(0))
