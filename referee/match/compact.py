"""The compact match record: a match log kept as what the engine cannot work out, compressed.

A full match log (``referee.match.log``) is mostly lines the engine can rebuild:
its events and deals, each request, each decision, every write to a seat.  What
it cannot rebuild is the header, each bot's replies and their times, the lines a
bot sent that were not plain replies, faults, stderr and the result.  A compact
record keeps that and nothing else, compressed with zstd, and rebuilds the full
log from it, byte for byte, with the engine (docs/match-log.md, "Compact
records").

It is predictive coding: one model of the match (``_Model``) is fed every line
of the log in order, and before each line it is asked to make it from a short
code and a few whole numbers (a seat, a time in microseconds, which legal
choice a reply named).  The compactor keeps the code when the model's line is
the log's line, byte for byte, and the line itself (a *literal*) when not; the
rebuilder makes each line from the same codes with the same model fed the same
lines, so both sides hold the same state at every line, whatever the log holds.
A line the model cannot make costs bytes, never correctness; and what the compactor
wrote is shown to rebuild the log before anyone keeps it (``checked_compact``).

The record ends with a BLAKE2b digest of the full log: a rebuilt log is that
log or ``CompactError`` says it is not.  Whether the log tells the truth about
the match is ``newmarket replay``'s question, asked of the rebuilt lines as of
any log (so a changed reply or result is named by the line that disagrees).

Layout, after the magic ``NMRC`` and a version byte: a zstd frame, compressed
against the version's fixed dictionary (``_dictionary``), of a msgpack array
``[codes, streams, literals, digest, size]``: one code byte per line, the
numbers as zigzag LEB128 varints in seven streams by kind (``_SHAPE``), the
literal lines without their newline, the digest of the full log and its size.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from collections.abc import Iterator
from typing import Any

import msgspec
import zstandard

from engine import Deal
from engine import events as ev
from engine.errors import NewmarketError
from engine.rules import Rules
from engine.state import Match
from protocol.events import SeatDisqualified
from protocol.messages import (
    Fault,
    MalformedMessageError,
    Reply,
    Request,
    decode_bot_message,
    encode,
)
from protocol.timing import time_left_ms
from referee.match import records
from referee.match.convert import (
    apply_choice,
    build_request,
    extend_feed,
    feed_lines,
    log_event,
    match_end,
    match_start,
    wire_event,
)
from referee.match.result import FaultRecord, SeatResult
from referee.transport.timecontrol import TimeControl

__all__ = ["MAGIC", "CompactError", "checked_compact", "compact", "is_compact", "rebuild"]

MAGIC = b"NMRC"
"""The first bytes of a compact record (a full log's first byte is ``{``)."""
VERSION = 1
LEVEL = 19  # zstd's level: a record is a few kB, compressed once and read rarely

_encode = msgspec.json.Encoder().encode
_json = msgspec.json.Decoder()
_sent = msgspec.json.Decoder(records.Sent)
_raw_list = msgspec.json.Decoder(list[msgspec.Raw])
_Body = tuple[bytes, list[bytes], list[bytes], bytes, int]  # codes, streams, literals, digest, size
_body = msgspec.msgpack.Decoder(_Body)


class CompactError(ValueError):
    """A compact record that cannot be read or rebuilds no log; the message says why in a line.

    ``line``: the number of the log line it stopped at, when it got that far (the
    message then starts ``line N:``, as ``referee.match.log.LogError``'s do).
    """

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message if line is None else f"line {line}: {message}")
        self.line = line
        self.reason = message


# What a record whose replies lead the engine to another game usually meets first.
_NO_EVENT = "the engine has no further event here: the record's replies lead to another game"

# The codes: a literal line, or a line of a kind the model makes from the numbers after it.
LITERAL = 0
EVENT = 1  # (none)
CHANCE = 2  # (none)
REQUEST = 3  # (none): the request the last sent line carried to the seat to act
SENT_EVENTS = 4  # seat, dt: the seat's events through the last hand's end
SENT_REQUEST = 5  # seat, dt, id, bank: its events so far and the engine's request
SENT_START = 6  # seat, dt: its match_start
SENT_END = 7  # seat, dt: its events so far and the match_end
SENT_FAULT = 8  # seat, dt: the fault line owed to it
RECEIVED_REPLY = 9  # seat, dt, index: a reply naming legal[index] of its request
RECEIVED_LINE = 10  # seat, dt (its bytes are the next literal)
REPLY = 11  # latency in microseconds: the reply the last received line was
DECISION_BOT = 12  # (none): the seat's replied choice
DECISION_DEFAULT = 13  # (none): its request's default
LATE = 14  # (none): the late reply the last received line was
RESULT = 15  # wall_ms, then per seat place, chips, think_ms, cpu_ms + 1 (0: none); log_path

