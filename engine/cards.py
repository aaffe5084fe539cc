"""Cards, suits and ranks, and their one canonical text form.

A card's text is its rank character then its suit character, both upper case:
``2C`` .. ``9C``, ``TC`` (ten), ``JC``, ``QC``, ``KC``, ``AC``; suits ``C D H S``.
``Card.parse(str(card)) == card`` for all 52 cards, and ``parse`` accepts
nothing else (no ``10C``, no lower case), so a bot's reply has one spelling.

A ``Card`` is an ``int`` (0..51, suit-major: ``suit * 13 + rank index`` with
2 lowest and Ace highest) so that sets of cards are plain bit masks and the
engine's hot loop works on ints, as python-chess does with squares.  Rank
*order* (aces high or low) is a rule option, not a property of the card: see
``RankOrder``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from engine.errors import MalformedCardError

SUIT_CHARS = "CDHS"
SUIT_SYMBOLS = "♣♦♥♠"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
RANK_CHARS = "23456789TJQKA"
RANK_NAMES = (
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "jack",
    "queen",
    "king",
    "ace",
)


class Suit(enum.IntEnum):
    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    def __str__(self) -> str:
        return SUIT_CHARS[self]

    @property
    def symbol(self) -> str:
        return SUIT_SYMBOLS[self]

    @classmethod
    def parse(cls, text: str) -> Suit:
        index = SUIT_CHARS.find(text) if len(text) == 1 else -1
        if index < 0:
            raise MalformedCardError(f"not a suit: {text!r} (expected one of C D H S)")
        return cls(index)


class Rank(enum.IntEnum):
    """Ranks by their index in ``RANK_CHARS``: TWO is 0, ACE is 12."""

    TWO = 0
    THREE = 1
    FOUR = 2
    FIVE = 3
    SIX = 4
    SEVEN = 5
    EIGHT = 6
    NINE = 7
    TEN = 8
    JACK = 9
    QUEEN = 10
    KING = 11
    ACE = 12

    def __str__(self) -> str:
        return RANK_CHARS[self]


class RankOrder(enum.StrEnum):
    """Which way a suit runs. Seeds 000-003: 2 low .. A high; seed 004: A low .. K high."""

    ACES_HIGH = "aces_high"
    ACES_LOW = "aces_low"

    def position(self, rank: Rank) -> int:
        """0 for the lowest rank of a suit under this order, 12 for the top."""
        if self is RankOrder.ACES_HIGH:
            return int(rank)
        return 0 if rank is Rank.ACE else int(rank) + 1

    def rank_at(self, position: int) -> Rank:
        if self is RankOrder.ACES_HIGH:
            return Rank(position)
        return Rank.ACE if position == 0 else Rank(position - 1)


class Card(int):
    """One of the 52 cards; an ``int`` 0..51. Use ``Card.parse`` or ``card_of``."""

    __slots__ = ()

    @property
    def suit(self) -> Suit:
        return Suit(self // 13)

    @property
    def rank(self) -> Rank:
        return Rank(self % 13)

    def __str__(self) -> str:
        return _TEXT[self]

    def __repr__(self) -> str:
        return f"Card({_TEXT[self]!r})"

    @property
    def pretty(self) -> str:
        """``Q♥``, ``10♠``: for people, never parsed back."""
        rank = "10" if self % 13 == Rank.TEN else RANK_CHARS[self % 13]
        return rank + SUIT_SYMBOLS[self // 13]

    @classmethod
    def parse(cls, text: str) -> Card:
        card = _BY_TEXT.get(text) if isinstance(text, str) else None
        if card is None:
            raise MalformedCardError(
                f"not a card: {text!r} (expected rank 2-9 T J Q K A then suit C D H S, e.g. 'TH')"
            )
        return card


def card_of(rank: Rank, suit: Suit) -> Card:
    return CARDS[int(suit) * 13 + int(rank)]


def parse_cards(texts: Iterable[str]) -> list[Card]:
    return [Card.parse(text) for text in texts]


def cards_text(cards: Iterable[int]) -> str:
    return " ".join(_TEXT[c] for c in cards)


_TEXT: tuple[str, ...] = tuple(r + s for s in SUIT_CHARS for r in RANK_CHARS)
CARDS: tuple[Card, ...] = tuple(Card(i) for i in range(52))
_BY_TEXT: dict[str, Card] = {text: CARDS[i] for i, text in enumerate(_TEXT)}
DECK: tuple[Card, ...] = CARDS
