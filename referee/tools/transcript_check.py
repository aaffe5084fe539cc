"""Verifying a log's wire transcript: each ``sent`` line regenerated, each ``received`` explained.

``referee.tools.replay`` re-runs the engine from a log; this module is its check of
the log's side of the wire (format 2), fed each line in order by the replay,
with the replay's engine at the same point of the match the referee's was
when the line was written:

* **Sent lines are regenerated.**  What the referee writes to a seat follows
  from the match: ``match_start`` from the header; before each request, the
  seat's events since its last write (cut after each ``hand_ended``) and the
  request the engine asks; after a hand, the events through its end; each
  fault as the ``fault`` line records it; at the end, the rest and
  ``match_end``.  The seats' events are kept here as the referee keeps them
  (one feed of the engine's events, a ``seat_disqualified`` where a fault
  disqualified, a cursor per seat), so every item of a ``sent`` record and
  every byte of its messages is compared with what it must be.
* **Received lines are explained.**  The referee logs each line a bot sent
  just before what it made of it, so the next line (events aside) is that:
  a ``reply`` (the same id and choice), a ``late`` one, or a ``fault`` whose
  detail is regenerated (a malformed line's error and excerpt, an unexpected
  ``ready``, a duplicate or unknown id).  And the reverse: a ``reply`` or a
  ``late`` line, or such a fault, with no received line before it fails.
* **Times are checked for order.**  The ``t`` of sent and received lines
  never goes back, a reply's latency fits before its line's ``t``, a seat's
  time bank only shrinks (unchanged by a reply within the move time, emptied
  by a timeout), and ``time_left_ms`` is its move time plus its bank.  Their
  values are the clock's and cannot be derived: ``unverifiable`` says so.

What no line of the log can confirm (a fault's detail that came from the OS,
a bot's stderr, a ``lost`` line, measured times) is listed by line number in
``unverifiable``, never accepted silently.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any, cast

import msgspec

from engine import events as ev
from engine.state import Match
from protocol.conversation import LATE_IDS_KEPT, UNEXPECTED_READY, excerpt
from protocol.events import SeatDisqualified
from protocol.faults import FaultKind
from protocol.messages import (
    Choice,
    Fault,
    MalformedMessageError,
    Ready,
    Reply,
    Request,
    decode_bot_message,
    encode,
)
from protocol.timing import charge, deadline_ms, time_left_ms
from referee.match.convert import (
    apply_choice,
    build_request,
    extend_feed,
    feed_lines,
    match_end,
    match_start,
    wire_event,
)
from referee.match.log import LogError
from referee.match.records import Sent
from referee.match.referee import START_HAND
from referee.transport.timecontrol import TimeControl


class Unverifiable(msgspec.Struct, frozen=True):
    """A part of a log nothing else in it can confirm: ``line`` (None: many lines), what.

    ``newmarket replay --json`` lists them as msgspec encodes them (``not_verifiable``)."""

    line: int | None
    kind: str
    what: str

    def text(self) -> str:
        where = "" if self.line is None else f"line {self.line} "
        return f"{where}({self.kind}): {self.what}"


class _Asked(msgspec.Struct):
    """A sent request's own numbers, which the regenerated one takes (their order is checked)."""

    id: int
    time_left_ms: int
    time_bank_ms: int


class _Tag(msgspec.Struct):
    type: str


# In a match, faults of these kinds come from a line of the bot's, logged before them.
_FROM_A_LINE = frozenset({FaultKind.PROTOCOL, FaultKind.ILLEGAL, FaultKind.MALFORMED})

_sent = msgspec.json.Decoder(Sent)
_encode = msgspec.json.Encoder().encode
_asked = msgspec.json.Decoder(_Asked)
_tag = msgspec.json.Decoder(_Tag)