_CODES = 16


def is_compact(data: bytes) -> bool:
    """Whether ``data`` (a file's first bytes will do) is a compact record."""
    return data[: len(MAGIC)] == MAGIC


def compact(log: bytes) -> bytes:
    """The compact record of a full match log (its whole bytes, each line ending in a newline).

    ``CompactError`` if the log is not one a record can keep (no header first, a line that
    is not a JSON object, a decision the engine refuses): keep such a log as it is.
    """
    return _compact(log)[0]


def checked_compact(log: bytes) -> bytes:
    """``compact(log)``, shown to rebuild ``log`` byte for byte; ``CompactError`` if not.

    The compactor made every coded line with the model and compared it with the log's
    (``_compact``), so the rebuild's model, fed the same codes, numbers and lines in the
    same order, makes the same lines: what is left to show is that the record's bytes
    give back those codes, numbers and lines (its zstd frame, msgpack and varints read
    back as the rebuild reads them).  That is all this checks, unless a line was
    tried and kept as a literal: then the compactor's model was asked one more thing than
    the rebuild's will be, and the record is rebuilt whole to be sure (``rebuild``).  A
    table does this after every match; the whole rebuild cost as much as the compaction.
    """
    record, body, written, retraced = _compact(log)
    if _unpack(record) != body or any(
        list(_varints(stream)) != numbers for stream, numbers in zip(body[1], written, strict=True)
    ):
        raise CompactError("the record does not read back as it was written")
    if not retraced and b"".join(rebuild(record)) != log:
        raise CompactError("the record does not rebuild the log")
    return record


def _compact(log: bytes) -> tuple[bytes, _Body, list[list[int]], bool]:
    """The record, the body it packs, the numbers of each stream, and whether the rebuild
    will ask the model exactly what the compactor asked it (no line was tried and then
    kept whole)."""
    if not log.endswith(b"\n"):
        raise CompactError("the log's last line is cut short")
    model = _Model()
    codes = bytearray()
    numbers = [bytearray() for _ in range(_STREAM_COUNT)]
    written: list[list[int]] = [[] for _ in range(_STREAM_COUNT)]
    literals: list[bytes] = []
    retraced = True
    for raw in log.splitlines(keepends=True):
        line = raw[:-1]
        record = _record(line, len(codes) + 1)
        extra: bytes | None = None  # the literal a code takes beside its numbers
        made: bytes | None = None
        tried = False  # whether the model was asked to make the line (the rebuild's won't be)
        try:
            code, values = model.code(record)
            if code == RECEIVED_LINE:
                extra = _received_bytes(record)
            elif code == RESULT:
                extra = _path_bytes(record.get("log_path"))
            arguments: list[Any] = values if extra is None else [*values, extra]
            if code != LITERAL:
                tried = True
                made = model.make(code, arguments)
        except (LookupError, TypeError, ValueError, NewmarketError, msgspec.MsgspecError):
            made = None
        if made != line:
            retraced = retraced and not tried
            code, values, extra = LITERAL, [], line
        if extra is not None:
            literals.append(extra)
        codes.append(code)
        for stream, value in zip(_shape(code, len(model.seats)), values, strict=True):
            _varint(numbers[stream], value)
            written[stream].append(value)
        model.observe(line, record, len(codes))
    digest = hashlib.blake2b(log, digest_size=16).digest()
    body: _Body = (bytes(codes), [bytes(stream) for stream in numbers], literals, digest, len(log))
    compressor = zstandard.ZstdCompressor(level=LEVEL, dict_data=_dictionary())
    packed = compressor.compress(msgspec.msgpack.encode(body))
    return MAGIC + bytes([VERSION]) + packed, body, written, retraced


