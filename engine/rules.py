"""Every rule option of RULES.md as one frozen, validated value.

``Rules`` holds every point on which the five source texts disagree; the
presets (``engine.presets``) are named values of it.  A ``Rules`` is checked
when it is made, so an engine never runs with a contradiction in its options,
and every error names the option that is wrong.

Options can also be set from text (``--option lead_suit=change_or_pass`` on the
command line, or a TOML file): ``Rules.with_options`` parses and validates them.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Mapping
from typing import Any

from engine.cards import Card, RankOrder, cards_text
from engine.errors import MalformedCardError, RulesError


class Ante(enum.StrEnum):
    """How stakes reach the boodle cards before each deal."""

    FIXED = "fixed"  # seeds 000/001: ante_per_card on every card, the dealer dealer_ante_per_card
    FREE = "free"  # 000 variation, 002, 003, 004: stake_total chips spread as each player chooses


class Dealing(enum.StrEnum):
    ROUND_ROBIN = "round_robin"  # 000/004: the whole pack, one at a time; hands differ by <= 1
    EQUAL_HANDS = "equal_hands"  # 002/003: equal hands, the over-cards go to the dead hand


class DeadHandExchange(enum.StrEnum):
    OFF = "off"
    EXCHANGE = "exchange"  # 000 variation: the dealer may swap unseen
    EXCHANGE_OR_AUCTION = "exchange_or_auction"  # 000 variation: ... or auction it, sealed bids
    PURCHASE = "purchase"  # 004 variation: the dealer may pay purchase_fee to swap


class LeadSuit(enum.StrEnum):
    """Which suits a leader may choose after a stop (the first lead of a hand is always free)."""

    ANY = "any"  # 000/001 main rule
    CHANGE_OR_SAME = "change_or_same"  # 000/001 variation, 004
    CHANGE_OR_PASS = "change_or_pass"  # 000/001 variation, 002, 003


class Payment(enum.StrEnum):
    """What each other player pays the one who goes out."""

    PER_CARD = "per_card"  # 000/001/003/004: 1 chip per card still held
    FLAT = "flat"  # 002: 1 chip from each


class BlockedHand(enum.StrEnum):
    """Settlement when nobody can lead (only reachable with lead_suit=change_or_pass)."""

    NOBODY_PAYS = "nobody_pays"  # 000/001
    FEWEST_FLAT = "fewest_flat"  # 002: fewest cards wins 1 chip from each; equal fewest divide
    FEWEST_DIFFERENCE = "fewest_difference"  # 003: each rival pays the difference in cards


def _doc(text: str) -> Any:
    return {"doc": text}


MAX_STAKE_PLACEMENTS = 20_000
"""Free stakes: the most ways to spread stake_total over the boodle cards (10 over 4 is 286)."""

DEFAULT_BOODLE: tuple[Card, ...] = tuple(Card.parse(t) for t in ("AS", "KH", "QC", "JD"))


@dataclasses.dataclass(frozen=True, slots=True)
class Rules:
    """The complete rule set of a match. Defaults are the `boodle` preset (seed 000)."""

    rank_order: RankOrder = dataclasses.field(
        default=RankOrder.ACES_HIGH,
        metadata=_doc("aces_high (2 low .. A high, 000-003) or aces_low (A low .. K high, 004)"),
    )
    boodle_cards: tuple[Card, ...] = dataclasses.field(
        default=DEFAULT_BOODLE,
        metadata=_doc("the pay cards that carry stakes; distinct cards, e.g. AS,KH,QC,JD"),
    )
    ante: Ante = dataclasses.field(
        default=Ante.FIXED,
        metadata=_doc("fixed (every player ante_per_card on each card) or free (a decision)"),
    )
    ante_per_card: int = dataclasses.field(
        default=1, metadata=_doc("fixed ante: chips each non-dealer puts on every boodle card")
    )
    dealer_ante_per_card: int = dataclasses.field(
        default=2, metadata=_doc("fixed ante: chips the dealer puts on every boodle card")
    )
    stake_total: int = dataclasses.field(
        default=6, metadata=_doc("free ante: chips each player spreads over the boodle cards")
    )
    kitty_ante: int = dataclasses.field(
        default=0,
        metadata=_doc(
            "chips each player puts in the kitty each hand; the one who goes out takes it"
        ),
    )
    starting_chips: int = dataclasses.field(
        default=40, metadata=_doc("chips each player has at the start of the match")
    )
    dealing: Dealing = dataclasses.field(
        default=Dealing.ROUND_ROBIN,
        metadata=_doc("round_robin (whole pack) or equal_hands (over-cards to the dead hand)"),
    )
    dead_hand: bool = dataclasses.field(
        default=True, metadata=_doc("deal one extra hand that is never played (seed 001: false)")
    )
    dead_hand_exchange: DeadHandExchange = dataclasses.field(
        default=DeadHandExchange.OFF,
        metadata=_doc("off, exchange, exchange_or_auction or purchase (the dealer's option)"),
    )
    purchase_fee: int = dataclasses.field(
        default=4, metadata=_doc("purchase: chips the dealer pays into the kitty to swap hands")
    )
    lead_suit: LeadSuit = dataclasses.field(
        default=LeadSuit.ANY,
        metadata=_doc("after a stop: any, change_or_same or change_or_pass"),
    )
    payment: Payment = dataclasses.field(
        default=Payment.PER_CARD,
        metadata=_doc("per_card (1 chip per card held) or flat (1 chip each) to who goes out"),
    )
    blocked_hand: BlockedHand = dataclasses.field(
        default=BlockedHand.NOBODY_PAYS,
        metadata=_doc("nobody_pays, fewest_flat or fewest_difference when no one can lead"),
    )
    end_players: int = dataclasses.field(
        default=2, metadata=_doc("the match ends when this many players or fewer are left")
    )
    hand_limit: int = dataclasses.field(
        default=200, metadata=_doc("the match ends after this many hands; places then by chips")
    )

    def __post_init__(self) -> None:
        _validate(self)

    # -- derived values -------------------------------------------------------------

    def stake_required(self, is_dealer: bool) -> int:
        """Chips a player must pay before a deal; one who cannot pay this is out."""
        if self.ante is Ante.FREE:
            stake = self.stake_total
        else:
            per_card = self.dealer_ante_per_card if is_dealer else self.ante_per_card
            stake = per_card * len(self.boodle_cards)
        return stake + self.kitty_ante

    # -- text -------------------------------------------------------------------------

    def with_options(self, options: Mapping[str, object]) -> Rules:
        """A copy with options changed; values may be text (``"true"``, ``"AS,KH"``) or typed."""
        changes: dict[str, object] = {}
        for key, value in options.items():
            field = _FIELDS.get(key)
            if field is None:
                raise RulesError(
                    f"unknown rule option {key!r}; known options: {', '.join(_FIELDS)}"
                )
            changes[key] = _coerce(key, field.type, value)
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, object]:
        """Every option as plain JSON-ready values (enums as text, cards as text)."""
        out: dict[str, object] = {}
        for name in _FIELDS:
            value = getattr(self, name)
            if name == "boodle_cards":
                out[name] = [str(c) for c in value]
            elif isinstance(value, enum.Enum):
                out[name] = value.value
            else:
                out[name] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Rules:
        return cls().with_options(data)

    @staticmethod
    def option_docs() -> dict[str, str]:
        return {name: str(field.metadata.get("doc", "")) for name, field in _FIELDS.items()}

    def describe(self) -> list[tuple[str, str, str]]:
        """(option, value as text, meaning) for every option, in a stable order."""
        rows = []
        for name, field in _FIELDS.items():
            value = getattr(self, name)
            if name == "boodle_cards":
                text = cards_text(value)
            elif isinstance(value, enum.Enum):
                text = str(value.value)
            elif isinstance(value, bool):
                text = "true" if value else "false"
            else:
                text = str(value)
            rows.append((name, text, str(field.metadata.get("doc", ""))))
        return rows


_FIELDS: dict[str, dataclasses.Field[Any]] = {f.name: f for f in dataclasses.fields(Rules)}

_ENUMS: dict[str, type[enum.StrEnum]] = {
    "rank_order": RankOrder,
    "ante": Ante,
    "dealing": Dealing,
    "dead_hand_exchange": DeadHandExchange,
    "lead_suit": LeadSuit,
    "payment": Payment,
    "blocked_hand": BlockedHand,
}


def _coerce(key: str, annotation: object, value: object) -> object:
    if key in _ENUMS:
        enum_type = _ENUMS[key]
        try:
            return enum_type(str(value))
        except ValueError:
            choices = ", ".join(member.value for member in enum_type)
            raise RulesError(f"{key}: {value!r} is not one of {choices}") from None
    if key == "boodle_cards":
        items: list[object]
        if isinstance(value, str):
            items = [part for part in value.replace(",", " ").split() if part]
        elif isinstance(value, list | tuple):
            items = list(value)
        else:
            raise RulesError("boodle_cards: expected a list of cards such as 'AS,KH,QC,JD'")
        try:
            return tuple(c if isinstance(c, Card) else Card.parse(str(c)) for c in items)
        except MalformedCardError as error:
            raise RulesError(f"boodle_cards: {error}") from None
    if annotation in ("bool", bool):
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "yes", "on", "1"):
            return True
        if text in ("false", "no", "off", "0"):
            return False
        raise RulesError(f"{key}: {value!r} is not true or false")
    # every other option is an int
    if isinstance(value, bool):
        raise RulesError(f"{key}: expected a whole number, got {value!r}")
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        raise RulesError(f"{key}: expected a whole number, got {value!r}") from None


def _validate(rules: Rules) -> None:
    if not isinstance(rules.rank_order, RankOrder):
        raise RulesError(f"rank_order: {rules.rank_order!r} is not aces_high or aces_low")
    for key, enum_type in _ENUMS.items():
        if not isinstance(getattr(rules, key), enum_type):
            raise RulesError(f"{key}: {getattr(rules, key)!r} is not a {enum_type.__name__}")
    cards = rules.boodle_cards
    if not cards:
        raise RulesError("boodle_cards: at least one boodle card is needed")
    if not all(isinstance(c, Card) for c in cards):
        raise RulesError("boodle_cards: every entry must be a Card")
    if len(set(cards)) != len(cards):
        raise RulesError(f"boodle_cards: the cards must be distinct, got {cards_text(cards)}")
    for key in ("ante_per_card", "dealer_ante_per_card", "kitty_ante"):
        value = getattr(rules, key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise RulesError(f"{key}: must be a whole number >= 0, got {value!r}")
    for key in ("stake_total", "starting_chips", "purchase_fee", "end_players", "hand_limit"):
        value = getattr(rules, key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise RulesError(f"{key}: must be a whole number >= 1, got {value!r}")
    if not isinstance(rules.dead_hand, bool):
        raise RulesError(f"dead_hand: must be true or false, got {rules.dead_hand!r}")
    if rules.end_players > 7:
        raise RulesError(
            f"end_players: must be 1..7 (a table seats at most 8), got {rules.end_players}"
        )
    if rules.dealing is Dealing.EQUAL_HANDS and not rules.dead_hand:
        raise RulesError(
            "dealing: equal_hands puts the over-cards in the dead hand, so it needs dead_hand=true"
        )
    if rules.dead_hand_exchange is not DeadHandExchange.OFF and not rules.dead_hand:
        raise RulesError(
            f"dead_hand_exchange: {rules.dead_hand_exchange.value} needs a dead hand "
            "(dead_hand=true)"
        )
    if rules.ante is Ante.FREE:
        # legal_actions() lists every placement, as OpenSpiel does; keep that list usable.
        placements = math.comb(rules.stake_total + len(cards) - 1, len(cards) - 1)
        if placements > MAX_STAKE_PLACEMENTS:
            raise RulesError(
                f"stake_total: {rules.stake_total} chips over {len(cards)} boodle cards can be "
                f"placed {placements:,} ways; at most {MAX_STAKE_PLACEMENTS:,} are supported"
            )
    largest_stake = max(rules.stake_required(is_dealer=True), rules.stake_required(is_dealer=False))
    if rules.starting_chips < largest_stake:
        raise RulesError(
            f"starting_chips: {rules.starting_chips} cannot pay the first hand's largest stake "
            f"({largest_stake} chips)"
        )


OPTION_NAMES: tuple[str, ...] = tuple(_FIELDS)
