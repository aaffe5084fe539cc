"""What happened in a match, as typed events, and who may see what.

The state machine records each event as a small tuple (its kind first) so that
the hot path of a hand allocates almost nothing; ``typed_events`` turns those
tuples into the dataclasses below for one viewer.  This is, with
``engine.observation``, the only door through which hidden cards leave the
engine: a seat sees its own cards in ``CardsDealt`` and ``HandSwapped`` and
everyone's only in ``HandEnded``; ``viewer=None`` is the referee's view.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

from engine.cards import Card

# Why a run stopped. Every cause is public: a card nobody plays is dead or played.
STOP_TOP = "top"  # the Ace (aces high) or the King (aces low) was played
STOP_DEAD = "dead"  # the next card is in the dead hand
STOP_PLAYED = "played"  # the next card was played earlier in this hand

# Raw event kinds, the first item of each event tuple.
E_HAND_START = 0  # (kind, hand_number, dealer)
E_ELIMINATED = 1  # (kind, seat, chips_at_elimination, ((seat, share), ...))
E_STAKE = 2  # (kind, seat, amounts tuple, kitty chips)
E_DEAL = 3  # (kind, hand masks tuple (position codes), dead mask)
E_DEAD_HAND = 4  # (kind, dealer, choice value)
E_BIDS = 5  # (kind, ((seat, chips), ...))
E_SWAP = 6  # (kind, seat, price, paid_to, new hand mask); paid_to -1 is the kitty
E_RUN = 7  # (kind, first code, last code, first is a lead, owner table): cards in a row
E_BOODLE = 8  # (kind, seat, boodle index, chips)
E_STOP = 9  # (kind, last code, cause, missing code or -1)
E_PASS = 10  # (kind, from seat, to seat)
E_BLOCKED = 11  # (kind,)
E_OUT = 12  # (kind, seat)
E_PAY = 13  # (kind, payer, payee, amount, owed); payee -1 is the blocked-hand pot
E_SHARE = 14  # (kind, seat, amount): a share of the blocked-hand pot
E_KITTY = 15  # (kind, seat, amount)
E_HAND_END = 16  # (kind, hand masks tuple, dead mask, winners tuple)
E_MATCH_END = 17  # (kind, places tuple, chips tuple, reason)


@dataclasses.dataclass(frozen=True, slots=True)
class HandStarted:
    hand: int
    dealer: int


@dataclasses.dataclass(frozen=True, slots=True)
class PlayerEliminated:
    """The seat could not pay its stake; its chips were divided among the rest."""

    seat: int
    chips: int
    shares: tuple[tuple[int, int], ...]  # (seat, chips received)


@dataclasses.dataclass(frozen=True, slots=True)
class StakePlaced:
    seat: int
    amounts: tuple[int, ...]  # per boodle card, in the order of Rules.boodle_cards
    kitty: int


@dataclasses.dataclass(frozen=True, slots=True)
class CardsDealt:
    """Hand sizes are public; a hand's cards are shown only to its holder (None otherwise)."""

    hand_sizes: tuple[int, ...]
    dead_hand_size: int
    hands: tuple[tuple[Card, ...] | None, ...]
    dead_hand: tuple[Card, ...] | None


@dataclasses.dataclass(frozen=True, slots=True)
class DeadHandDecided:
    dealer: int
    choice: str  # "keep", "exchange", "auction" or "buy"


@dataclasses.dataclass(frozen=True, slots=True)
class BidsRevealed:
    bids: tuple[tuple[int, int], ...]  # (seat, chips), in bidding order


@dataclasses.dataclass(frozen=True, slots=True)
class HandSwapped:
    """The seat took the dead hand; its old hand became the dead hand."""

    seat: int
    price: int
    paid_to: int | None  # the dealer who sold it, or None for the kitty / a free exchange
    hand: tuple[Card, ...] | None  # the new hand, shown only to the seat itself
    hand_size: int


@dataclasses.dataclass(frozen=True, slots=True)
class CardPlayed:
    seat: int
    card: Card
    lead: bool  # True for a lead, False for a forced follow


@dataclasses.dataclass(frozen=True, slots=True)
class BoodleWon:
    seat: int
    card: Card  # the boodle card
    chips: int


@dataclasses.dataclass(frozen=True, slots=True)
class RunStopped:
    card: Card  # the last card of the run
    cause: str  # "top", "dead" or "played"
    missing: Card | None  # the card that nobody could play (None after the top card)