class _SeatWire:
    """What one seat has been sent and owes, as the check goes."""

    __slots__ = (
        "answered",
        "bank",
        "bank_after",
        "choice",
        "cursor",
        "ended",
        "first_id",
        "last_id",
        "late_ok",
        "logged",
        "open",
        "request_line",
        "started",
        "tell",
        "waiting",
    )

    def __init__(self, bank: int) -> None:
        self.cursor = 0  # the feed index of the first event not yet sent to it
        self.started = False  # sent match_start
        self.ended = False  # sent match_end
        self.tell: dict[bytes, int] = {}  # fault messages it is owed -> the fault's line
        self.waiting: Request | None = None  # sent, its decision not yet in the log
        self.request_line = 0  # the line of the ``sent`` record that carried it
        self.logged = False  # its ``request`` line was read
        self.open = False  # nothing settled it yet (no reply, no fault with a default)
        self.answered = False  # a reply settled it
        self.choice: object = None  # ... with this choice
        self.first_id: int | None = None
        self.last_id: int | None = None
        self.late_ok: dict[int, None] = {}  # ids whose late reply is discarded (session.py)
        self.bank = bank  # time_bank_ms of its last request
        self.bank_after: set[int] | None = {bank}  # what the next request's bank may be

    def settle_late(self, request_id: int) -> None:
        self.late_ok[request_id] = None
        while len(self.late_ok) > LATE_IDS_KEPT:
            del self.late_ok[next(iter(self.late_ok))]


