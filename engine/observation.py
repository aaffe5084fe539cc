"""What one seat knows: the only view of a match a bot is given.

An ``Observation`` keeps exactly what the seat has seen: its own cards, every
card played and by whom, stops, hand sizes, chips, boodle stacks, and the
cards it itself put in the dead hand.  Nothing else about other hands or the
dead hand is in it until the hand ends (then ``HandEnded`` shows every hand to
everyone).  ``Match.observation(seat)`` (``engine.state``) fills it in: the
state reads its own fields, so this module is plain data that the state, the
position and the bots import without importing the state machine.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from engine.actions import Decision
from engine.cards import Card, Suit


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