@dataclasses.dataclass(frozen=True, slots=True)
class LeadPassed:
    """change_or_pass: the leader held only the suit just played."""

    from_seat: int
    to_seat: int


@dataclasses.dataclass(frozen=True, slots=True)
class HandBlocked:
    """change_or_pass: nobody holds another suit; the hand ends without anyone going out."""


@dataclasses.dataclass(frozen=True, slots=True)
class WentOut:
    seat: int


@dataclasses.dataclass(frozen=True, slots=True)
class ChipsPaid:
    payer: int
    payee: int | None  # None: into the pot that equal blocked-hand winners divide
    chips: int  # what was paid (less than owed when the payer ran out)
    owed: int


@dataclasses.dataclass(frozen=True, slots=True)
class PotShared:
    seat: int
    chips: int


@dataclasses.dataclass(frozen=True, slots=True)
class KittyWon:
    seat: int
    chips: int


@dataclasses.dataclass(frozen=True, slots=True)
class HandEnded:
    """Every hand and the dead hand are shown to all when a hand ends."""

    hands: tuple[tuple[Card, ...], ...]
    dead_hand: tuple[Card, ...]
    winners: tuple[int, ...]  # who went out, or the blocked-hand winners; empty if none


@dataclasses.dataclass(frozen=True, slots=True)
class MatchEnded:
    places: tuple[int, ...]
    chips: tuple[int, ...]
    reason: str  # "players_left" or "hand_limit"


Event = (
    HandStarted
    | PlayerEliminated
    | StakePlaced
    | CardsDealt
    | DeadHandDecided
    | BidsRevealed
    | HandSwapped
    | CardPlayed
    | BoodleWon
    | RunStopped
    | LeadPassed
    | HandBlocked
    | WentOut
    | ChipsPaid
    | PotShared
    | KittyWon
    | HandEnded
    | MatchEnded
)


class _MaskDecoder:
    """Cards of code masks for one card table (``to_card``: position code to card).

    Codes are suit-major, 13 to a suit, like cards, so a mask's cards are its
    four suits' cards one after the other.  Within a suit, code order is the
    rank order of the rules (aces low puts the ace first) and card order may
    differ, so each suit's 13-bit slice is first renumbered in card order
    (``in_card_order``, one table for every suit), then read as two halves, low
    7 and high 6 cards, from tables of tuples: a dozen lookups, where a step per
    card cost three times as much.  Built at the first use, about 1 ms; 768
    small tuples, few enough to cost a garbage collection nothing.
    """

    __slots__ = ("highs", "in_card_order", "lows", "to_card")

    def __init__(self, to_card: Sequence[Card]) -> None:
        self.to_card = to_card
        codes = sorted(range(13), key=lambda code: to_card[code])  # codes of a suit, by card
        self.in_card_order = in_card_order = [0] * 8192
        done = [0]  # every slice of the codes renumbered so far
        for place, code in enumerate(codes):
            bit, renumbered = 1 << code, 1 << place
            for slice_ in done:
                in_card_order[slice_ | bit] = in_card_order[slice_] | renumbered
            done += [slice_ | bit for slice_ in done]
        by_suit = [[to_card[13 * suit + code] for code in codes] for suit in range(4)]
        self.lows = tuple(_slices(cards[:7]) for cards in by_suit)
        self.highs = tuple(_slices(cards[7:]) for cards in by_suit)

    def cards(self, mask: int) -> tuple[Card, ...]:
        order = self.in_card_order
        c, d, h, s = (
            order[mask & 0x1FFF],
            order[mask >> 13 & 0x1FFF],
            order[mask >> 26 & 0x1FFF],
            order[mask >> 39],
        )
        lc, ld, lh, ls = self.lows
        hc, hd, hh, hs = self.highs
        return (
            lc[c & 127] + hc[c >> 7] + ld[d & 127] + hd[d >> 7]
            + lh[h & 127] + hh[h >> 7] + ls[s & 127] + hs[s >> 7]
        )  # fmt: skip


def _slices(cards: Sequence[Card]) -> list[tuple[Card, ...]]:
    """The cards of every bit mask over ``cards``, in their order, by mask."""
    return [
        tuple(card for i, card in enumerate(cards) if slice_ >> i & 1)
        for slice_ in range(1 << len(cards))
    ]


