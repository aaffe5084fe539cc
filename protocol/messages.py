"""Every message of the bot protocol, as msgspec structs in two tagged unions.

``RefereeMessage`` is what a referee sends and ``BotMessage`` what a bot sends;
both are tagged by a ``"type"`` field with snake_case values, so one line is
one object and ``match msg: case Request(): ...`` dispatches on it.  The types
are the single source of truth: ``protocol/schema.json`` is generated from
them and SPEC.md's examples are checked against them by the tests.

The two directions are decoded in opposite spirits, and that is why there are
two base classes:

* The referee is strict with bots (``_BotMessage`` forbids unknown fields).
  A bot that misspells ``choice`` must hear about it as a ``malformed`` fault
  naming the field, not have its reply silently read as something else.
  ``decode_bot_message`` turns every failure into ``MalformedMessageError``
  with a one-line reason that the referee forwards to the bot.
* A bot is lenient with the referee (``_RefereeMessage`` ignores unknown
  fields, and ``decode_referee_message`` returns None for an unknown message
  type and drops unknown event types).  Version 1 may grow new optional
  fields, messages and events without breaking bots already written
  (SPEC.md, "Versioning").

Encoder and decoders are built once at import and shared, as msgspec advises.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

import msgspec

from protocol.events import EVENT_TAGS, CardText, Chips, Event, Seat
from protocol.framing import MAX_LINE_BYTES, LineTooLongError

PROTOCOL_VERSION: Final = 1
"""Raised only by changes a version-1 bot could not ignore (SPEC.md, "Versioning")."""

DecisionKind = Literal["stake", "dead_hand", "bid", "lead"]
Choice = str | int | list[int]
"""A reply's choice: a card or dead-hand choice (str), a bid (int) or stakes (list[int])."""

RequestId = Annotated[int, msgspec.Meta(ge=1)]
Millis = Annotated[int, msgspec.Meta(ge=0)]


class MalformedMessageError(ValueError):
    """A line is not a valid message; ``str(error)`` is a one-line reason.

    ``problem`` names the class of fault, for code and tests: ``not_utf8``,
    ``not_json``, ``not_object``, ``missing_type``, ``unknown_type``,
    ``missing_field``, ``unknown_field``, ``wrong_type`` (which includes a
    value out of range, such as a negative id) or ``too_deep`` (arrays and
    objects nested past ``MAX_NESTING``).
    """

    def __init__(self, problem: str, reason: str) -> None:
        super().__init__(reason)
        self.problem = problem


# ---------------------------------------------------------------- referee -> bot


