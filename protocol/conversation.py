"""One bot conversation's rules, as a state machine that does no I/O (h11's shape).

The referee talks to a bot in one way whatever carries the lines (a pipe, a
socket, a lobby's accepted connection): ``hello``, then ``ready``, then
requests, each answered by the reply that carries its id.  This module owns
those rules and the verdict on every line a bot sends; the referee's
transport reads and writes bytes, feeds the lines in here, and acts on what
comes out.  Keeping it free of I/O is what lets the session, the lobby and
the match loop share one set of rules, and lets tests drive every verdict
with literal lines.

* **The handshake.**  ``Conversation.hello`` is the referee's first line;
  ``receive_ready`` judges the bot's: a ``ready`` of this protocol version,
  or a ``HandshakeError`` saying why not (``startup``, or ``protocol`` for a
  version mismatch, SPEC.md 6.1).
  A token, where the transport asks for one, is the caller's to check.
* **Request ids.**  ``issue`` numbers requests from 1 for the whole
  conversation (never reused, across matches), ``expect`` says which one is
  written and waiting.  A request given up (``give_up``: it timed out, a
  malformed line resolved it, its seat was disqualified) keeps its id among
  the last ``LATE_IDS_KEPT``, so its reply, when it comes, is *late*.
* **The verdict on a line** (``receive``, SPEC.md 13): the ``Reply`` itself
  when it answers the waiting request; ``Late`` for the first reply to a
  request given up (discarded, no fault); a ``LineFault`` otherwise:
  ``malformed`` (it resolves the waiting request) or ``protocol`` (an
  unexpected ``ready``, a second reply, an id never sent; the request keeps
  waiting).

Failures below the lines (the stream ended, the process exited, a line too
long, a bot that does not read) are found where the I/O happens; ``lost``
names their fault kind here too.  The one kind decided elsewhere is
``illegal``, the verdict on a choice (``protocol.decisions``).
"""

from __future__ import annotations

import enum
from typing import Final

import msgspec

from protocol.faults import FaultKind
from protocol.messages import (
    PROTOCOL_VERSION,
    Hello,
    MalformedMessageError,
    Ready,
    Reply,
    decode_bot_message,
    encode,
)

LATE_IDS_KEPT: Final = 256
"""Given-up request ids whose late reply is still recognised (older ones are forgotten)."""

EXCERPT_CHARS: Final = 80
"""Characters of a malformed line quoted in its fault's detail."""

UNEXPECTED_READY: Final = "unexpected ready: the handshake is over"


class Late(msgspec.Struct, frozen=True):
    """The first reply to a request given up: discarded, no fault (SPEC.md 13)."""

    reply: Reply


class LineFault(msgspec.Struct, frozen=True):
    """A line that is a fault: its kind, its detail, and what it does to the waiting request.

    ``request_id`` is the id the fault names (the waiting request's for a
    malformed line, the reply's own for a stray one); ``resolves``: the
    waiting request is over, and its default is applied.
    """

    kind: FaultKind
    detail: str
    request_id: int | None = None
    resolves: bool = False


Verdict = Reply | Late | LineFault
"""What ``Conversation.receive`` makes of a line."""


class HandshakeError(Exception):
    """The first line is not an acceptable ``ready``: ``kind`` and ``detail`` say why.

    ``malformed`` is the decoding error when the line was not a message at all,
    for a caller that words the detail with what it knows of the stream (which
    line it was, where it came from).
    """

    def __init__(
        self, kind: FaultKind, detail: str, malformed: MalformedMessageError | None = None
    ) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.malformed = malformed


class ConversationError(RuntimeError):
    """The referee's side broke the conversation's order (a bug here, never a bot's)."""


class Loss(enum.Enum):
    """A failure under the lines, found where the I/O happens (``Conversation.lost``)."""

    ENDED = "ended"  # the stream ended
    EXITED = "exited"  # the bot's process exited
    LINE_TOO_LONG = "line_too_long"  # a line passed the framer's cap
    SILENT = "silent"  # no line within the time allowed
    NOT_READING = "not_reading"  # the bot did not take its input within the time allowed


_LOSS_KINDS: Final = {
    Loss.ENDED: FaultKind.EOF,
    Loss.EXITED: FaultKind.CRASH,
    Loss.LINE_TOO_LONG: FaultKind.LINE_TOO_LONG,
    Loss.SILENT: FaultKind.TIMEOUT,
    Loss.NOT_READING: FaultKind.TIMEOUT,
}


def message_type(message: object) -> str:
    """A message's ``type`` tag, as a fault names it."""
    config = getattr(type(message), "__struct_config__", None)
    tag = getattr(config, "tag", None)
    return str(tag) if tag is not None else type(message).__name__