# The decoder of each card table, by the table's id; the entry keeps the table, so the
# id is not reused while it lives.  A process meets one card table per rank order.
_DECODERS: dict[int, _MaskDecoder] = {}


def cards_of_mask(mask: int, to_card: Sequence[Card]) -> tuple[Card, ...]:
    """The cards of a mask of position codes (``to_card``: code to card), in card order.

    Two hand-end events decode ten masks, and every request decodes one.
    """
    decoder = _DECODERS.get(id(to_card))
    if decoder is None or decoder.to_card is not to_card:
        decoder = _DECODERS[id(to_card)] = _MaskDecoder(to_card)
    return decoder.cards(mask)


def typed(
    raw: tuple[Any, ...],
    viewer: int | None,
    to_card: Sequence[Card],
    boodle_cards: Sequence[Card],
) -> list[Event]:
    """One raw event as ``viewer`` sees it (None: the referee sees everything).

    A run is stored as (first, last) codes and the owner table it was played
    from (who held each card), so it expands to one ``CardPlayed`` per card;
    every other raw event is one typed event.
    """
    kind = raw[0]
    if kind == E_RUN:
        first, last, is_lead, owner = raw[1], raw[2], raw[3], raw[4]
        return [
            CardPlayed(owner[code], to_card[code], is_lead and code == first)
            for code in range(first, last + 1)
        ]
    if kind == E_STOP:
        missing = to_card[raw[3]] if raw[3] >= 0 else None
        return [RunStopped(to_card[raw[1]], raw[2], missing)]
    if kind == E_BOODLE:
        return [BoodleWon(raw[1], boodle_cards[raw[2]], raw[3])]
    if kind == E_HAND_START:
        return [HandStarted(raw[1], raw[2])]
    if kind == E_ELIMINATED:
        return [PlayerEliminated(raw[1], raw[2], raw[3])]
    if kind == E_STAKE:
        return [StakePlaced(raw[1], raw[2], raw[3])]
    if kind == E_DEAL:
        masks: tuple[int, ...] = raw[1]
        hands = tuple(
            cards_of_mask(mask, to_card) if viewer is None or viewer == seat else None
            for seat, mask in enumerate(masks)
        )
        dead = cards_of_mask(raw[2], to_card) if viewer is None else None
        sizes = tuple(m.bit_count() for m in masks)
        return [CardsDealt(sizes, int(raw[2]).bit_count(), hands, dead)]
    if kind == E_DEAD_HAND:
        return [DeadHandDecided(raw[1], raw[2])]
    if kind == E_BIDS:
        return [BidsRevealed(raw[1])]
    if kind == E_SWAP:
        seat = raw[1]
        new_hand = cards_of_mask(raw[4], to_card) if viewer is None or viewer == seat else None
        paid_to = raw[3] if raw[3] >= 0 else None
        return [HandSwapped(seat, raw[2], paid_to, new_hand, int(raw[4]).bit_count())]
    if kind == E_PASS:
        return [LeadPassed(raw[1], raw[2])]
    if kind == E_BLOCKED:
        return [HandBlocked()]
    if kind == E_OUT:
        return [WentOut(raw[1])]
    if kind == E_PAY:
        return [ChipsPaid(raw[1], raw[2] if raw[2] >= 0 else None, raw[3], raw[4])]
    if kind == E_SHARE:
        return [PotShared(raw[1], raw[2])]
    if kind == E_KITTY:
        return [KittyWon(raw[1], raw[2])]
    if kind == E_HAND_END:
        hands_end = tuple(cards_of_mask(mask, to_card) for mask in raw[1])
        return [HandEnded(hands_end, cards_of_mask(raw[2], to_card), raw[3])]
    if kind == E_MATCH_END:
        return [MatchEnded(raw[1], raw[2], raw[3])]
    raise AssertionError(f"unknown raw event {raw!r}")


# Every CardPlayed, made once: events are immutable, and a referee types every card
# of every match.  Indexed by seat, then card (an int 0..51): no key tuple to build and
# hash per card, which a run of several cards pays at every decision.
_MAX_SEATS = 8
_LEADS: list[list[CardPlayed | None]] = [[None] * 52 for _ in range(_MAX_SEATS)]
_FOLLOWS: list[list[CardPlayed | None]] = [[None] * 52 for _ in range(_MAX_SEATS)]