def rebuild(data: bytes) -> Iterator[bytes]:
    """The full log's lines (each with its newline) from a compact record, in order.

    ``CompactError`` names what is wrong: not a record, a damaged one, a line the model
    cannot make from it, or (after the last line) a log other than the one recorded.
    """
    codes, numbers, literals, digest, size = _unpack(data)
    model = _Model()
    streams = [_varints(stream) for stream in numbers]
    next_literal = iter(literals)
    check = hashlib.blake2b(digest_size=16)
    length = 0
    for number, code in enumerate(codes, start=1):
        try:
            if code == LITERAL:
                line = next(next_literal)
            else:
                shape = _shape(code, len(model.seats))
                arguments: list[Any] = [next(streams[stream]) for stream in shape]
                if code in (RECEIVED_LINE, RESULT):
                    arguments.append(next(next_literal))
                line = model.make(code, arguments)
        except StopIteration:
            raise CompactError("the record ends in the middle of it", number) from None
        except (LookupError, TypeError, ValueError, NewmarketError, msgspec.MsgspecError) as error:
            raise CompactError(
                f"no {_KINDS[code]} line can be made from it ({error})", number
            ) from None
        if b"\n" in line:  # a literal a forger wrote: the log's lines are one each
            raise CompactError("a line with a newline in it", number)
        record = _record(line, number)
        model.observe(line, record, number)
        check.update(line)
        check.update(b"\n")
        length += len(line) + 1
        yield line + b"\n"
    if any(next(stream, None) is not None for stream in streams) or (
        next(next_literal, None) is not None
    ):
        raise CompactError("the record holds more than its lines use")
    if length != size or check.digest() != digest:
        raise CompactError(
            f"the rebuilt log ({length} bytes) is not the one recorded ({size} bytes): "
            "its digest differs"
        )


def _unpack(data: bytes) -> _Body:
    if not is_compact(data):
        raise CompactError("not a compact match record (no NMRC at its start)")
    if data[len(MAGIC) : len(MAGIC) + 1] != bytes([VERSION]):
        raise CompactError(
            f"compact record version {data[len(MAGIC) : len(MAGIC) + 1]!r}; "
            f"this newmarket reads version {VERSION}"
        )
    frame = data[len(MAGIC) + 1 :]
    try:
        # The frame says how large it is: a record that claims more is damaged (or a bomb).
        claimed = zstandard.frame_content_size(frame)
        if not 0 <= claimed <= _MAX_BODY:
            raise CompactError(f"a damaged compact record: it claims {claimed} bytes")
        body = zstandard.ZstdDecompressor(dict_data=_dictionary()).decompress(frame)
        codes, numbers, literals, digest, size = _body.decode(body)
    except (zstandard.ZstdError, msgspec.DecodeError) as error:
        raise CompactError(f"a damaged compact record: {error}") from None
    if any(code >= _CODES for code in codes):
        raise CompactError("a damaged compact record: an unknown line code")
    if len(numbers) != _STREAM_COUNT:
        raise CompactError(f"a damaged compact record: {len(numbers)} streams of numbers")
    return codes, numbers, literals, digest, size


_MAX_BODY = 64 * 1024 * 1024  # a record's body is a few kB (its full log ~140 kB)

# Each code's numbers, by the stream each goes to: numbers of a kind together compress
# better (a seat is nearly always the one to act, a time's gap is a few hundred us).
_SEAT, _SENT_GAP, _REPLY_GAP, _COUNT, _CHOICE, _LATENCY, _MEASURED = range(7)
_STREAM_COUNT = 7
_SHAPE: dict[int, tuple[int, ...]] = {
    EVENT: (),
    CHANCE: (),
    REQUEST: (),
    SENT_EVENTS: (_SEAT, _SENT_GAP),
    SENT_REQUEST: (_SEAT, _SENT_GAP, _COUNT, _COUNT),
    SENT_START: (_SEAT, _SENT_GAP),
    SENT_END: (_SEAT, _SENT_GAP),
    SENT_FAULT: (_SEAT, _SENT_GAP),
    RECEIVED_REPLY: (_SEAT, _REPLY_GAP, _CHOICE),
    RECEIVED_LINE: (_SEAT, _REPLY_GAP),
    REPLY: (_LATENCY,),
    DECISION_BOT: (),
    DECISION_DEFAULT: (),
    LATE: (),
}
_PER_SEAT = 4  # RESULT's numbers for each seat


def _shape(code: int, players: int) -> tuple[int, ...]:
    """The streams of ``code``'s numbers in order."""
    if code == RESULT:
        return (_MEASURED,) * (1 + _PER_SEAT * players)
    return _SHAPE.get(code, ())


_KINDS = {
    LITERAL: "literal",
    EVENT: "event",
    CHANCE: "chance",
    REQUEST: "request",
    SENT_EVENTS: "sent events",
    SENT_REQUEST: "sent request",
    SENT_START: "sent match_start",
    SENT_END: "sent match_end",
    SENT_FAULT: "sent fault",
    RECEIVED_REPLY: "received reply",
    RECEIVED_LINE: "received line",
    REPLY: "reply",
    DECISION_BOT: "decision",
    DECISION_DEFAULT: "decision",
    LATE: "late",
    RESULT: "result",
}


def _record(line: bytes, number: int) -> dict[str, Any]:
    try:
        record = _json.decode(line)
    except (msgspec.DecodeError, UnicodeDecodeError) as error:
        raise CompactError(f"not JSON: {error}", number) from None
    if not isinstance(record, dict) or not isinstance(record.get("type"), str):
        raise CompactError('not a log record (an object with a "type")', number)
    return record


