"""What one seat knows: the only view of a match a bot is given.

``observe(match, seat)`` reads the state and the current hand's events and
keeps exactly what the seat has seen: its own cards, every card played and by
whom, stops, hand sizes, chips, boodle stacks, and the cards it itself put in
the dead hand.  Nothing else about other hands or the dead hand is in it until
the hand ends (then ``HandEnded`` shows every hand to everyone).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from engine.actions import Decision
from engine.cards import Card, Suit
from engine.events import CardPlayed, typed

if TYPE_CHECKING:
    from engine.state import Match


@dataclasses.dataclass(frozen=True, slots=True)
class Observation:
    seat: int
    players: int
    hand_number: int
    dealer: int
    to_act: int | None
    decision: Decision | None  # the decision the seat to act faces
    legal_actions: tuple[Any, ...]  # filled only when this seat is to act
    chips: tuple[int, ...]
    live: tuple[bool, ...]
    boodle: tuple[tuple[Card, int], ...]  # each boodle card and the chips on it
    kitty: int
    hand: tuple[Card, ...]  # this seat's cards, sorted
    hand_sizes: tuple[int, ...]
    dead_hand_size: int
    played: tuple[tuple[int, Card], ...]  # (seat, card) this hand, in order of play
    last_card: Card | None  # the last card played this hand
    stopped_suit: Suit | None  # the suit of the last run, which change rules steer away from
    known_dead: tuple[Card, ...]  # cards this seat put in the dead hand by a swap


def observe(match: Match, seat: int) -> Observation:
    m: Any = match  # the observation is the one reader of the state's private fields
    if not 0 <= seat < m._players:
        raise ValueError(f"seat {seat} is not at this table")
    to_card = m._to_card
    played: list[tuple[int, Card]] = []
    last_card: Card | None = None
    for raw in match.raw_events(m._log_base):  # the hand being played
        for event in typed(raw, seat, to_card, m._rules.boodle_cards):
            if isinstance(event, CardPlayed):
                played.append((event.seat, event.card))
                last_card = event.card
    to_act = match.current_seat()
    legal = tuple(match.legal_actions()) if to_act == seat else ()
    last_suit = m._stopped_suit()
    stopped = Suit(last_suit) if last_suit >= 0 and not match.is_over else None
    return Observation(
        seat=seat,
        players=m._players,
        hand_number=m._hand_number,
        dealer=m._dealer,
        to_act=to_act,
        decision=match.decision,
        legal_actions=legal,
        chips=tuple(m._chips),
        live=tuple(m._live),
        boodle=tuple(zip(m._rules.boodle_cards, m._stacks, strict=True)),
        kitty=m._kitty,
        hand=m._cards_of_mask(m._hands[seat]),
        hand_sizes=match.hand_sizes(),
        dead_hand_size=int(m._dead).bit_count(),
        played=tuple(played),
        last_card=last_card,
        stopped_suit=stopped,
        known_dead=m._cards_of_mask(m._known_dead[seat]),
    )
