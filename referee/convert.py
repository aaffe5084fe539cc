"""The boundary between the engine and the wire, in both directions.

Out: the engine's typed events (already filtered for one viewer by
``Match.events(viewer=seat)``, the one door hidden cards leave by) become
``protocol.events`` structs, and the engine's pending decision becomes a
``Request`` that carries everything a bot needs to answer it legally.  The
match log gets the omniscient events in a plain JSON form of its own.

In: a reply's choice is judged and applied here and nowhere else.  This is the
one place where an engine error becomes a bot's fault (h11's rule: errors of
the remote side are named where they cross the boundary).  The protocol
judges the choice from the request alone (``protocol.decisions``), then the
engine applies it; if the engine still refuses it, its two error families map
onto the two fault kinds, ``malformed`` and ``illegal``, and the engine state
is unchanged (the engine guarantees that), so the default can be applied.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any

from engine import events as ev
from engine.actions import Action, Bid, DeadHandChoice, Decision, Stakes
from engine.cards import Card
from engine.errors import IllegalActionError, MalformedActionError, MalformedCardError
from engine.state import Match
from protocol.decisions import ChoiceFault, choice_fault, default_choice
from protocol.events import (
    BidsRevealed,
    BoodleWon,
    CardPlayed,
    CardsDealt,
    ChipsPaid,
    DeadHandDecided,
    Event,
    HandBlocked,
    HandEnded,
    HandStarted,
    HandSwapped,
    KittyWon,
    LeadPassed,
    PlayerEliminated,
    PotShared,
    RunStopped,
    StakePlaced,
    WentOut,
)
from protocol.messages import Choice, DecisionKind, Request

# ---------------------------------------------------------------- engine -> protocol


def _text(cards: tuple[Card, ...] | None) -> list[str] | None:
    return None if cards is None else [str(card) for card in cards]


def protocol_event(event: ev.Event) -> Event | None:
    """An engine event, already filtered for one viewer, as a protocol event.

    ``MatchEnded`` gives None: the ``match_end`` message carries the referee's
    result, which also ranks disqualified seats.
    """
    match event:
        case ev.CardPlayed(seat, card, lead):
            return CardPlayed(seat=seat, card=str(card), lead=lead)
        case ev.RunStopped(card, cause, missing):
            return RunStopped(
                card=str(card),
                cause=cause,  # type: ignore[arg-type]  # the engine's three causes
                missing=None if missing is None else str(missing),
            )
        case ev.HandStarted(hand, dealer):
            return HandStarted(hand_number=hand, dealer=dealer)
        case ev.PlayerEliminated(seat, chips, shares):
            return PlayerEliminated(seat=seat, chips=chips, shares=list(shares))
        case ev.StakePlaced(seat, amounts, kitty):
            return StakePlaced(seat=seat, amounts=list(amounts), kitty=kitty)
        case ev.CardsDealt(hand_sizes, dead_hand_size, hands, _dead):
            # The viewer's own hand is the one not hidden (every hand for viewer=None,
            # which is never sent to a bot).
            own = next((hand for hand in hands if hand is not None), ())
            return CardsDealt(
                hand_sizes=list(hand_sizes),
                dead_hand_size=dead_hand_size,
                hand=[str(card) for card in own],
            )
        case ev.DeadHandDecided(dealer, choice):
            return DeadHandDecided(dealer=dealer, choice=choice)  # type: ignore[arg-type]
        case ev.BidsRevealed(bids):
            return BidsRevealed(bids=list(bids))
        case ev.HandSwapped(seat, price, paid_to, hand, hand_size):
            return HandSwapped(
                seat=seat, price=price, paid_to=paid_to, hand=_text(hand), hand_size=hand_size
            )
        case ev.BoodleWon(seat, card, chips):
            return BoodleWon(seat=seat, card=str(card), chips=chips)
        case ev.LeadPassed(from_seat, to_seat):
            return LeadPassed(from_seat=from_seat, to_seat=to_seat)
        case ev.HandBlocked():
            return HandBlocked()
        case ev.WentOut(seat):
            return WentOut(seat=seat)
        case ev.ChipsPaid(payer, payee, chips, owed):
            return ChipsPaid(payer=payer, payee=payee, chips=chips, owed=owed)
        case ev.PotShared(seat, chips):
            return PotShared(seat=seat, chips=chips)
        case ev.KittyWon(seat, chips):
            return KittyWon(seat=seat, chips=chips)
        case ev.HandEnded(hands, dead_hand, winners):
            return HandEnded(
                hands=[[str(card) for card in hand] for hand in hands],
                dead_hand=[str(card) for card in dead_hand],
                winners=list(winners),
            )
        case ev.MatchEnded():
            return None
    raise AssertionError(f"no protocol event for {event!r}")


def protocol_events(events: Sequence[ev.Event]) -> list[Event]:
    out: list[Event] = []
    for event in events:
        converted = protocol_event(event)
        if converted is not None:
            out.append(converted)
    return out


# ---------------------------------------------------------------- engine -> log

_FIELDS: dict[type[Any], tuple[str, ...]] = {}
_NAMES: dict[type[Any], str] = {}


def event_name(cls: type[Any]) -> str:
    """``HandStarted`` -> ``hand_started``."""
    name = _NAMES.get(cls)
    if name is None:
        name = re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()
        _NAMES[cls] = name
    return name


def _plain(value: Any) -> Any:
    if isinstance(value, Card):
        return str(value)
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    return value


def log_event(event: ev.Event) -> dict[str, Any]:
    """An omniscient engine event as plain JSON: ``{"type": "card_played", "seat": 0, ...}``.

    Field for field the engine's dataclass, cards as their text, tuples as
    lists; the match log's form, which replay compares line by line.
    """
    cls = type(event)
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = tuple(field.name for field in dataclasses.fields(cls))
        _FIELDS[cls] = fields
    out: dict[str, Any] = {"type": event_name(cls)}
    for name in fields:
        out[name] = _plain(getattr(event, name))
    return out


# ---------------------------------------------------------------- requests


def build_request(
    match: Match, request_id: int, *, time_left_ms: int, time_bank_ms: int
) -> Request:
    """The request for the seat to act now, with its legal choices and the default."""
    seat = match.current_seat()
    decision = match.decision
    if seat is None or decision is None:
        raise ValueError("build_request: the match is over")
    rules = match.rules
    legal: list[str] = []
    kind: DecisionKind
    min_bid = max_bid = stake_total = None
    boodle_cards = None
    if decision is Decision.LEAD:
        kind = "lead"
        legal = [str(card) for card in match.legal_actions()]
    elif decision is Decision.DEAD_HAND:
        kind = "dead_hand"
        legal = [choice.value for choice in match.legal_actions()]
    elif decision is Decision.BID:
        kind = "bid"
        min_bid, max_bid = 0, match.chips[seat]
    else:
        kind = "stake"
        stake_total = rules.stake_total
        boodle_cards = [str(card) for card in rules.boodle_cards]
    # Stakes come before the deal: no cards to show yet (the last hand's are gone).
    before_deal = decision is Decision.STAKE
    return Request(
        id=request_id,
        decision=kind,
        legal=legal,
        default=default_choice(
            kind, legal, stake_total=rules.stake_total, boodle_cards=len(rules.boodle_cards)
        ),
        hand=[] if before_deal else [str(card) for card in match.hand_of(seat)],
        hand_sizes=[0] * match.players if before_deal else list(match.hand_sizes()),
        chips=list(match.chips),
        boodle=list(match.boodle_stacks),
        kitty=match.kitty,
        time_left_ms=time_left_ms,
        time_bank_ms=time_bank_ms,
        min_bid=min_bid,
        max_bid=max_bid,
        stake_total=stake_total,
        boodle_cards=boodle_cards,
    )


# ---------------------------------------------------------------- protocol -> engine


def to_action(decision: DecisionKind, choice: Choice) -> Action:
    """A choice of the right shape for ``decision`` as an engine action.

    Raises ``MalformedActionError`` when the shape is wrong; callers judge the
    choice first (``apply_choice``), so this only fails on a referee bug or a
    tampered log.
    """
    try:
        if decision == "lead" and isinstance(choice, str):
            return Card.parse(choice)
        if decision == "dead_hand" and isinstance(choice, str):
            return DeadHandChoice(choice)
        if decision == "bid" and isinstance(choice, int) and not isinstance(choice, bool):
            return Bid(choice)
        if decision == "stake" and isinstance(choice, list):
            return Stakes(tuple(choice))
    except (MalformedCardError, ValueError) as error:
        raise MalformedActionError(f"{decision}: {error}") from None
    raise MalformedActionError(f"{decision}: {choice!r} is not a choice of this kind")


def apply_choice(match: Match, request: Request, choice: Choice) -> ChoiceFault | None:
    """Apply a bot's ``choice`` to ``request``; None if applied, else the fault (nothing applied).

    The one boundary where engine errors become bot faults.
    """
    fault = choice_fault(request, choice)
    if fault is not None:
        return fault
    try:
        match.apply(to_action(request.decision, choice))
    except MalformedActionError as error:
        return ChoiceFault("malformed", str(error))
    except IllegalActionError as error:
        return ChoiceFault("illegal", str(error))
    return None


def apply_default(match: Match, request: Request) -> None:
    """Apply the request's default choice; it is always legal, so a refusal is a referee bug."""
    match.apply(to_action(request.decision, request.default))