def _path_bytes(path: object) -> bytes:
    """A result's ``log_path`` as a literal: its text, or nothing for null."""
    return b"" if path is None else b"/" + str(path).encode("utf-8", "surrogatepass")


def _received_bytes(record: dict[str, Any]) -> bytes:
    if "line" in record:
        return str(record["line"]).encode("utf-8", "surrogatepass")
    return base64.b64decode(record["line_base64"])


# ---------------------------------------------------------------- numbers


def _varint(out: bytearray, value: int) -> None:
    """``value`` zigzagged (small negatives stay small) as LEB128."""
    value = value * 2 if value >= 0 else -value * 2 - 1
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _varints(data: bytes) -> Iterator[int]:
    value = shift = 0
    for byte in data:
        value |= (byte & 0x7F) << shift
        if byte & 0x80:
            shift += 7
            continue
        yield value >> 1 if not value & 1 else -(value >> 1) - 1
        value = shift = 0
    if shift:
        raise CompactError("a damaged compact record: its numbers end in the middle of one")


def _micro(ms: object) -> int | None:
    """A logged time (ms, rounded to the microsecond) as whole microseconds, if exactly so."""
    if type(ms) is not float:
        return None
    micro = round(ms * 1000)
    return micro if micro / 1000 == ms else None


# ---------------------------------------------------------------- the model


class _Seat:
    __slots__ = (
        "asked",
        "bank",
        "cursor",
        "decisions",
        "defaults",
        "faults",
        "last_id",
        "owed",
        "reply",
        "waiting",
    )

    def __init__(self, bank: int) -> None:
        self.cursor = 0  # the feed index of the first event not yet sent to it
        self.waiting: Request | None = None  # its request with no decision yet
        self.last_id = 0  # the id of its last request (0: none yet)
        self.bank = bank  # time_bank_ms of its last request
        self.reply: Any = _NONE  # the choice of its last reply to the waiting request
        self.owed: list[bytes] = []  # fault messages logged, not yet sent to it
        self.asked = 0  # when its last request was sent, in microseconds
        self.decisions = 0  # request lines
        self.defaults = 0  # decision lines by the default
        self.faults: list[FaultRecord] = []


_NONE = object()


