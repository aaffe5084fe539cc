"""The events of a match as they travel to one seat: ``Event``, a tagged union.

One struct per event of ``engine/events.py``, field for field, so a bot sees
what the engine records and nothing is lost or reinterpreted on the way.  The
differences are the wire's, not the game's: cards are their canonical text
(``"TH"``); pairs are two-element arrays; a seat's own cards are a list and
another seat's are never sent (the referee builds these structs from the
engine's per-seat view, the one door hidden cards leave by).  Two changes of
name avoid one key meaning two things on the wire: the engine's
``HandStarted.hand`` (a number) is ``hand_number`` here, and ``CardsDealt``
carries only the viewer's own ``hand``.  The engine's ``MatchEnded`` is not an
event here: the ``match_end`` message carries the referee's final places,
which also rank disqualified seats (``protocol.messages``).  One event is the
referee's own: ``seat_disqualified``.

Events are never sent alone; they arrive in order inside an ``events`` message.
These structs do not forbid unknown fields: they travel only from the referee
to bots, which must ignore what they do not know (SPEC.md, "Versioning").
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

Seat = Annotated[int, msgspec.Meta(ge=0, le=7)]
Chips = Annotated[int, msgspec.Meta(ge=0)]
# A Literal, not a str with a pattern: msgspec checks a Literal of strings with one hash
# lookup, a pattern with a regular expression per card, which was most of a Python bot's
# decoding (docs/speed.md).  The error still names the bad text and where it was.
# fmt: off
CardText = Literal[
    "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC", "JC", "QC", "KC", "AC",
    "2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD", "JD", "QD", "KD", "AD",
    "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH", "AH",
    "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "JS", "QS", "KS", "AS",
]
# fmt: on
"""A card: rank ``2-9 T J Q K A`` then suit ``C D H S``, e.g. ``"TH"``."""

StopCause = Literal["top", "dead", "played"]
DeadHandChoiceText = Literal["auction", "buy", "exchange", "keep"]


class _Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """Shared settings: tag field ``type``, immutable, unknown fields ignored.

    Each subclass repeats ``frozen=True``: msgspec inherits it, but mypy's
    dataclass transform reads it from every class's own arguments.
    """


class HandStarted(_Event, tag="hand_started", frozen=True):
    """A hand begins; ``dealer`` deals it (hands are numbered from 1)."""

    hand_number: Annotated[int, msgspec.Meta(ge=1)]
    dealer: Seat


class PlayerEliminated(_Event, tag="player_eliminated", frozen=True):
    """Before a deal, ``seat`` could not pay its stake and is out of the match.

    ``chips`` is what it held; ``shares`` lists ``[seat, chips]`` received by
    each remaining player (seats that received nothing are left out).
    """

    seat: Seat
    chips: Chips
    shares: list[tuple[Seat, Chips]]


class StakePlaced(_Event, tag="stake_placed", frozen=True):
    """``seat`` put ``amounts`` on the boodle cards (in rules order) and ``kitty`` in the kitty."""

    seat: Seat
    amounts: list[Chips]
    kitty: Chips


class CardsDealt(_Event, tag="cards_dealt", frozen=True):
    """The deal: every seat's card count (0 for seats out), the dead hand's, and your own cards."""

    hand_sizes: list[Annotated[int, msgspec.Meta(ge=0, le=52)]]
    dead_hand_size: Annotated[int, msgspec.Meta(ge=0, le=52)]
    hand: list[CardText]


class DeadHandDecided(_Event, tag="dead_hand_decided", frozen=True):
    """The dealer's choice about the dead hand: keep, exchange, auction or buy."""

    dealer: Seat
    choice: DeadHandChoiceText


class BidsRevealed(_Event, tag="bids_revealed", frozen=True):
    """The sealed auction bids, ``[seat, chips]`` in bidding order; 0 is no bid."""

    bids: list[tuple[Seat, Chips]]


