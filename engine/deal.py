"""The deal: the one chance step of a hand, and the first dealer.

Both come from the match seed through BLAKE2b and SHAKE-256, not from ``random``: the same
seed gives the same cards on any Python version and platform, and the deal of
hand ``h`` depends only on ``(seed, h)``, never on what happened earlier in the
match, so duplicate deals give every seat rotation the same cards.

The shuffle is a Fisher-Yates walk whose every step draws one 64-bit word of
SHAKE-256 output (the modulo bias of a step is below 52 / 2**64).

The rules deal one card at a time clockwise from the dealer's left, the dead
hand taking its turn after the dealer, so the first hands from the dealer's
left get the extra cards.  The engine computes the same thing the quick way:
it writes down who receives the 1st, 2nd, ... 52nd card of that dealing order
and shuffles that list over the 52 cards, which gives every seat a hand of the
right size, uniformly at random, like dealing a shuffled pack.
"""

from __future__ import annotations

import dataclasses
import hashlib
import struct
from collections.abc import Iterable, Sequence

from engine.cards import CARDS, Card, cards_text
from engine.errors import NewmarketError


def _digest_int(label: str) -> int:
    return int.from_bytes(hashlib.blake2b(label.encode(), digest_size=64).digest(), "little")


_WORDS = struct.Struct("<51Q")
_STEPS = tuple((i, i + 1) for i in range(51, 0, -1))


def shuffled(seed: int, hand_number: int, items: Sequence[int]) -> list[int]:
    """A copy of 52 ``items`` in the seeded random order of hand ``hand_number`` (1-based)."""
    stream = hashlib.shake_256(f"newmarket/deal/{seed}/{hand_number}".encode()).digest(408)
    out = list(items)
    for (i, modulus), word in zip(_STEPS, _WORDS.unpack(stream), strict=True):
        j = word % modulus
        out[i], out[j] = out[j], out[i]
    return out


# ONE_SEAT[s] maps holder byte s to ASCII "1" and every other holder to "0": Match._deal
# reads each live seat's 52-bit hand from the owner table as text (bytes(owner)[::-1],
# position 51 first) by one translate and one int(..., 2), a few C calls per seat
# instead of a Python loop over the 52 positions.
ONE_SEAT = tuple(
    bytes.maketrans(bytes(range(9)), bytes(49 if k == seat else 48 for k in range(9)))
    for seat in range(9)
)


def shuffled_deck(seed: int, hand_number: int) -> list[int]:
    """The pack's order for hand ``hand_number`` of the match with ``seed``."""
    return shuffled(seed, hand_number, list(range(52)))


def first_dealer(seed: int, players: int) -> int:
    return _digest_int(f"newmarket/first-dealer/{seed}") % players


@dataclasses.dataclass(frozen=True, slots=True)
class Deal:
    """A chance outcome: the cards of every seat (empty for seats out) and the dead hand."""

    hands: tuple[tuple[Card, ...], ...]
    dead: tuple[Card, ...]

    @classmethod
    def of(
        cls, hands: Sequence[Iterable[Card | str]], dead: Iterable[Card | str] | None = None
    ) -> Deal:
        """Build a deal from card texts; with ``dead=None`` every card not in a hand is dead."""
        parsed = tuple(tuple(_card(c) for c in hand) for hand in hands)
        held = {c for hand in parsed for c in hand}
        if dead is None:
            dead_cards = tuple(c for c in CARDS if c not in held)
        else:
            dead_cards = tuple(_card(c) for c in dead)
        return cls(parsed, dead_cards)

    def check(self, players: int, live: Sequence[bool]) -> None:
        if len(self.hands) != players:
            raise NewmarketError(f"deal: {len(self.hands)} hands for {players} seats")
        seen: set[int] = set()
        for seat, hand in enumerate(self.hands):
            if hand and not live[seat]:
                raise NewmarketError(f"deal: seat {seat} is out of the match but was dealt cards")
            if live[seat] and not hand:
                raise NewmarketError(f"deal: seat {seat} was dealt no cards")
            for card in hand:
                if card in seen:
                    raise NewmarketError(f"deal: {card} is dealt twice")
                seen.add(card)
        for card in self.dead:
            if card in seen:
                raise NewmarketError(f"deal: {card} is dealt twice")
            seen.add(card)
        if len(seen) != 52:
            missing = [c for c in CARDS if c not in seen]
            raise NewmarketError(f"deal: cards missing from the deal: {cards_text(missing)}")


def _card(value: Card | str) -> Card:
    return value if isinstance(value, Card) else Card.parse(value)