class _Model:
    """The match as the log has told it so far: ``make`` a line, ``observe`` the real one.

    ``make`` never changes the state (a compactor calls it to try), ``observe`` is the
    only way it moves, and only from the line itself: so the compactor and the rebuilder,
    shown the same lines, always agree on what comes next.
    """

    def __init__(self) -> None:
        self.match: Match | None = None
        self.seats: list[_Seat] = []
        self.events: list[ev.Event] = []
        self.raw = 0  # the engine's raw events turned into ``events``
        self.logged = 0  # event lines so far (the next one's ``n``)
        self.feed: list[bytes] = []  # the seats' events: an event's n, or a referee event
        self.hand_ends: list[int] = []  # the feed index just after each hand_ended
        self.fed = 0  # events looked at for the feed
        self.dq: list[bool] = []
        self.t = 0  # the last sent or received line's time, in microseconds
        self.received: tuple[int, bytes] | None = None  # (seat, line): awaiting its verdict
        self.match_start: list[bytes] = []
        self.names: list[str] = []
        self.match_id = ""
        self.seed = 0
        self.move_ms = 0

    # ------------------------------------------------------------- the engine

    def engine(self) -> Match:
        if self.match is None:
            raise ValueError("no header yet")
        return self.match

    def sync(self) -> list[ev.Event]:
        match = self.engine()
        count = match.event_count()
        if count != self.raw:
            self.events.extend(match.events(viewer=None, since=self.raw))
            self.raw = count
        return self.events

    def extend(self, upto: int) -> None:
        """The feed through event ``upto``; only ``observe`` calls it."""
        self.feed, self.hand_ends = self.feed_to(upto)
        self.fed = max(self.fed, upto)

    def feed_to(self, upto: int) -> tuple[list[bytes], list[int]]:
        """The feed and its hands' ends as they would be through event ``upto``, the state
        untouched (``match_ended`` is never sent: match_end is)."""
        if upto <= self.fed:
            return self.feed, self.hand_ends
        feed, ends = list(self.feed), list(self.hand_ends)
        extend_feed(self.events, self.fed, upto, feed, ends)
        return feed, ends

    # ------------------------------------------------------------- coding

    def code(self, record: dict[str, Any]) -> tuple[int, list[int]]:
        """The code and numbers that should make ``record``'s line (``make`` confirms)."""
        kind = record["type"]
        if kind == "event":
            return EVENT, []
        if kind == "chance":
            return CHANCE, []
        if kind == "request":
            return REQUEST, []
        if kind == "decision":
            return (DECISION_BOT if record.get("by") == "bot" else DECISION_DEFAULT), []
        if kind == "late":
            return LATE, []
        if kind in ("sent", "received"):
            return self._code_wire(kind, record)
        if kind == "reply":
            micro = _micro(record.get("latency_ms"))
            seat = self.received[0] if self.received is not None else 0
            # The latency is nearly the time between the request's line and the reply's.
            gap = self.t - self.seats[seat].asked if 0 <= seat < len(self.seats) else 0
            return (LITERAL, []) if micro is None else (REPLY, [micro - gap])
        if kind == "result":
            return self._code_result(record)
        return LITERAL, []

    def _code_result(self, record: dict[str, Any]) -> tuple[int, list[int]]:
        numbers = [record["wall_ms"]]
        for seat in record["seats"]:
            cpu = seat.get("cpu_ms")
            cpu = 0 if cpu is None else cpu + 1
            numbers += [seat["place"], seat["chips"], seat["think_ms"], cpu]
        if not all(type(value) is int for value in numbers):
            return LITERAL, []
        return RESULT, numbers

    def _code_wire(self, kind: str, record: dict[str, Any]) -> tuple[int, list[int]]:
        seat, micro = record.get("seat"), _micro(record.get("t"))
        if type(seat) is not int or not 0 <= seat < len(self.seats) or micro is None:
            return LITERAL, []
        timing = [seat, micro - self.t]
        if kind == "received":
            if "line" not in record and "line_base64" not in record:
                return LITERAL, []
            waiting = self.seats[seat].waiting
            if waiting is not None and "line" in record:
                try:
                    reply = decode_bot_message(str(record["line"]).encode())
                except (MalformedMessageError, UnicodeEncodeError):
                    reply = None
                if isinstance(reply, Reply) and reply.id == waiting.id:
                    for index, legal in enumerate(self._choices(waiting)):
                        if legal == reply.choice and type(legal) is type(reply.choice):
                            return RECEIVED_REPLY, [*timing, index]
            return RECEIVED_LINE, timing
        items = record.get("lines")
        last = items[-1] if isinstance(items, list) and items else None
        message = last.get("type") if isinstance(last, dict) else None
        if message == "match_start":
            return SENT_START, timing
        if message == "match_end":
            return SENT_END, timing
        if message == "fault":
            return SENT_FAULT, timing
        if message == "request" and isinstance(last, dict):
            state = self.seats[seat]
            return SENT_REQUEST, [
                *timing,
                last["id"] - state.last_id - 1,
                last["time_bank_ms"] - state.bank,
            ]
        return SENT_EVENTS, timing

    @staticmethod
    def _choices(request: Request) -> list[Any]:
        """What a reply to ``request`` is likely to name: a legal choice, or the default."""
        return [*request.legal, request.default] if request.legal else [request.default]

    def make(self, code: int, values: list[Any]) -> bytes:
        """The line ``code`` and ``values`` stand for, as the referee writes it."""
        match = self.engine()
        if code == EVENT:
            events = self.sync()
            n = self.logged
            if n >= len(events):
                raise ValueError(_NO_EVENT)
            return _encode({"type": "event", "n": n, "event": log_event(events[n])})
        if code == CHANCE:
            made = self.sync()
            if self.logged >= len(made):
                raise ValueError(_NO_EVENT)
            dealt = made[self.logged]
            if not isinstance(dealt, ev.CardsDealt):
                raise ValueError("the engine deals no cards here")
            return _encode(
                records.Chance(
                    hand=match.hand_number,
                    hands=[[str(c) for c in hand or ()] for hand in dealt.hands],
                    dead=[str(c) for c in dealt.dead_hand or ()],
                )
            )
        if code == REQUEST:
            seat = match.current_seat()
            request = None if seat is None else self.seats[seat].waiting
            if seat is None or request is None:
                raise ValueError("no request waiting")
            return _encode(records.RequestRecord.of(seat, match.hand_number, request))
        if code in (DECISION_BOT, DECISION_DEFAULT):
            return self._decision(match, code == DECISION_BOT)
        if code == REPLY:
            seat, reply = self._received_reply()
            latency = values[0] + self.t - self.seats[seat].asked
            return _encode(
                records.ReplyRecord(
                    seat=seat, id=reply.id, choice=reply.choice, latency_ms=latency / 1000
                )
            )
        if code == RESULT:
            return self._result(values)
        if code == LATE:
            seat, reply = self._received_reply()
            return _encode(records.Late(seat=seat, id=reply.id, choice=reply.choice))
        seat, t = values[0], (self.t + values[1]) / 1000
        if code == RECEIVED_REPLY:
            request = self.seats[seat].waiting
            if request is None:
                raise ValueError(f"seat {seat} has no request waiting")
            choice = self._choices(request)[values[2]]
            text = encode(Reply(id=request.id, choice=choice))[:-1].decode()
            return _encode(records.Received(seat=seat, t=t, line=text))
        if code == RECEIVED_LINE:
            line: bytes = values[2]
            record = records.Received(seat=seat, t=t)
            try:
                record.line = line.decode("utf-8")
            except UnicodeDecodeError:
                record.line_base64 = base64.b64encode(line).decode("ascii")
            return _encode(record)
        return self._sent(code, seat, t, values[2:])

    def _sent(self, code: int, seat: int, t: float, values: list[int]) -> bytes:
        state = self.seats[seat]
        items: list[bytes] = []
        if code == SENT_START:
            message = self.match_start[seat]
        elif code == SENT_FAULT:
            message = state.owed[0]
        else:
            feed, hand_ends = self.feed_to(len(self.sync()))
            stop = len(feed)
            if code == SENT_EVENTS:
                ends = [end for end in hand_ends if end > state.cursor]
                if not ends:
                    raise ValueError("no hand's end to send")
                stop = ends[-1]
            items = feed_lines(feed, hand_ends, state.cursor, stop)
            if code == SENT_EVENTS:
                message = b""
            elif code == SENT_END:
                message = self._match_end()
            else:
                bank = state.bank + values[1]
                request = build_request(
                    self.engine(),
                    state.last_id + 1 + values[0],
                    time_left_ms=time_left_ms(self.move_ms, bank),
                    time_bank_ms=bank,
                )
                message = encode(request)[:-1]
        lines = [msgspec.Raw(item) for item in items]
        if message:
            lines.append(msgspec.Raw(message))
        return _encode(records.Sent(seat=seat, t=t, lines=lines))

    def _match_end(self) -> bytes:
        return encode(match_end(self.match_id, self.engine().outcome(), self.dq))[:-1]

    def _result(self, values: list[Any]) -> bytes:
        """The result line: the engine's outcome, the seats' tallies, the measured numbers."""
        match = self.engine()
        outcome = match.outcome()
        events = self.sync()
        boodle = [0] * len(self.seats)
        won = [0] * len(self.seats)
        for event in events:
            if isinstance(event, ev.BoodleWon):
                boodle[event.seat] += event.chips
            elif isinstance(event, ev.HandEnded):
                for winner in event.winners:
                    won[winner] += 1
        seats = []
        for seat, state in enumerate(self.seats):
            place, chips, think, cpu = values[1 + _PER_SEAT * seat : 1 + _PER_SEAT * (seat + 1)]
            seats.append(
                SeatResult(
                    seat=seat,
                    name=self.names[seat],
                    place=place,
                    chips=chips,
                    status="disqualified" if self.dq[seat] else "ok",
                    faults=list(state.faults),
                    net_chips=outcome.net_chips[seat],
                    boodle_chips=boodle[seat],
                    hands_won=won[seat],
                    decisions=state.decisions,
                    defaults=state.defaults,
                    think_ms=think,
                    cpu_ms=None if cpu == 0 else cpu - 1,
                )
            )
        path: bytes = values[-1]
        return _encode(
            records.ResultRecord(
                match_id=self.match_id,
                seed=self.seed,
                rules=match.rules.to_dict(),
                hands=outcome.hands_played,
                reason=outcome.reason,
                seats=seats,
                log_path=path[1:].decode("utf-8", "surrogatepass") if path else None,
                wall_ms=values[0],
            )
        )

    def _decision(self, match: Match, by_bot: bool) -> bytes:
        seat = match.current_seat()
        if seat is None:
            raise ValueError("the match is over")
        state = self.seats[seat]
        request = state.waiting or build_request(match, 1, time_left_ms=0, time_bank_ms=0)
        if by_bot and state.reply is _NONE:
            raise ValueError(f"seat {seat} has not replied")
        return _encode(
            records.Decision(
                seat=seat,
                hand=match.hand_number,
                decision=request.decision,
                choice=state.reply if by_bot else request.default,
                by="bot" if by_bot else "default",
            )
        )

    def _received_reply(self) -> tuple[int, Reply]:
        if self.received is None:
            raise ValueError("no line received")
        seat, line = self.received
        reply = decode_bot_message(line)
        if not isinstance(reply, Reply):
            raise ValueError("the line received is no reply")
        return seat, reply

    # ------------------------------------------------------------- observing

    def observe(self, line: bytes, record: dict[str, Any], number: int) -> None:
        """Move the model past ``line`` (already decoded as ``record``)."""
        kind = record["type"]
        try:
            if kind == "header":
                self._header(record)
            elif self.match is None:
                raise CompactError(f"a {kind!r} line before the header", number)
            elif kind == "event":
                self.logged = int(record["n"]) + 1
            elif kind == "request":
                self.seats[int(record["seat"])].decisions += 1
            elif kind == "sent":
                self._observe_sent(line)
            elif kind == "received":
                self._observe_time(record["t"])
                self.received = (int(record["seat"]), _received_bytes(record))
            elif kind in ("reply", "late"):
                self.received = None
                if kind == "reply":
                    self.seats[int(record["seat"])].reply = record["choice"]
            elif kind == "fault":
                self._observe_fault(record)
            elif kind == "decision":
                self._observe_decision(record)
        except CompactError:
            raise
        except (LookupError, TypeError, ValueError, NewmarketError, msgspec.MsgspecError) as error:
            raise CompactError(
                f"a {kind!r} line the engine cannot follow: {error}", number
            ) from None

    def _header(self, record: dict[str, Any]) -> None:
        if self.match is not None:
            raise ValueError("a second header")
        rules = Rules.from_dict(record["rules"])
        players = int(record["players"])
        scripted = record.get("scripted") or {}
        dealer = scripted.get("first_dealer")
        deals = [Deal.of(deal["hands"], deal["dead"]) for deal in scripted.get("deals", ())]
        self.match = Match(
            rules,
            players,
            int(record["seed"]),
            chips=record.get("chips"),
            dealer=None if dealer is None else int(dealer),
            deals=deals,
        )
        control = TimeControl(**record["time_control"])
        self.move_ms = control.move_time_ms
        self.match_id = str(record["match_id"])
        self.seed = int(record["seed"])
        self.seats = [_Seat(control.time_bank_ms) for _ in range(players)]
        self.dq = [False] * players
        self.names = names = [str(bot["name"]) for bot in record["bots"]]
        chips = self.match.starting_chips
        self.match_start = [
            encode(match_start(self.match_id, seat, names, rules.to_dict(), chips, control))[:-1]
            for seat in range(players)
        ]

    def _observe_time(self, t: object) -> None:
        micro = _micro(t)
        if micro is not None:
            self.t = micro

    def _observe_sent(self, line: bytes) -> None:
        sent = _sent.decode(line)
        self._observe_time(sent.t)
        state = self.seats[sent.seat]
        items = [bytes(item) for item in sent.lines]
        message = items.pop() if items and items[-1][:1] != b"[" else None
        if items:  # its events: as many feed entries as they list
            self.extend(len(self.sync()))
            state.cursor += sum(len(_raw_list.decode(item)) for item in items)
        if message is None:
            return
        if message.startswith(b'{"type":"request"'):
            asked = msgspec.json.decode(message)
            state.last_id = int(asked["id"])
            state.bank = int(asked["time_bank_ms"])
            state.waiting = build_request(
                self.engine(),
                state.last_id,
                time_left_ms=int(asked["time_left_ms"]),
                time_bank_ms=state.bank,
            )
            state.reply = _NONE
            state.asked = self.t
        elif message.startswith(b'{"type":"fault"') and message in state.owed:
            state.owed.remove(message)

    def _observe_fault(self, record: dict[str, Any]) -> None:
        seat = int(record["seat"])
        self.received = None
        if record["disqualified"] is True and not self.dq[seat]:
            self.dq[seat] = True
            # Where the referee's feed had it: after the events logged so far.
            self.sync()
            self.extend(min(self.logged, len(self.events)))
            self.feed.append(wire_event(SeatDisqualified(seat=seat, reason=str(record["kind"]))))
        told = Fault(
            id=record["id"],
            kind=str(record["kind"]),
            detail=str(record["detail"]),
            disqualified=self.dq[seat],
            applied=record["applied"],
        )
        state = self.seats[seat]
        state.owed.append(encode(told)[:-1])
        state.faults.append(FaultRecord(str(record["kind"]), int(record["hand"]), told.detail))

    def _observe_decision(self, record: dict[str, Any]) -> None:
        match = self.engine()
        seat = match.current_seat()
        if seat is None or seat != record["seat"]:
            raise ValueError(f"a decision of seat {record['seat']}, but seat {seat} is to act")
        state = self.seats[seat]
        request = state.waiting or build_request(match, 1, time_left_ms=0, time_bank_ms=0)
        fault = apply_choice(match, request, record["choice"])
        if fault is not None:
            raise ValueError(f"the choice {record['choice']!r} is {fault.kind}: {fault.detail}")
        state.waiting = None
        state.reply = _NONE
        if record["by"] == "default":
            state.defaults += 1