def _card_played(seat: int, card: Card, lead: bool) -> CardPlayed:
    """The one ``CardPlayed(seat, card, lead)`` (made at its first use)."""
    row = (_LEADS if lead else _FOLLOWS)[seat]
    played = row[card]
    if played is None:
        played = row[card] = CardPlayed(seat, card, lead)
    return played


EventViews = tuple[Event, tuple[Event, ...] | None]
"""An event as the referee sees it, and as each seat sees it: None when every seat sees
the referee's event itself (all events but ``CardsDealt`` and ``HandSwapped``)."""


# Raw kinds whose events recur within a match with the same fields (a stop at the
# same card, the same stakes every hand, a lead passed between the same seats), whose
# raw tuple (ints, strings, tuples of ints) is the whole of what they say, and whose
# typed form every viewer shares: ``typed_views`` types each once per ``memo``.
_RECURRING: frozenset[int] = frozenset(
    {E_STOP, E_BOODLE, E_STAKE, E_DEAD_HAND, E_PASS, E_BLOCKED, E_OUT, E_PAY, E_SHARE, E_KITTY}
)
MEMO_LIMIT = 4096  # a memo's entries at most (a match has a few hundred distinct ones)

RecurringMemo = dict[tuple[Any, ...], "Event"]
"""Recurring events already typed, by raw tuple, for one match (its rules' cards)."""


def typed_views(
    raws: Iterable[tuple[Any, ...]],
    players: int,
    to_card: Sequence[Card],
    boodle_cards: Sequence[Card],
    memo: RecurringMemo | None = None,
) -> list[EventViews]:
    """Typed events of raw events for every viewer at once (see ``EventViews``).

    The same events as ``typed_events`` with ``viewer=None`` and with each seat,
    typed once rather than once per viewer: a referee tells every seat and
    keeps a log, and most events are public.

    ``memo``, a dict the caller keeps for one match (``to_card`` and
    ``boodle_cards`` never change within it), makes a recurring event (see
    ``_RECURRING``) the very object it was the last time: typed once, and a
    caller may key its own work on the object's identity.
    """
    out: list[EventViews] = []
    for raw in raws:
        kind = raw[0]
        if kind == E_RUN:
            first, last, is_lead, owner = raw[1], raw[2], raw[3], raw[4]
            if is_lead:
                out.append((_card_played(owner[first], to_card[first], True), None))
                first += 1
            for code in range(first, last + 1):
                card = to_card[code]
                played = _FOLLOWS[owner[code]][card]
                if played is None:
                    played = _card_played(owner[code], card, False)
                out.append((played, None))
        elif memo is not None and kind in _RECURRING:
            try:
                event = memo.get(raw)
                if event is None:
                    event = typed(raw, None, to_card, boodle_cards)[0]
                    if len(memo) < MEMO_LIMIT:
                        memo[raw] = event
            except TypeError:  # a list in the raw tuple (a caller's Stakes of a list)
                event = typed(raw, None, to_card, boodle_cards)[0]
            out.append((event, None))
        elif kind == E_DEAL:
            masks: tuple[int, ...] = raw[1]
            hands = tuple(cards_of_mask(mask, to_card) for mask in masks)
            sizes = tuple(m.bit_count() for m in masks)
            dead_size = int(raw[2]).bit_count()
            hidden = (None,) * len(masks)
            views: tuple[Event, ...] = tuple(
                CardsDealt(sizes, dead_size, (*hidden[:s], hands[s], *hidden[s + 1 :]), None)
                for s in range(players)
            )
            out.append((CardsDealt(sizes, dead_size, hands, cards_of_mask(raw[2], to_card)), views))
        elif kind == E_SWAP:
            event = typed(raw, None, to_card, boodle_cards)[0]
            assert isinstance(event, HandSwapped)
            hidden_swap = dataclasses.replace(event, hand=None)
            views = tuple(event if seat == raw[1] else hidden_swap for seat in range(players))
            out.append((event, views))
        else:
            out.extend((event, None) for event in typed(raw, None, to_card, boodle_cards))
    return out


def typed_events(
    raws: Iterable[tuple[Any, ...]],
    viewer: int | None,
    to_card: Sequence[Card],
    boodle_cards: Sequence[Card],
) -> list[Event]:
    """Typed events of raw events, as ``viewer`` sees them."""
    out: list[Event] = []
    for raw in raws:
        out.extend(typed(raw, viewer, to_card, boodle_cards))
    return out