def excerpt(line: bytes, limit: int = EXCERPT_CHARS) -> str:
    """The start of a bot's line, as a malformed fault quotes it."""
    text = line.decode("utf-8", "replace")
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Conversation:
    """The rules of one conversation with a bot; see the module docstring."""

    __slots__ = ("_late", "greeted", "last_id", "ready", "waiting")

    def __init__(self) -> None:
        self.greeted = False  # hello was sent: the handshake is under way
        self.ready: Ready | None = None  # the bot's ready, once the handshake is over
        self.last_id = 0  # the last request id issued
        self.waiting: int | None = None  # the id of the request written and not yet over
        self._late: dict[int, None] = {}  # given up, in order: a late reply still expected

    @property
    def handshaken(self) -> bool:
        return self.ready is not None

    # ------------------------------------------------------------- the handshake

    def hello(self, referee: str) -> bytes:
        """The referee's first line, ``hello`` with this protocol's version; ``ready`` is next."""
        self.greeted = True
        return encode(Hello(protocol=PROTOCOL_VERSION, referee=referee))

    def receive_ready(self, line: bytes) -> Ready:
        """Judge the bot's first line; the ``Ready``, or ``HandshakeError`` saying why not."""
        if self.ready is not None:
            raise ConversationError("the handshake is over")
        try:
            message = decode_bot_message(line)
        except MalformedMessageError as error:
            raise HandshakeError(FaultKind.STARTUP, f"instead of ready: {error}", error) from None
        if not isinstance(message, Ready):
            raise HandshakeError(
                FaultKind.STARTUP, f"the first message must be ready, got {message_type(message)}"
            )
        if message.protocol != PROTOCOL_VERSION:
            # SPEC.md 6.1: a version mismatch is a protocol fault that disqualifies at once.
            raise HandshakeError(
                FaultKind.PROTOCOL,
                f"this referee speaks protocol {PROTOCOL_VERSION}; ready says {message.protocol}",
            )
        self.ready = message
        return message

    # ------------------------------------------------------------- requests

    def issue(self) -> int:
        """A new request id (ids are never reused in a conversation)."""
        self.last_id += 1
        return self.last_id

    def expect(self, request_id: int) -> None:
        """The request ``request_id`` is written: its reply is awaited."""
        if self.ready is None:
            raise ConversationError("no request before the handshake is over")
        self.waiting = request_id

    def give_up(self) -> None:
        """The waiting request is over without its reply; a reply to it will be late."""
        if self.waiting is not None:
            self._forget_later(self.waiting)
            self.waiting = None

    def _forget_later(self, request_id: int) -> None:
        late = self._late
        late[request_id] = None
        while len(late) > LATE_IDS_KEPT:
            del late[next(iter(late))]

    # ------------------------------------------------------------- the verdict

    def receive(self, line: bytes) -> Verdict:
        """The verdict on one line from the bot, after the handshake (SPEC.md 13)."""
        try:
            message = decode_bot_message(line)
        except MalformedMessageError as error:
            return self._malformed(line, error)
        if type(message) is Reply:
            if message.id == self.waiting:
                self.waiting = None
                return message
            return self._stray(message)
        return LineFault(FaultKind.PROTOCOL, UNEXPECTED_READY)

    def _malformed(self, line: bytes, error: MalformedMessageError) -> LineFault:
        # SPEC.md 13: a malformed line resolves the waiting request at once; the bot's
        # reply to it, if one follows, is then discarded like a late one.
        waiting = self.waiting
        self.give_up()
        detail = f"{error} (line: {excerpt(line)})"
        return LineFault(FaultKind.MALFORMED, detail, waiting, resolves=waiting is not None)

    def _stray(self, reply: Reply) -> Late | LineFault:
        """A reply that does not answer the waiting request: late, or a protocol fault."""
        reply_id = reply.id
        if reply_id in self._late:
            del self._late[reply_id]  # a second late reply is a duplicate
            return Late(reply)
        if reply_id <= self.last_id:
            what = f"a second reply to request {reply_id}"
        else:
            what = f"a reply to request {reply_id}, which was never sent"
        if self.waiting is not None:
            what += f" (waiting for request {self.waiting})"
        return LineFault(FaultKind.PROTOCOL, what, reply_id)

    # ------------------------------------------------------------- failures below the lines

    def lost(self, loss: Loss) -> FaultKind:
        """The fault kind of a failure under the lines: ``startup`` between hello and ready."""
        if self.greeted and self.ready is None:
            return FaultKind.STARTUP
        return _LOSS_KINDS[loss]
