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

import bisect
import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any, cast, get_args

import msgspec

from engine import events as ev
from engine.actions import Action, Bid, DeadHandChoice, Decision, Stakes
from engine.cards import CARDS, Card
from engine.errors import IllegalActionError, MalformedActionError, MalformedCardError
from engine.outcome import Outcome
from engine.state import Match
from protocol.decisions import ChoiceFault, choice_fault, default_choice
from protocol.events import (
    BidsRevealed,
    BoodleWon,
    CardPlayed,
    CardsDealt,
    CardText,
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
from protocol.framing import MAX_LINE_BYTES, LineTooLongError
from protocol.messages import Choice, DecisionKind, MatchEnd, MatchStart, Request
from referee.match.result import final_places
from referee.transport.timecontrol import TimeControl

# ---------------------------------------------------------------- engine -> protocol


# Card texts by card number: ``str(card)`` without a method call, on the hot path.
CARD_TEXT: tuple[CardText, ...] = tuple(cast(CardText, str(card)) for card in CARDS)
assert set(CARD_TEXT) == set(get_args(CardText)), "the engine's cards are the protocol's"


def _texts(cards: Sequence[Card]) -> list[CardText]:
    return [CARD_TEXT[card] for card in cards]


def _texts_or_none(cards: Sequence[Card] | None) -> list[CardText] | None:
    return None if cards is None else [CARD_TEXT[card] for card in cards]


def _cards_dealt(event: ev.CardsDealt) -> CardsDealt:
    # The viewer's own hand is the one not hidden (every hand for viewer=None,
    # which is never sent to a bot).
    own = next((hand for hand in event.hands if hand is not None), ())
    return CardsDealt(
        hand_sizes=list(event.hand_sizes), dead_hand_size=event.dead_hand_size, hand=_texts(own)
    )


def _run_stopped(event: ev.RunStopped) -> RunStopped:
    missing = None if event.missing is None else CARD_TEXT[event.missing]
    cause: Any = event.cause  # the engine's three causes are the protocol's
    return RunStopped(card=CARD_TEXT[event.card], cause=cause, missing=missing)


def _dead_hand_decided(event: ev.DeadHandDecided) -> DeadHandDecided:
    choice: Any = event.choice  # the engine's four choices are the protocol's
    return DeadHandDecided(dealer=event.dealer, choice=choice)


def _hand_swapped(event: ev.HandSwapped) -> HandSwapped:
    return HandSwapped(
        seat=event.seat,
        price=event.price,
        paid_to=event.paid_to,
        hand=_texts_or_none(event.hand),
        hand_size=event.hand_size,
    )


def _hand_ended(event: ev.HandEnded) -> HandEnded:
    return HandEnded(
        hands=[_texts(hand) for hand in event.hands],
        dead_hand=_texts(event.dead_hand),
        winners=list(event.winners),
    )


# One converter per engine event type: a dictionary lookup, not a chain of patterns,
# because this runs for every event, for every seat, in every match.
_TO_PROTOCOL: dict[type[Any], Callable[[Any], Event | None]] = {
    ev.CardPlayed: lambda e: CardPlayed(seat=e.seat, card=CARD_TEXT[e.card], lead=e.lead),
    ev.RunStopped: _run_stopped,
    ev.HandStarted: lambda e: HandStarted(hand_number=e.hand, dealer=e.dealer),
    ev.PlayerEliminated: lambda e: PlayerEliminated(
        seat=e.seat, chips=e.chips, shares=list(e.shares)
    ),
    ev.StakePlaced: lambda e: StakePlaced(seat=e.seat, amounts=list(e.amounts), kitty=e.kitty),
    ev.CardsDealt: _cards_dealt,
    ev.DeadHandDecided: _dead_hand_decided,
    ev.BidsRevealed: lambda e: BidsRevealed(bids=list(e.bids)),
    ev.HandSwapped: _hand_swapped,
    ev.BoodleWon: lambda e: BoodleWon(seat=e.seat, card=CARD_TEXT[e.card], chips=e.chips),
    ev.LeadPassed: lambda e: LeadPassed(from_seat=e.from_seat, to_seat=e.to_seat),
    ev.HandBlocked: lambda e: HandBlocked(),
    ev.WentOut: lambda e: WentOut(seat=e.seat),
    ev.ChipsPaid: lambda e: ChipsPaid(payer=e.payer, payee=e.payee, chips=e.chips, owed=e.owed),
    ev.PotShared: lambda e: PotShared(seat=e.seat, chips=e.chips),
    ev.KittyWon: lambda e: KittyWon(seat=e.seat, chips=e.chips),
    ev.HandEnded: _hand_ended,
    # The match_end message carries the referee's result, which also ranks
    # disqualified seats: the engine's MatchEnded is not sent as an event.
    ev.MatchEnded: lambda e: None,
}


def protocol_event(event: ev.Event) -> Event | None:
    """An engine event, already filtered for one viewer, as a protocol event (None: not sent)."""
    convert = _TO_PROTOCOL.get(type(event))
    if convert is None:
        raise AssertionError(f"no protocol event for {event!r}")
    return convert(event)


def protocol_events(events: Sequence[ev.Event]) -> list[Event]:
    out: list[Event] = []
    table = _TO_PROTOCOL
    for event in events:
        converted = table[type(event)](event)
        if converted is not None:
            out.append(converted)
    return out


# ---------------------------------------------------------------- events on the wire

_encoder = msgspec.json.Encoder()
_EVENTS_HEAD = b'{"type":"events","events":['
_EVENTS_TAIL = b"]}\n"


def wire_event(event: Event) -> bytes:
    """A protocol event's JSON, as it appears inside an ``events`` message."""
    return _encoder.encode(event)


# card_played's JSON by (seat, card, lead): at most 8 * 52 * 2 entries, each encoded once.
_CARD_PLAYED_JSON: dict[tuple[int, int, bool], bytes] = {}


# The JSON of public events that recur with the same fields (engine events are frozen
# and hashable), each encoded once: a run stopped by the same card, the same stakes
# every hand, a lead passed between the same seats.  Cleared when it grows past its limit.
_REPEATING: frozenset[type[Any]] = frozenset(
    {
        ev.RunStopped,
        ev.StakePlaced,
        ev.LeadPassed,
        ev.WentOut,
        ev.HandBlocked,
        ev.BoodleWon,
        ev.ChipsPaid,
        ev.PotShared,
        ev.KittyWon,
        ev.DeadHandDecided,
    }
)
_PUBLIC_JSON: dict[ev.Event, bytes] = {}
_PUBLIC_JSON_LIMIT = 20_000


def wire_views(views: ev.EventViews) -> bytes | tuple[bytes, ...] | None:
    """One engine event (``Match.event_views``) as the wire's JSON, encoded once.

    Bytes when every seat is sent the same (most events), a tuple of each
    seat's bytes for an event whose view differs per seat, None for an event
    that is never sent (``MatchEnded``).
    """
    omniscient, each = views
    table = _TO_PROTOCOL
    if type(omniscient) is ev.CardPlayed:  # a public event, and most events: from a table
        key = (omniscient.seat, omniscient.card, omniscient.lead)
        json = _CARD_PLAYED_JSON.get(key)
        if json is None:
            json = _CARD_PLAYED_JSON[key] = _encoder.encode(table[ev.CardPlayed](omniscient))
        return json
    if each is None:
        kind = type(omniscient)
        if kind in _REPEATING:  # a stop, a pass, a stake...: the same few over and over
            json = _PUBLIC_JSON.get(omniscient)
            if json is None:
                if len(_PUBLIC_JSON) >= _PUBLIC_JSON_LIMIT:
                    _PUBLIC_JSON.clear()
                event = table[kind](omniscient)
                assert event is not None
                json = _PUBLIC_JSON[omniscient] = _encoder.encode(event)
            return json
        event = table[kind](omniscient)
        return None if event is None else _encoder.encode(event)
    encoded: list[bytes] = []
    for view in each:
        event = table[type(view)](view)
        assert event is not None
        encoded.append(_encoder.encode(event))
    return tuple(encoded)


# Engine events whose log form (``log_event``) is not their wire form: the log keeps
# the engine's field names and is omniscient (``referee.tools.transcript`` maps them).
LOG_DIFFERS_FROM_WIRE: frozenset[type[Any]] = frozenset(
    {ev.HandStarted, ev.CardsDealt, ev.HandSwapped, ev.MatchEnded}
)

# The wire JSON of event objects met before, by the object's identity: a card played
# (the engine makes each (seat, card, lead) once) and a recurring public event (the
# engine makes each once per match, given a memo: ``Match.event_views``).  An int
# lookup, where the tables above hash a dataclass or build a key.  Each entry keeps
# its event alive, so its id is no other object's while it is here, and a caller
# checks ``entry[0] is event``.  Cleared when it grows past its limit.
WIRE_BY_ID: dict[int, tuple[ev.Event, bytes]] = {}
_WIRE_BY_ID_LIMIT = 20_000
_BY_ID_KINDS: frozenset[type[Any]] = _REPEATING | {ev.CardPlayed}
assert not _BY_ID_KINDS & LOG_DIFFERS_FROM_WIRE, "their wire bytes are their log's too"


def remember_wire(event: ev.Event, wire: bytes | tuple[bytes, ...] | None) -> None:
    """Keep ``wire`` (``wire_views``) in ``WIRE_BY_ID`` if ``event`` is of a kind that recurs."""
    if type(event) in _BY_ID_KINDS and isinstance(wire, bytes):
        if len(WIRE_BY_ID) >= _WIRE_BY_ID_LIMIT:
            WIRE_BY_ID.clear()
        WIRE_BY_ID[id(event)] = (event, wire)


def events_line(fragments: Sequence[bytes]) -> bytes:
    """An ``events`` message from its events' JSON (``wire_event``), as one protocol line.

    Byte for byte ``encode(Events(events=[...]))``, without decoding and
    encoding each event again for every seat that is sent it.
    """
    line = _EVENTS_HEAD + b",".join(fragments) + _EVENTS_TAIL
    if len(line) > MAX_LINE_BYTES + 1:
        raise LineTooLongError(
            f"a Events message encodes to {len(line) - 1} bytes; the limit is {MAX_LINE_BYTES}"
        )
    return line


# ---------------------------------------------------------------- a log's transcript items


def extend_feed(
    events: Sequence[ev.Event], start: int, upto: int, feed: list[bytes], hand_ends: list[int]
) -> None:
    """Add engine events ``start`` to ``upto`` to ``feed``, the seats' events as a log's
    ``sent`` lines name them (each event's number ``n``; ``match_ended`` is never sent:
    ``match_end`` carries it), and to ``hand_ends`` the feed index just after each
    ``hand_ended``.  The transcript check follows a log with it and a compact record's
    model makes a log's ``sent`` lines with it, so the two cannot part."""
    append = feed.append
    match_ended, hand_ended = ev.MatchEnded, ev.HandEnded
    for n in range(start, upto):
        kind = type(events[n])
        if kind is match_ended:
            continue
        append(b"%d" % n)
        if kind is hand_ended:
            hand_ends.append(len(feed))


def feed_lines(feed: Sequence[bytes], hand_ends: list[int], start: int, stop: int) -> list[bytes]:
    """The ``events`` items of feed entries ``start`` to ``stop`` in a ``sent`` line, one
    list a write, cut after each hand's end as the referee cuts its writes."""
    lines: list[bytes] = []
    first = start
    cuts = hand_ends[bisect.bisect_right(hand_ends, start) : bisect.bisect_right(hand_ends, stop)]
    for end in cuts:
        lines.append(b"[" + b",".join(feed[first:end]) + b"]")
        first = end
    if stop > first:
        lines.append(b"[" + b",".join(feed[first:stop]) + b"]")
    return lines


# ---------------------------------------------------------------- engine -> log

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
        return CARD_TEXT[value]
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    return value


def _generic_log_event(cls: type[Any]) -> Callable[[Any], dict[str, Any]]:
    name = event_name(cls)
    fields = tuple(field.name for field in dataclasses.fields(cls))

    def convert(event: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"type": name}
        for field in fields:
            out[field] = _plain(getattr(event, field))
        return out

    return convert


def _log_card_played(event: ev.CardPlayed) -> dict[str, Any]:
    # The commonest event by far; the very dict the generic converter builds.
    card = CARD_TEXT[event.card]
    return {"type": "card_played", "seat": event.seat, "card": card, "lead": event.lead}


def _log_cards_dealt(event: ev.CardsDealt) -> dict[str, Any]:
    # Once a hand, with every hand's cards: the very dict the generic converter builds,
    # without its recursive walk (a call and three isinstance checks per card).
    dead = event.dead_hand
    return {
        "type": "cards_dealt",
        "hand_sizes": list(event.hand_sizes),
        "dead_hand_size": event.dead_hand_size,
        "hands": [None if hand is None else [CARD_TEXT[c] for c in hand] for hand in event.hands],
        "dead_hand": None if dead is None else [CARD_TEXT[c] for c in dead],
    }


_TO_LOG: dict[type[Any], Callable[[Any], dict[str, Any]]] = {
    ev.CardPlayed: _log_card_played,
    ev.CardsDealt: _log_cards_dealt,
}


def log_event(event: ev.Event) -> dict[str, Any]:
    """An omniscient engine event as plain JSON: ``{"type": "card_played", "seat": 0, ...}``.

    Field for field the engine's dataclass, cards as their text, tuples as
    lists; the match log's form, which replay compares line by line.
    """
    cls = type(event)
    convert = _TO_LOG.get(cls)
    if convert is None:
        convert = _TO_LOG[cls] = _generic_log_event(cls)
    return convert(event)


# ---------------------------------------------------------------- a match's first and last


def match_start(
    match_id: str,
    seat: int,
    names: Sequence[str],
    rules: dict[str, Any],
    chips: Sequence[int],
    control: TimeControl,
) -> MatchStart:
    """The ``match_start`` for ``seat``, as the referee sends it and as a log's checker
    (``referee.tools.transcript_check``) and a compact record's model make it again."""
    return MatchStart(
        match_id=match_id,
        seat=seat,
        players=len(names),
        names=list(names),
        rules=rules,
        chips=list(chips),
        move_time_ms=control.move_time_ms,
        time_bank_ms=control.time_bank_ms,
    )


def match_end(match_id: str, outcome: Outcome, disqualified: Sequence[bool]) -> MatchEnd:
    """The ``match_end`` every live seat is sent, from the engine's outcome (the places with
    the disqualified last, ``final_places``), as ``match_start`` is shared."""
    return MatchEnd(
        match_id=match_id,
        places=final_places(outcome.places, disqualified),
        chips=list(outcome.chips),
        reason=outcome.reason,
        hands_played=outcome.hands_played,
        disqualified=[seat for seat, out in enumerate(disqualified) if out],
    )


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
    if decision is Decision.LEAD:  # most requests
        kind = "lead"
        legal = list(map(CARD_TEXT.__getitem__, match.legal_actions()))
    elif decision is Decision.DEAD_HAND:
        kind = "dead_hand"
        legal = [choice.value for choice in match.legal_actions()]
    elif decision is Decision.BID:
        kind = "bid"
        min_bid, max_bid = 0, match.chips[seat]
    else:
        kind = "stake"
        stake_total = rules.stake_total
        boodle_cards = [CARD_TEXT[card] for card in rules.boodle_cards]
    # Stakes come before the deal: no cards to show yet (the last hand's are gone).
    before_deal = decision is Decision.STAKE
    default: Choice
    if kind == "lead" and legal:
        default = legal[0]  # default_choice's answer for a lead, without the call
    else:
        default = default_choice(
            kind, legal, stake_total=rules.stake_total, boodle_cards=len(rules.boodle_cards)
        )
    return Request(
        id=request_id,
        decision=kind,
        legal=legal,
        default=default,
        hand=[] if before_deal else list(map(CARD_TEXT.__getitem__, match.hand_of(seat))),
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
    # The commonest reply, a card of the request's own list: ``choice_fault`` would
    # pass it, and ``to_action`` would ``Card.parse`` it.
    card = type(choice) is str and request.decision == "lead" and choice in request.legal
    if not card:
        fault = choice_fault(request, choice)
        if fault is not None:
            return fault
    try:
        action = Card.parse(choice) if card else to_action(request.decision, choice)  # type: ignore[arg-type]
        match.apply(action)
    except MalformedActionError as error:
        return ChoiceFault("malformed", str(error))
    except IllegalActionError as error:
        return ChoiceFault("illegal", str(error))
    return None


def apply_default(match: Match, request: Request) -> None:
    """Apply the request's default choice; it is always legal, so a refusal is a referee bug."""
    match.apply(to_action(request.decision, request.default))