class _RefereeMessage(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """Sent by the referee. Unknown fields are ignored when decoding (forward compatible)."""


class Hello(_RefereeMessage, tag="hello", frozen=True):
    """The referee's first line on every connection: the protocol version it speaks."""

    protocol: int
    referee: str


RuleValue = str | int | bool | list[str]


class MatchStart(_RefereeMessage, tag="match_start", frozen=True):
    """A match begins; you play ``seat`` at a table of ``players`` seats.

    ``rules`` holds every rule option by name (SPEC.md, "Rule options");
    ``chips`` is each seat's starting chips.  The seed is never sent.
    """

    match_id: str
    seat: Seat
    players: Annotated[int, msgspec.Meta(ge=3, le=8)]
    names: list[str]
    rules: dict[str, RuleValue]
    chips: list[Chips]
    move_time_ms: Millis
    time_bank_ms: Millis


class Events(_RefereeMessage, tag="events", frozen=True):
    """Everything that happened since the previous ``events`` message, as this seat may see it."""

    events: list[Event]


class Request(_RefereeMessage, tag="request", omit_defaults=True, frozen=True):
    """A decision for this seat; answer with a ``reply`` carrying the same ``id``.

    ``legal`` lists the choices for ``lead`` (cards) and ``dead_hand`` (choice
    words) and is empty for ``bid`` and ``stake``, whose limits are in
    ``min_bid``/``max_bid`` and ``stake_total``/``boodle_cards``; those four
    fields appear only in their own decision.  ``default`` is the choice the
    referee applies if this request faults, and is always a legal reply.
    """

    id: RequestId
    decision: DecisionKind
    legal: list[str]
    default: Choice
    hand: list[CardText]
    hand_sizes: list[Annotated[int, msgspec.Meta(ge=0, le=52)]]
    chips: list[Chips]
    boodle: list[Chips]
    kitty: Chips
    time_left_ms: Millis
    time_bank_ms: Millis
    min_bid: Chips | None = None
    max_bid: Chips | None = None
    stake_total: Chips | None = None
    boodle_cards: list[CardText] | None = None


class Fault(_RefereeMessage, tag="fault", frozen=True):
    """You broke a rule of the protocol or the game; sent to the faulting bot only.

    ``id`` is the request it concerns (null if none); ``applied`` is the
    choice the referee made for you (null if none); ``disqualified`` is true
    when this fault (or the count of faults) disqualified you from the match.
    """

    id: RequestId | None
    kind: str
    detail: str
    disqualified: bool
    applied: Choice | None


class MatchEnd(_RefereeMessage, tag="match_end", frozen=True):
    """The match is over: final ``places`` (1 is best; equal places are shared) and ``chips``.

    ``reason`` is ``players_left`` or ``hand_limit``; ``disqualified`` lists
    the seats disqualified in this match (they rank below all others).
    """

    match_id: str
    places: list[Annotated[int, msgspec.Meta(ge=1, le=8)]]
    chips: list[Chips]
    reason: str
    hands_played: Annotated[int, msgspec.Meta(ge=0)]
    disqualified: list[Seat]


class Shutdown(_RefereeMessage, tag="shutdown", frozen=True):
    """No more matches: exit promptly with status 0."""


RefereeMessage = Hello | MatchStart | Events | Request | Fault | MatchEnd | Shutdown

# ---------------------------------------------------------------- bot -> referee


class _BotMessage(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="type", forbid_unknown_fields=True
):
    """Sent by a bot. Unknown fields are a ``malformed`` fault: the referee is strict."""


class Ready(_BotMessage, tag="ready", frozen=True, omit_defaults=True):
    """The bot's first line: who it is and which protocol version it speaks.

    ``token`` is required when the referee set one (TCP); ``version`` is free text.
    """

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    protocol: int
    version: Annotated[str, msgspec.Meta(max_length=64)] = ""
    token: str | None = None


class Reply(_BotMessage, tag="reply", frozen=True):
    """The answer to the request with the same ``id``.

    ``choice`` is a card (``lead``), a choice word (``dead_hand``), a whole
    number of chips (``bid``) or one amount per boodle card (``stake``).
    """

    id: RequestId
    choice: Choice


BotMessage = Ready | Reply

# ---------------------------------------------------------------- coding

_encoder: Final = msgspec.json.Encoder()
_bot_decoder: Final[msgspec.json.Decoder[BotMessage]] = msgspec.json.Decoder(BotMessage)
_referee_decoder: Final[msgspec.json.Decoder[RefereeMessage]] = msgspec.json.Decoder(RefereeMessage)

_REFEREE_TYPES: Final[dict[str, type[_RefereeMessage]]] = {
    str(cls.__struct_config__.tag): cls
    for cls in (Hello, MatchStart, Events, Request, Fault, MatchEnd, Shutdown)
}
_BOT_TYPES: Final[dict[str, type[_BotMessage]]] = {
    str(cls.__struct_config__.tag): cls for cls in (Ready, Reply)
}
REFEREE_MESSAGE_TYPES: Final = frozenset(_REFEREE_TYPES)
BOT_MESSAGE_TYPES: Final = frozenset(_BOT_TYPES)


def encode(message: RefereeMessage | BotMessage) -> bytes:
    """One message as one protocol line: compact JSON, UTF-8, ending in ``\\n``.

    Raises ``LineTooLongError`` rather than produce a line the peer must reject.
    """
    data = _encoder.encode(message)
    if len(data) > MAX_LINE_BYTES:
        raise LineTooLongError(
            f"a {type(message).__name__} message encodes to {len(data)} bytes; "
            f"the limit is {MAX_LINE_BYTES}"
        )
    return data + b"\n"


MAX_NESTING: Final = 32
"""The deepest nesting of arrays and objects any decoder here accepts.

The deepest real message is four levels (``events`` > event > list > value),
so 32 leaves room for growth.  The bound exists because msgspec, like every
recursive parser, raises ``RecursionError`` on a line of a few thousand
``[`` (and the Python stack it used depends on the caller's depth): a peer's
ten kilobytes of ``[[[[`` must be a named ``malformed`` fault, never an
exception that ends the referee.  Checked before decoding, so nothing deep is
ever built.
"""

# For the scan below: every byte but quotes and brackets is dropped, and braces
# become brackets (depth does not care which kind nests).
_ONLY_QUOTES_AND_BRACKETS: Final = bytes(byte for byte in range(256) if byte not in b'"[]{}')
_BRACES_AS_BRACKETS: Final = bytes.maketrans(b"{}", b"[]")


def nesting_depth(line: bytes, limit: int = MAX_NESTING) -> int:
    """How deep ``line``'s arrays and objects nest, counted up to ``limit + 1`` at most.

    Brackets inside JSON strings do not count.  The common case costs two
    ``bytes.count`` calls: a line with at most ``limit`` opening brackets
    cannot nest deeper than that, so only a line with many is scanned (the
    referee's ``events`` lines, which a Python bot reads every decision).
    The scan leaves the per-byte work to C: escaped backslashes and quotes
    are dropped first (left to right, as a JSON parser pairs them), so every
    quote left opens or closes a string; of the rest only quotes and brackets
    are kept, the strings' pieces dropped, and each pass of ``replace``
    removes the innermost pairs, one level of nesting per pass.  A line that
    is not JSON may be counted differently than a parser would see it, but
    never past the point where the parser stops: a stray backslash or an
    unterminated string ends its parse; unbalanced brackets are walked one by one.
    """
    opening = line.count(b"[") + line.count(b"{")
    if opening <= limit:
        return opening  # an upper bound, which is all the callers compare
    if b"\\" in line:
        line = line.replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = line.translate(_BRACES_AS_BRACKETS, _ONLY_QUOTES_AND_BRACKETS)
    brackets = rest = b"".join(kept.split(b'"')[::2])
    depth = 0
    while rest and depth <= limit:
        inner = rest.replace(b"[]", b"")
        if len(inner) == len(rest):
            return _walk(brackets, limit)  # unbalanced: not JSON, but count it exactly
        rest = inner
        depth += 1
    return depth if not rest else _walk(brackets, limit)


def _walk(brackets: bytes, limit: int) -> int:
    """The deepest nesting of a string of ``[`` and ``]``, up to ``limit + 1``."""
    depth = deepest = 0
    for byte in brackets:
        if byte == 91:  # [
            depth += 1
            if depth > limit:
                return depth
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def decode_json(line: bytes, limit: int = MAX_NESTING) -> Any:
    """Any JSON value from one line, or ``MalformedMessageError`` naming what is wrong.

    The one untyped JSON reader for bytes a peer sent (a bot's line, a
    worker's pipe, a lobby's first line): nesting is bounded, invalid UTF-8
    is ``not_utf8``, everything else that is not JSON is ``not_json``.
    """
    _check_nesting(line, limit)
    try:
        return msgspec.json.decode(line)
    except UnicodeDecodeError:
        raise MalformedMessageError("not_utf8", "not valid UTF-8") from None
    except msgspec.DecodeError as error:
        detail = str(error).removeprefix("JSON is malformed: ")
        raise MalformedMessageError("not_json", f"not JSON: {detail}") from None
    except RecursionError:  # only if the caller's own stack was already nearly full
        raise _too_deep(limit) from None


def _check_nesting(line: bytes, limit: int) -> None:
    if nesting_depth(line, limit) > limit:
        raise _too_deep(limit)


def _too_deep(limit: int) -> MalformedMessageError:
    return MalformedMessageError(
        "too_deep",
        f"arrays or objects nested more than {limit} deep; no message nests deeper than 4",
    )


def decode_bot_message(line: bytes) -> BotMessage:
    """Strictly decode one line a bot sent; raise ``MalformedMessageError`` with the reason."""
    _check_nesting(line, MAX_NESTING)
    try:
        return _bot_decoder.decode(line)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        pass
    raise _diagnose(line, _BOT_TYPES, "bot")


def decode_referee_message(line: bytes) -> RefereeMessage | None:
    """Leniently decode one line from the referee, as a bot should.

    Unknown fields are ignored, an unknown message type gives None (skip the
    line), and events of unknown types are dropped from an ``events`` batch.
    Anything else wrong raises ``MalformedMessageError``.
    """
    _check_nesting(line, MAX_NESTING)
    try:
        return _referee_decoder.decode(line)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        pass
    data = _parse_object(line)
    tag = data.get("type")
    if isinstance(tag, str) and tag not in _REFEREE_TYPES:
        return None
    if tag == "events" and isinstance(data.get("events"), list):
        data["events"] = [event for event in data["events"] if not _unknown_event(event)]
    message: RefereeMessage = _convert(data, _REFEREE_TYPES, "referee")
    return message


def _unknown_event(value: object) -> bool:
    """An object whose ``type`` is a string naming no event this version knows."""
    if not isinstance(value, dict):
        return False
    tag = value.get("type")
    return isinstance(tag, str) and tag not in EVENT_TAGS


def _parse_object(line: bytes) -> dict[str, Any]:
    data = decode_json(line)
    if not isinstance(data, dict):
        raise MalformedMessageError(
            "not_object", f"not a JSON object: got {_json_kind(data)}; a message is {{...}}"
        )
    return data


def _diagnose(line: bytes, types: dict[str, type[Any]], sender: str) -> MalformedMessageError:
    """Why ``line`` failed to decode as one of ``types``, as a named error."""
    try:
        _convert(_parse_object(line), types, sender)
    except MalformedMessageError as error:
        return error
    # The generic route accepted what the typed decoder refused: report the decoder's view.
    return MalformedMessageError("wrong_type", f"not a valid {sender} message")


def _convert(data: dict[str, Any], types: dict[str, type[Any]], sender: str) -> Any:
    """``data`` as the message type its ``type`` names, or ``MalformedMessageError`` saying why."""
    known = ", ".join(sorted(types))
    if "type" not in data:
        raise MalformedMessageError(
            "missing_type", f'no "type" field; a {sender} message has one of: {known}'
        )
    tag = data["type"]
    cls = types.get(tag) if isinstance(tag, str) else None
    if cls is None:
        raise MalformedMessageError(
            "unknown_type",
            f"unknown message type {_short(tag)}; a {sender} message is one of: {known}",
        )
    try:
        return msgspec.convert(data, cls, strict=True)
    except RecursionError:
        raise _too_deep(MAX_NESTING) from None
    except msgspec.ValidationError as error:
        text = str(error)
        if text.startswith("Object missing required field"):
            problem = "missing_field"
        elif text.startswith("Object contains unknown field"):
            problem = "unknown_field"
        else:
            problem = "wrong_type"
        raise MalformedMessageError(problem, f"{tag}: {_lower_first(error)}") from None


def _lower_first(error: Exception) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text[:1].lower() + text[1:]


def _short(value: object) -> str:
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= 40 else text[:37] + "..."


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null"