class TranscriptCheck:
    """The wire side of ``referee.tools.replay``'s verifier; see the module docstring.

    Each ``on_*`` method is called for its kind of line, after the replay's
    own checks of it, with the replay's engine (``match``) and its typed
    events so far (``events``); ``LogError`` names the first line that differs.
    """

    def __init__(self, header: dict[str, Any], match: Match, names: Sequence[str]) -> None:
        players = len(names)
        self.match_id = str(header["match_id"])
        control = TimeControl(**header["time_control"])
        self.move_ms = control.move_time_ms
        self.margin_ms = control.margin_ms
        self.seats = [_SeatWire(control.time_bank_ms) for _ in range(players)]
        rules = match.rules.to_dict()
        chips = list(match.starting_chips)
        self.match_start = [
            encode(match_start(self.match_id, seat, names, rules, chips, control))[:-1]
            for seat in range(players)
        ]
        # The seats' events as the referee's feed holds them: each engine event's number
        # as its transcript item (``n``), or a ``seat_disqualified`` event's own JSON.
        self.feed: list[bytes] = []
        self.hand_ends: list[int] = []  # the feed index just after each hand_ended
        self.fed = 0  # engine events looked at for the feed
        self.t = 0.0  # the last sent or received line's time
        self.timed = 0  # lines with a time
        self.replies = 0
        self.spelled = 0  # received lines that are a message (checked as that message)
        self.received: tuple[int, int, bytes] | None = None  # (line, seat, bytes) unexplained
        self.after_reply: tuple[int, int] | None = None  # (line, seat) of the last reply
        self.unverifiable: list[Unverifiable] = []

    # ------------------------------------------------------------- the feed

    def _extend(self, events: Sequence[ev.Event], upto: int) -> None:
        extend_feed(events, self.fed, upto, self.feed, self.hand_ends)
        self.fed = max(self.fed, upto)

    def _lines(self, start: int, stop: int) -> list[bytes]:
        """The ``events`` items of feed entries ``start`` to ``stop``, cut after each hand's end."""
        return feed_lines(self.feed, self.hand_ends, start, stop)

    # ------------------------------------------------------------- lines

    def _seat(self, value: object, number: int) -> _SeatWire:
        if type(value) is not int or not 0 <= value < len(self.seats):
            raise LogError(f"a transcript line of seat {value!r}, not at the table", number)
        return self.seats[value]

    def _time(self, t: object, number: int) -> None:
        if type(t) is not float or t < self.t:  # the clock's ms, rounded: always a float
            raise LogError(f"time {t!r} ms, before the previous line's {self.t:g} ms", number)
        self.t = float(t)
        self.timed += 1

    def on_sent(
        self, number: int, raw: bytes, match: Match, events: Sequence[ev.Event], dq: list[bool]
    ) -> None:
        try:
            sent = _sent.decode(raw)
        except msgspec.DecodeError as error:
            raise LogError(f"a 'sent' record that cannot be read: {error}", number) from None
        seat = sent.seat
        state = self._seat(seat, number)
        self._time(sent.t, number)
        items = list(map(bytes, sent.lines))
        # The record itself exactly as the referee writes it (its items are compared below).
        if raw[:-1] != b'{"type":"sent","seat":%d,"t":%b,"lines":[%b]}' % (
            seat,
            _encode(sent.t),
            b",".join(items),
        ):
            raise LogError("not as the referee writes a line: a sent record respelled", number)
        if not items:
            raise LogError(f"a sent line of seat {seat} with nothing in it", number)
        message = None if items[-1][:1] == b"[" else items.pop()
        for item in items:
            if item[:1] != b"[":
                raise LogError(f"a message sent to seat {seat} before the end of its write", number)
        kind = "events" if message is None else _message_type(message, number)
        if state.ended:
            raise LogError(f"a {kind} line sent to seat {seat} after its match_end", number)
        if kind in ("match_start", "fault"):
            if items:
                raise LogError(f"events sent to seat {seat} with a {kind}", number)
            assert message is not None
            self._sent_alone(number, seat, state, kind, message)
            return
        if kind not in ("request", "match_end", "events"):
            raise LogError(f"a {kind!r} line sent to seat {seat}: the referee sends none", number)
        if not state.started:
            raise LogError(f"a {kind} line sent to seat {seat} before its match_start", number)
        self._events_sent(number, seat, state, kind, items, events)
        if kind == "request":
            assert message is not None
            self._request(number, seat, state, message, match)
        elif kind == "match_end":
            assert message is not None
            self._match_end_sent(number, seat, state, message, match, dq)

    def _events_sent(
        self,
        number: int,
        seat: int,
        state: _SeatWire,
        kind: str,
        items: list[bytes],
        events: Sequence[ev.Event],
    ) -> None:
        """The events lines of a write: the seat's view of the engine's events since its last.

        A write of events alone carries them up to the last hand's end; one with a request
        or the match_end, every event so far.
        """
        self._extend(events, len(events))
        stop = len(self.feed)
        if kind == "events":
            ends = self.hand_ends
            if not ends or ends[-1] <= state.cursor:
                raise LogError(f"events sent to seat {seat} with no hand ended since", number)
            stop = ends[-1]
        expected = self._lines(state.cursor, stop)
        if items != expected:
            raise LogError(_events_differ(seat, items, expected), number)
        state.cursor = stop

    def _sent_alone(
        self, number: int, seat: int, state: _SeatWire, kind: str, message: bytes
    ) -> None:
        """A match_start or a fault, sent in a write of its own: each exactly as owed."""
        if kind == "match_start":
            if state.started:
                raise LogError(f"a second match_start sent to seat {seat}", number)
            _same(message, self.match_start[seat], f"the match_start sent to seat {seat}", number)
            state.started = True
        elif state.tell.pop(message, None) is None:
            owed = next(iter(state.tell), None)
            if owed is None:
                raise LogError(f"a fault sent to seat {seat} that no fault line records", number)
            _same(
                message,
                owed,
                f"the fault sent to seat {seat} (line {state.tell[owed]})",
                number,
            )

    def _match_end_sent(
        self, number: int, seat: int, state: _SeatWire, message: bytes, match: Match, dq: list[bool]
    ) -> None:
        """The match_end, exactly as the engine's outcome makes it, once the match is over."""
        if not match.is_over:
            raise LogError(f"a match_end sent to seat {seat} before the match is over", number)
        end = encode(match_end(self.match_id, match.outcome(), dq))[:-1]
        _same(message, end, f"the match_end sent to seat {seat}", number)
        state.ended = True

    def _request(
        self, number: int, seat: int, state: _SeatWire, message: bytes, match: Match
    ) -> None:
        if state.waiting is not None:
            raise LogError(
                f"a request sent to seat {seat} while its request {state.waiting.id} "
                f"(line {state.request_line}) has no decision",
                number,
            )
        if match.current_seat() != seat:
            raise LogError(
                f"a request sent to seat {seat}, but the engine asks seat {match.current_seat()}",
                number,
            )
        try:
            asked = _asked.decode(message)
        except msgspec.DecodeError as error:
            raise LogError(f"the request sent to seat {seat}: {error}", number) from None
        if state.last_id is not None and asked.id <= state.last_id:
            raise LogError(
                f"request id {asked.id} sent to seat {seat} after its request {state.last_id}",
                number,
            )
        bank = asked.time_bank_ms
        allowed = state.bank_after
        if bank > state.bank or (allowed is not None and bank not in allowed):
            want = sorted(allowed) if allowed is not None else f"at most {state.bank}"
            raise LogError(
                f"seat {seat}'s time bank is {bank} ms in this request; its clock gives {want}",
                number,
            )
        if asked.time_left_ms != time_left_ms(self.move_ms, bank):
            raise LogError(
                f"time_left_ms {asked.time_left_ms} is not the move time plus the bank "
                f"({self.move_ms} + {bank} ms)",
                number,
            )
        request = build_request(match, asked.id, time_left_ms=asked.time_left_ms, time_bank_ms=bank)
        _same(message, encode(request)[:-1], f"the request sent to seat {seat}", number)
        if state.first_id is None:
            state.first_id = asked.id
        state.last_id = asked.id
        state.bank = bank
        state.bank_after = {bank}
        state.waiting = request
        state.request_line = number
        state.logged = state.answered = False
        state.open = True

    def on_received(self, number: int, record: dict[str, Any]) -> None:
        seat = record["seat"]
        state = self._seat(seat, number)
        self._time(record["t"], number)
        if state.ended:
            raise LogError(f"a line received from seat {seat} after its match_end", number)
        if ("line" in record) == ("line_base64" in record):
            raise LogError("a received line needs one of line and line_base64", number)
        if "line" in record:
            if not isinstance(record["line"], str):
                raise LogError("a received line that is not text", number)
            data = record["line"].encode("utf-8", "surrogatepass")
            for count in ("spaces", "unread"):
                if count in record and (type(record[count]) is not int or record[count] < 1):
                    raise LogError(f"a received line's {count} is not a count of bytes", number)
        else:
            try:
                data = base64.b64decode(record["line_base64"], validate=True)
            except (ValueError, TypeError):
                raise LogError("line_base64 is not base64", number) from None
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                pass
            else:  # the referee logs a line as text whenever it is UTF-8
                raise LogError("line_base64 holds UTF-8 text, logged as line", number)
        self.received = (number, seat, data)

    def unexplained(self, number: int) -> LogError:
        """The error for a line that comes where the last received line's verdict should."""
        assert self.received is not None
        line, seat, _data = self.received
        return LogError(
            f"seat {seat}'s line received at line {line} has no reply, late or fault "
            "line after it saying what it was",
            number,
        )

    def _take_received(self, number: int, seat: int, kind: str) -> tuple[int, bytes]:
        received = self.received
        if received is None or received[1] != seat:
            raise LogError(f"a {kind} of seat {seat} with no line received from it before", number)
        self.received = None
        return received[0], received[2]

    def on_request(self, number: int, record: dict[str, Any]) -> None:
        seat = int(record["seat"])
        state = self._seat(seat, number)
        request = state.waiting
        if request is None or state.logged:
            raise LogError(f"a request of seat {seat} that no sent line carried", number)
        logged = [record.get(key) for key in ("id", "decision", "legal", "default", "time_left_ms")]
        sent = [request.id, request.decision, request.legal, request.default, request.time_left_ms]
        if logged != sent:
            raise LogError(
                f"the request differs from the one sent at line {state.request_line}: "
                f"the log has {logged}, the seat was sent {sent}",
                number,
            )
        state.logged = True

    def on_reply(self, number: int, record: dict[str, Any]) -> None:
        seat = int(record["seat"])
        state = self._seat(seat, number)
        line, data = self._take_received(number, seat, "reply")
        request = state.waiting
        if request is None or not state.open or not state.logged:
            raise LogError(f"a reply of seat {seat} with no request waiting for it", number)
        message = _reply(data)
        logged = (record.get("id"), record.get("choice"))
        if message is None or (message.id, message.choice) != logged or message.id != request.id:
            raise LogError(
                f"the reply (id, choice) {logged} to request {request.id} is not the line "
                f"received at line {line}: {_show(data)}",
                number,
            )
        latency = record.get("latency_ms")
        if type(latency) is not float or not 0 <= latency <= self.t + 0.001:
            raise LogError(f"latency {latency!r} ms: not between 0 and the line's time", number)
        self.replies += 1
        self.spelled += 1
        elapsed = int(latency)  # the clock charged whole milliseconds (timecontrol.py)
        if elapsed <= self.move_ms:  # most replies: within the move time, nothing charged
            state.bank_after = {state.bank}
        else:  # the clock's milliseconds may be one fewer than the rounded latency's
            state.bank_after = {state.bank} | {
                charge(ms, self.move_ms, state.bank, self.margin_ms).bank_ms
                for ms in (elapsed, elapsed - 1)
            }
        state.open = False
        state.answered = True
        state.choice = message.choice
        self.after_reply = (number, seat)

    def on_late(self, number: int, record: dict[str, Any]) -> None:
        seat = int(record["seat"])
        state = self._seat(seat, number)
        line, data = self._take_received(number, seat, "late reply")
        message = _reply(data)
        logged = (record.get("id"), record.get("choice"))
        if message is None or (message.id, message.choice) != logged:
            raise LogError(
                f"the late reply (id, choice) {logged} is not the line received at line "
                f"{line}: {_show(data)}",
                number,
            )
        if state.open and state.waiting is not None and message.id == state.waiting.id:
            raise LogError(f"request {message.id} is waiting: its reply is not late", number)
        self.spelled += 1
        if message.id in state.late_ok:
            del state.late_ok[message.id]  # a second late reply is a duplicate
        elif state.first_id is None or message.id < state.first_id:
            self.unverifiable.append(
                Unverifiable(number, "late", f"request {message.id} was sent in an earlier match")
            )
        else:
            raise LogError(f"a late reply to request {message.id}, which did not time out", number)

    def on_fault(
        self,
        number: int,
        record: dict[str, Any],
        match: Match,
        events: Sequence[ev.Event],
        logged_events: int,
        dq: list[bool],
    ) -> None:
        """After the replay's own checks of the fault line (``dq`` includes this fault);
        ``logged_events``: how many of the engine's ``events`` the log has shown so far."""
        seat = int(record["seat"])
        state = self._seat(seat, number)
        kind = str(record["kind"])
        detail = record["detail"]
        request = state.waiting if state.open else None
        received, self.received = self.received, None
        after_reply, self.after_reply = self.after_reply, None
        expected: tuple[object, ...]
        of = "of it"
        lost = False  # judged from the OS's word (a loss), not from a line or the clock
        if received is not None and received[1] == seat:
            expected = self._line_fault(number, state, received[0], received[2], request, detail)
            of = f"of the line received at line {received[0]}"
        elif after_reply == (number - 1, seat):  # the engine refused the choice just replied
            asked = state.waiting
            assert asked is not None
            fault = apply_choice(match, asked, cast(Choice, state.choice))
            if fault is None:
                raise LogError(f"a fault for choice {state.choice!r}, which is legal", number)
            expected = (str(fault.kind), fault.detail, asked.id, asked.default)
            of = f"of the choice replied at line {after_reply[0]}"
            state.answered = False  # refused: the default is applied instead
        elif (
            request is not None
            and kind == FaultKind.TIMEOUT
            and detail == _no_reply(request, self.move_ms, self.margin_ms)
        ):
            expected = (kind, detail, request.id, request.default)
            state.bank_after = {0}  # a timeout empties the bank
            state.settle_late(request.id)
        elif record["hand"] != START_HAND and kind in _FROM_A_LINE:
            raise LogError(
                f"a {kind} fault of seat {seat} with no line of its before it to explain it",
                number,
            )
        else:
            # A lost bot: the detail is what the OS or its process said (an exit, a closed
            # stream, a line too long, a write it did not read, a failed handshake).
            lost = True
            self.unverifiable.append(
                Unverifiable(number, "fault", f"the detail of seat {seat}'s {kind} fault")
            )
            applied = record.get("applied")
            if applied is not None and (request is None or applied != request.default):
                raise LogError(
                    f"seat {seat}'s {kind} fault applies {applied!r}, no waiting request's default",
                    number,
                )
            expected = (kind, detail, record.get("id"), applied)
        logged = (kind, detail, record.get("id"), record.get("applied"))
        expected = (str(expected[0]), *expected[1:])
        if logged != expected:
            raise LogError(
                f"the fault (kind, detail, id, applied) {logged} is not what the referee "
                f"makes {of}: {expected}",
                number,
            )
        hand = record["hand"]
        if hand != match.hand_number and not (
            # a loss found by a write of an earlier hand's end, or before the match
            lost and type(hand) is int and 0 <= hand <= match.hand_number
        ):
            raise LogError(f"hand {hand!r}; the engine is in hand {match.hand_number}", number)
        if expected[3] is not None:  # it settled the waiting request with its default
            state.open = False
        if record["disqualified"]:
            # Where the referee's feed had it: after the events logged so far (``fault``
            # logs every event it has taken from the engine first).
            if self.fed > logged_events:
                raise LogError("a disqualification after events not yet in the log", number)
            self._extend(events, logged_events)
            self.feed.append(wire_event(SeatDisqualified(seat=seat, reason=kind)))
        told = Fault(
            id=record.get("id"),
            kind=kind,
            detail=detail,
            disqualified=dq[seat],
            applied=record.get("applied"),
        )
        state.tell[encode(told)[:-1]] = number

    def _line_fault(
        self,
        number: int,
        state: _SeatWire,
        received_at: int,
        data: bytes,
        request: Request | None,
        detail: object,
    ) -> tuple[object, ...]:
        """The fault the referee makes of a line that is neither the reply nor a late one."""
        try:
            message = decode_bot_message(data)
        except MalformedMessageError as error:
            return self._malformed_fault(state, received_at, data, request, error)
        self.spelled += 1
        if isinstance(message, Ready):
            what = "what its ready says, beyond being one (the fault quotes none of it)"
            self.unverifiable.append(Unverifiable(received_at, "received", what))
            return (FaultKind.PROTOCOL, UNEXPECTED_READY, None, None)
        assert isinstance(message, Reply)
        return self._stray_reply_fault(number, state, received_at, message, request, detail)

    def _malformed_fault(
        self,
        state: _SeatWire,
        received_at: int,
        data: bytes,
        request: Request | None,
        error: MalformedMessageError,
    ) -> tuple[object, ...]:
        """A line that is no message: malformed, settling the waiting request if any."""
        text = f"{error} (line: {excerpt(data)})"
        if len(data) > _QUOTED or not _is_utf8(data):
            what = "its bytes beyond the excerpt of them the fault quotes"
            self.unverifiable.append(Unverifiable(received_at, "received", what))
        if request is None:
            return (FaultKind.MALFORMED, text, None, None)
        state.settle_late(request.id)
        state.bank_after = None  # charged for the time it took, which the log does not keep
        return (FaultKind.MALFORMED, text, request.id, request.default)

    def _stray_reply_fault(
        self,
        number: int,
        state: _SeatWire,
        received_at: int,
        message: Reply,
        request: Request | None,
        detail: object,
    ) -> tuple[object, ...]:
        """A reply to no waiting request, and not a late one: a second reply, or to none sent."""
        what = "the choice of a reply the fault names by its id only"
        self.unverifiable.append(Unverifiable(received_at, "received", what))
        if request is not None and message.id == request.id:
            raise LogError(f"the reply to the waiting request {message.id} made a fault", number)
        if message.id in state.late_ok:
            raise LogError(f"request {message.id} timed out: its reply is late, no fault", number)
        waiting = "" if request is None else f" (waiting for request {request.id})"
        second = f"a second reply to request {message.id}{waiting}"
        never = f"a reply to request {message.id}, which was never sent{waiting}"
        if state.last_id is not None:
            # With no request waiting, the line was read just before the next request went
            # out, and its id was already taken (match.py numbers it first): one more.
            last = state.last_id + (1 if request is None else 0)
            return (
                FaultKind.PROTOCOL,
                second if message.id <= last else never,
                message.id,
                None,
            )
        # No request of this match yet: which ids earlier matches sent it is unknown.
        self.unverifiable.append(
            Unverifiable(number, "fault", f"whether request {message.id} was sent before")
        )
        return (
            FaultKind.PROTOCOL,
            detail if detail in (second, never) else second,
            message.id,
            None,
        )

    def on_decision(self, number: int, seat: int, by: str, dq: list[bool]) -> Request | None:
        """A decision for ``seat``: its request is over; returns it (None: none was sent)."""
        state = self.seats[seat]
        request = state.waiting
        if request is None:
            return None
        if by == "default" and state.answered:
            raise LogError(
                f"seat {seat} replied {state.choice!r} to request {request.id} and no fault "
                "refused it, yet its default was applied",
                number,
            )
        if state.open:
            if by == "bot" or not dq[seat]:
                raise LogError(
                    f"seat {seat}'s request {request.id} was neither answered nor faulted",
                    number,
                )
            state.settle_late(request.id)  # disqualified while it waited (match.py)
        state.waiting = None
        state.open = state.answered = False
        return request

    def on_lost(self, number: int, record: dict[str, Any]) -> None:
        seat = int(record["seat"])
        if not self._seat(seat, number).ended:
            raise LogError(f"seat {seat} lost while told the end, but it was told none", number)
        self.unverifiable.append(
            Unverifiable(number, "lost", f"how seat {seat}'s connection was lost at the end")
        )

    def on_result(self, number: int) -> None:
        if self.received is not None:
            raise self.unexplained(number)
        for seat, state in enumerate(self.seats):
            if state.tell:
                raise LogError(
                    f"seat {seat}'s fault at line {next(iter(state.tell.values()))} "
                    "was never sent to it",
                    number,
                )
            if state.waiting is not None:
                raise LogError(
                    f"seat {seat}'s request {state.waiting.id} (line {state.request_line}) "
                    "has no decision",
                    number,
                )
        if self.spelled:
            self.unverifiable.append(
                Unverifiable(
                    None,
                    "received",
                    f"the spelling of {self.spelled} received lines beyond the message each "
                    "carries (whitespace, key order, escapes)",
                )
            )
        if self.timed:
            self.unverifiable.append(
                Unverifiable(
                    None,
                    "times",
                    f"the t of {self.timed} sent and received lines and the latency_ms of "
                    f"{self.replies} replies: the clock's, checked for order only",
                )
            )


