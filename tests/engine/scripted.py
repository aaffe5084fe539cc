"""Compact builders for scripted matches: hand-written deals, rules and event filters.

A scripted test writes each seat's cards as one string (``"2H 5H 9C"``), picks
the first dealer, and asserts the typed events the match produces.  With
``dead=None`` every card in no hand is in the dead hand, so a run stops at
the first card that no seat was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from engine import Card, Deal, Match, Rules, Stakes, preset
from engine.events import (
    BoodleWon,
    CardPlayed,
    ChipsPaid,
    Event,
    HandBlocked,
    KittyWon,
    LeadPassed,
    PotShared,
    RunStopped,
    WentOut,
)

E = TypeVar("E")

# Events of the play and settlement of a hand, in the order they happen.
PLAY_EVENTS = (
    CardPlayed,
    BoodleWon,
    RunStopped,
    LeadPassed,
    HandBlocked,
    WentOut,
    ChipsPaid,
    PotShared,
    KittyWon,
)


def cards(text: str) -> tuple[Card, ...]:
    """``"2H 5H"`` -> (Card('2H'), Card('5H'))."""
    return tuple(Card.parse(part) for part in text.split())


def card(text: str) -> Card:
    return Card.parse(text)


def deal(*hands: str, dead: str | None = None) -> Deal:
    """One seat's cards per argument; ``dead=None``: every other card is dead."""
    return Deal.of([hand.split() for hand in hands], dead=None if dead is None else dead.split())


def rules(base: str = "boodle", /, **options: object) -> Rules:
    """A preset with options changed, e.g. ``rules(lead_suit="change_or_pass")``."""
    return preset(base).with_options(options)


def start(
    rule_set: Rules,
    *deals: Deal,
    dealer: int = 0,
    seed: int = 0,
    players: int | None = None,
) -> Match:
    """A match whose first hands use ``deals`` and whose first dealer is ``dealer``."""
    n = players if players is not None else len(deals[0].hands)
    return Match(rule_set, n, seed, dealer=dealer, deals=list(deals))


def lead(match: Match, *texts: str) -> None:
    """Apply leads one after another, each a card text."""
    for text in texts:
        match.apply(Card.parse(text))


def stake_all(match: Match, *amounts: tuple[int, ...]) -> None:
    """Free placement: each seat in turn places the next amounts."""
    for each in amounts:
        match.apply(Stakes(each))


def of_type(events: Sequence[Event], kind: type[E]) -> list[E]:
    return [event for event in events if isinstance(event, kind)]


def play_events(events: Sequence[Event]) -> list[Event]:
    """Only the events of play and settlement (no deal, stakes, hand boundaries)."""
    return [event for event in events if isinstance(event, PLAY_EVENTS)]


def since(match: Match, start_index: int) -> list[Event]:
    """The play and settlement events recorded after ``start_index``."""
    return play_events(match.events(since=start_index))


def played(seat: int, text: str, lead: bool = False) -> CardPlayed:
    return CardPlayed(seat, Card.parse(text), lead)


def stopped(last: str, cause: str, missing: str | None = None) -> RunStopped:
    return RunStopped(Card.parse(last), cause, None if missing is None else Card.parse(missing))


def won_boodle(seat: int, text: str, chips: int) -> BoodleWon:
    return BoodleWon(seat, Card.parse(text), chips)