# ---------------------------------------------------------------- the dictionary


@functools.cache
def _dictionary() -> zstandard.ZstdCompressionDict:
    """zstd's raw-content dictionary of version 1: what most records' literal lines share.

    A header, a fault, a late reply, stderr: zstd refers to the dictionary's bytes as
    to earlier ones of the record, so a header costs its differences (about 300 bytes
    less a record).  It is part of the format: a record of version 1 is read with
    these bytes and no others, so they never change without a new ``VERSION``.
    """
    return zstandard.ZstdCompressionDict(_DICTIONARY, dict_type=zstandard.DICT_TYPE_RAWCONTENT)


_DICTIONARY = (
    b'{"type":"fault","seat":0,"hand":1,"kind":"timeout","detail":"no reply to request'
    b' 1 within 1100 ms (1000 ms time left + 100 ms margin)","id":1,"applied":"9C","co'
    b'unt":1,"disqualified":false}{"type":"fault","seat":0,"hand":1,"kind":"malformed"'
    b',"detail":"not JSON: invalid character (byte 0) (line: )","id":null,"applied":nu'
    b'll,"count":1,"disqualified":true}{"type":"late","seat":0,"id":1,"choice":"9C"}{"'
    b'type":"lost","seat":0,"kind":"eof","detail":""}{"type":"stderr","seat":0,"text":'
    b'"Traceback (most recent call last):\\n","bytes":0,"dropped":0}"sandbox":{"level":'
    b'"none","active":["process group"],"missing":[],"limits":null}{"type":"header","f'
    b'ormat":2,"referee":"newmarket 0.1.0","protocol":1,"python":"3.11.7","platform":"'
    b'linux","started":"2026-11-28T00:00:00+00:00","match_id":"c1-t00001-r0","seed":0,'
    b'"players":4,"chips":[40,40,40,40],"first_dealer":0,"rules":{"rank_order":"aces_h'
    b'igh","boodle_cards":["AS","KH","QC","JD"],"ante":"fixed","ante_per_card":1,"deal'
    b'er_ante_per_card":2,"stake_total":6,"kitty_ante":0,"starting_chips":40,"dealing"'
    b':"round_robin","dead_hand":true,"dead_hand_exchange":"off","purchase_fee":4,"lea'
    b'd_suit":"any","payment":"per_card","blocked_hand":"nobody_pays","end_players":2,'
    b'"hand_limit":30},"time_control":{"move_time":1.0,"time_bank":10.0,"startup_time"'
    b':10.0,"margin":0.1,"max_faults":3},"sandbox":{"level":"auto","active":["process '
    b'group","rlimits (cpu 3600 s, open files 256, file size 256 MiB, no core dumps)",'
    b'"memory cgroup 2 GiB","pids cgroup 128","cpu time from the cgroup","cgroup.kill"'
    b',"bubblewrap: own uid per bot, own pid/ipc/uts/cgroup/net/mount namespaces, read'
    b"-only system and bot directory, scratch tmpfs 64 MiB (and /dev/shm alike), no_ne"
    b'w_privs, no capabilities, no file locks or inotify (no channel between bots)","n'
    b'o network (a TCP bot reaches only its referee\'s listener)"],"missing":[],"limits'
    b'":{"cpu_seconds":3600,"open_files":256,"file_size_bytes":268435456,"processes":1'
    b'28,"memory_bytes":2147483648,"address_space_bytes":null,"scratch_bytes":67108864'
    b'}},"bots":[{"seat":0,"name":"random","command":["/usr/bin/python3","-m","bots.st'
    b'arters.random"],"cwd":null,"transport":"stdio","reported_name":"random","reporte'
    b'd_version":"1.0","alive":true,"lost":null},{"seat":1,"name":"alice v1","command"'
    b':["python3","main.py"],"cwd":"/srv/newmarket/cup-data/versions/000001/bot","tran'
    b'sport":"stdio","reported_name":"alice","reported_version":"1.0","alive":true,"lo'
    b'st":null},{"seat":2,"name":"bob v2","command":["node","main.js"],"cwd":"/srv/new'
    b'market/cup-data/versions/000002/bot","transport":"tcp","reported_name":"bob","re'
    b'ported_version":"2","alive":true,"lost":null},{"seat":3,"name":"carol v3","comma'
    b'nd":["./bot"],"cwd":"/srv/newmarket/cup-data/versions/000003/bot","transport":"s'
    b'tdio","reported_name":"carol","reported_version":"0.3","alive":true,"lost":null}'
    b"]}"
)