def _no_reply(request: Request, move_ms: int, margin_ms: int) -> str:
    """A timeout's detail (match.py), from the request's own bank."""
    limit = deadline_ms(move_ms, request.time_bank_ms, margin_ms)
    return (
        f"no reply to request {request.id} within {limit} ms "
        f"({request.time_left_ms} ms time left + {margin_ms} ms margin)"
    )


_QUOTED = 80  # the longest line a fault quotes whole (``match._excerpt``)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# The messages the referee writes, as their bytes begin (``encode`` puts the tag first).
_PREFIXES = tuple(
    (b'{"type":"%s"' % kind.encode(), kind)
    for kind in ("request", "match_end", "fault", "match_start")
)


def _message_type(message: bytes, number: int) -> str:
    for prefix, kind in _PREFIXES:
        if message.startswith(prefix):
            return kind
    try:  # not as the referee writes it, so it will not match; but say what it is
        return _tag.decode(message).type
    except msgspec.DecodeError:
        raise LogError(f"a sent line that is no message: {_show(message)}", number) from None


def _reply(data: bytes) -> Reply | None:
    try:
        message = decode_bot_message(data)
    except MalformedMessageError:
        return None
    return message if isinstance(message, Reply) else None


def _same(got: bytes, want: bytes, what: str, number: int) -> None:
    if got == want:
        return
    at = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), None)
    if at is None:
        at = min(len(got), len(want))
    start = max(0, at - 20)
    raise LogError(
        f"{what} differs from the one regenerated, at byte {at}: the log has "
        f"{_show(got[start : at + 30])}, the referee sends {_show(want[start : at + 30])}",
        number,
    )


def _events_differ(seat: int, got: list[bytes], want: list[bytes]) -> str:
    return (
        f"the events sent to seat {seat} are not the engine's next for it: the log has "
        f"{_show(b' '.join(got))}, the engine gives {_show(b' '.join(want))}"
    )


def _show(data: bytes, limit: int = 80) -> str:
    text = data.decode("utf-8", "replace")
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