class HandSwapped(_Event, tag="hand_swapped", frozen=True):
    """``seat`` took the dead hand unseen and its old hand became the dead hand.

    ``price`` is what it paid: to the dealer ``paid_to`` after an auction, into
    the kitty after a purchase (``paid_to`` null), or nothing for a free
    exchange.  ``hand`` is the new hand, sent only to ``seat`` itself (null to
    everyone else); ``hand_size`` is public.
    """

    seat: Seat
    price: Chips
    paid_to: Seat | None
    hand: list[CardText] | None
    hand_size: Annotated[int, msgspec.Meta(ge=0, le=52)]


class CardPlayed(_Event, tag="card_played", frozen=True):
    """``seat`` played ``card``: a lead (``lead`` true) or a forced follow (false)."""

    seat: Seat
    card: CardText
    lead: bool


class BoodleWon(_Event, tag="boodle_won", frozen=True):
    """``seat`` played the boodle card ``card`` and took the ``chips`` on it."""

    seat: Seat
    card: CardText
    chips: Chips


class RunStopped(_Event, tag="run_stopped", frozen=True):
    """The run ended at ``card``.

    ``cause``: ``top`` (the top card of the suit was played; ``missing`` is
    null), ``dead`` (``missing`` is in the dead hand) or ``played`` (``missing``
    was played earlier in this hand).
    """

    card: CardText
    cause: StopCause
    missing: CardText | None


class LeadPassed(_Event, tag="lead_passed", frozen=True):
    """``lead_suit=change_or_pass``: ``from_seat`` held only the stopped suit; ``to_seat`` leads."""

    from_seat: Seat
    to_seat: Seat


class HandBlocked(_Event, tag="hand_blocked", frozen=True):
    """``lead_suit=change_or_pass``: no live seat holds another suit; the hand ends unfinished."""


class WentOut(_Event, tag="went_out", frozen=True):
    """``seat`` played its last card and won the hand."""

    seat: Seat


class ChipsPaid(_Event, tag="chips_paid", frozen=True):
    """``payer`` paid ``chips`` of the ``owed`` to ``payee``.

    ``chips`` is less than ``owed`` when the payer ran out.  ``payee`` is null
    when a blocked hand has several winners: the chips go into a pot that they
    share (see ``pot_shared``).
    """

    payer: Seat
    payee: Seat | None
    chips: Chips
    owed: Chips


class PotShared(_Event, tag="pot_shared", frozen=True):
    """One blocked-hand winner's share of the pot."""

    seat: Seat
    chips: Chips


class KittyWon(_Event, tag="kitty_won", frozen=True):
    """``seat`` went out and took the ``chips`` in the kitty."""

    seat: Seat
    chips: Chips


class HandEnded(_Event, tag="hand_ended", frozen=True):
    """The hand is over; every seat's remaining cards and the dead hand are shown to all.

    ``hands`` has one list per seat (empty for seats out and for the one who
    went out); ``winners`` is who went out, or the blocked-hand winners, or
    empty when nobody won.
    """

    hands: list[list[CardText]]
    dead_hand: list[CardText]
    winners: list[Seat]


class SeatDisqualified(_Event, tag="seat_disqualified", frozen=True):
    """The referee disqualified ``seat`` (``reason``: the fault kind that decided it).

    From here on the referee makes that seat's decisions by the default policy.
    """

    seat: Seat
    reason: str


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
    | SeatDisqualified
)

EVENT_TYPES: tuple[type[_Event], ...] = (
    HandStarted,
    PlayerEliminated,
    StakePlaced,
    CardsDealt,
    DeadHandDecided,
    BidsRevealed,
    HandSwapped,
    CardPlayed,
    BoodleWon,
    RunStopped,
    LeadPassed,
    HandBlocked,
    WentOut,
    ChipsPaid,
    PotShared,
    KittyWon,
    HandEnded,
    SeatDisqualified,
)

EVENT_TAGS: frozenset[str] = frozenset(str(cls.__struct_config__.tag) for cls in EVENT_TYPES)
