"""A tiny referee for tests: one bot process per seat, an engine ``Match``, the protocol between.

The real referee (``referee/``) adds the clock, faults, logs and leagues; this
driver only needs to show that a bot speaks the protocol and answers every
request legally, so it is strict where the referee would be forgiving: any
malformed, illegal or mismatched reply fails the test at once, with the tail
of the conversation and the bot's stderr in the message.

It converts the engine's per-seat events into protocol events field for field
(``protocol/events.py`` says how the two differ), and builds each request from
the seat's observation, as SPEC.md describes.  ``noise=True`` adds what a
later protocol version may send (an unknown message, an unknown event, an
unknown field on every request), which a bot must ignore.
"""

from __future__ import annotations

import abc
import collections
import contextlib
import dataclasses
import os
import selectors
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import msgspec

from bots.sdk import BotSession
from engine import PRESETS, DeadHandChoice, Match, Rules, preset
from engine import events as ev
from protocol import events as pe
from protocol.decisions import choice_fault
from protocol.framing import LineFramer
from protocol.messages import (
    PROTOCOL_VERSION,
    BotMessage,
    Choice,
    Events,
    Hello,
    MatchEnd,
    MatchStart,
    Ready,
    RefereeMessage,
    Reply,
    Request,
    Shutdown,
    decode_bot_message,
    encode,
)
from referee.match import convert

ROOT = Path(__file__).resolve().parents[2]
REPLY_TIMEOUT_S = 20.0
MOVE_TIME_MS = 1000
TIME_BANK_MS = 10_000


class BotFailure(AssertionError):
    """The bot broke the protocol; the message holds the transcript tail and its stderr."""


class BotEndpoint(abc.ABC):
    """The referee's end of one bot connection, with the transcript of what was said."""

    label: str

    def __init__(self) -> None:
        self.framer = LineFramer()
        self.pending: collections.deque[bytes] = collections.deque()
        self.transcript: collections.deque[str] = collections.deque(maxlen=12)

    @abc.abstractmethod
    def _write(self, data: bytes) -> None: ...

    @abc.abstractmethod
    def _read(self, timeout: float) -> bytes:
        """The next bytes from the bot, ``b""`` at its end; fail after ``timeout`` seconds."""

    @abc.abstractmethod
    def stderr_text(self) -> str: ...

    def send(self, message: RefereeMessage) -> None:
        self.send_raw(encode(message))

    def send_raw(self, line: bytes) -> None:
        self.transcript.append("> " + line.decode().rstrip("\n")[:300])
        self._write(line)

    def receive(self, timeout: float = REPLY_TIMEOUT_S) -> BotMessage:
        """The bot's next line, decoded strictly (as the referee does)."""
        deadline = time.monotonic() + timeout
        while not self.pending:
            data = self._read(max(0.0, deadline - time.monotonic()))
            if not data:
                self.fail("the bot's output ended")
            self.pending.extend(self.framer.feed(data))
        line = self.pending.popleft()
        self.transcript.append("< " + line.decode(errors="replace")[:300])
        try:
            return decode_bot_message(line)
        except ValueError as error:
            self.fail(f"malformed line: {error}")

    def fail(self, why: str) -> NoReturn:
        transcript = "\n".join(self.transcript)
        stderr = self.stderr_text()[-2000:]
        raise BotFailure(f"{self.label}: {why}\n--- transcript\n{transcript}\n--- stderr\n{stderr}")


class BotProcess(BotEndpoint):
    """A bot program, on stdio or (``transport="tcp"``) connecting to a listener of ours."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        transport: str = "stdio",
        token: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.argv = tuple(argv)
        self.label = " ".join(self.argv)
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by __exit__)
        environment = dict(os.environ if env is None else env)
        environment.pop("NEWMARKET_CONNECT", None)
        environment.pop("NEWMARKET_TOKEN", None)
        self.connection: socket.socket | None = None
        listener: socket.socket | None = None
        if transport == "tcp":
            listener = socket.create_server(("127.0.0.1", 0))
            listener.settimeout(REPLY_TIMEOUT_S)
            environment["NEWMARKET_CONNECT"] = f"127.0.0.1:{listener.getsockname()[1]}"
            if token is not None:
                environment["NEWMARKET_TOKEN"] = token
        self.process = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL if listener else subprocess.PIPE,
            stdout=self.stderr if listener else subprocess.PIPE,
            stderr=self.stderr,
            cwd=ROOT,
            env=environment,
        )
        self.selector = selectors.DefaultSelector()
        if listener is not None:
            with listener:
                try:
                    self.connection, _ = listener.accept()
                except TimeoutError:
                    self.fail("the bot did not connect")
            self.connection.setblocking(True)
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.selector.register(self.connection, selectors.EVENT_READ)
        else:
            assert self.process.stdout is not None
            self.selector.register(self.process.stdout, selectors.EVENT_READ)

    def _write(self, data: bytes) -> None:
        try:
            if self.connection is not None:
                self.connection.sendall(data)
                return
            assert self.process.stdin is not None
            self.process.stdin.write(data)
            self.process.stdin.flush()
        except (BrokenPipeError, ConnectionError):
            self.fail("the bot stopped reading (did it exit?)")

    def _read(self, timeout: float) -> bytes:
        if not self.selector.select(timeout):
            self.fail(f"no line within {REPLY_TIMEOUT_S} s")
        if self.connection is not None:
            return self.connection.recv(65536)
        assert self.process.stdout is not None
        return os.read(self.process.stdout.fileno(), 65536)

    def close(self, timeout: float = 10.0) -> int:
        """Send ``shutdown`` and return the exit status."""
        self.send(Shutdown())
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.fail("the bot did not exit after shutdown")

    def stderr_text(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def __enter__(self) -> BotProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        """End the process if it still runs and release everything."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.connection, self.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self.selector.close()


class InProcessBot(BotEndpoint):
    """A Python bot's ``BotSession`` in this process: the same lines, no process to start."""

    def __init__(self, session: BotSession, label: str = "in-process bot") -> None:
        super().__init__()
        self.session = session
        self.label = label
        self.log: list[str] = []
        session.log = self.log.append
        self.outbox = bytearray()

    def _write(self, data: bytes) -> None:
        for line in LineFramer().feed(data):
            self.outbox += b"".join(self.session.receive(line))

    def _read(self, timeout: float) -> bytes:
        data, self.outbox = bytes(self.outbox), bytearray()
        return data

    def stderr_text(self) -> str:
        return "\n".join(self.log)


def handshake(bot: BotEndpoint) -> Ready:
    bot.send(Hello(protocol=PROTOCOL_VERSION, referee="tests/bots/driver"))
    ready = bot.receive()
    if not isinstance(ready, Ready):
        bot.fail(f"expected ready, got {ready!r}")
    if ready.protocol != PROTOCOL_VERSION:
        bot.fail(f"ready says protocol {ready.protocol}")
    return ready


Policy = Callable[[Match], Any]
"""A seat the driver plays itself: the engine state in, an engine action out."""


def auctioneer(match: Match) -> Any:
    """Sells the dead hand whenever it may, so the other seats are asked to bid."""
    legal = match.legal_actions()
    return DeadHandChoice.AUCTION if DeadHandChoice.AUCTION in legal else legal[0]


@dataclasses.dataclass
class Tally:
    """Decisions answered, per bot and decision kind."""

    counts: collections.Counter[tuple[str, str]] = dataclasses.field(
        default_factory=collections.Counter
    )
    matches: int = 0


def play_match(
    seats: Sequence[tuple[str, BotEndpoint] | Policy],
    rules: Rules,
    seed: int,
    tally: Tally,
    *,
    noise: bool = False,
) -> MatchEnd:
    """Play one match; each seat is ``(name, process)`` or a policy the driver plays."""
    players = len(seats)
    match = Match(rules, players, seed)
    match_id = f"test-{seed}"
    names = [seat[0] if isinstance(seat, tuple) else "driver" for seat in seats]
    cursors = [0] * players
    for seat, entry in enumerate(seats):
        if isinstance(entry, tuple):
            if noise:
                entry[1].send_raw(b'{"type":"chat","text":"from a later version"}\n')
            start = MatchStart(
                match_id=match_id,
                seat=seat,
                players=players,
                names=names,
                rules=_rules_dict(rules),
                chips=[rules.starting_chips] * players,
                move_time_ms=MOVE_TIME_MS,
                time_bank_ms=TIME_BANK_MS,
            )
            entry[1].send(start)
    request_id = 0
    while not match.is_over:
        to_act = match.current_seat()
        assert to_act is not None
        entry = seats[to_act]
        if not isinstance(entry, tuple):
            match.apply(entry(match))
            continue
        name, bot = entry
        _send_events(bot, match, to_act, cursors, noise)
        request_id += 1
        request = build_request(match, to_act, request_id)
        bot.send_raw(_with_noise(request) if noise else encode(request))
        reply = bot.receive()
        if not isinstance(reply, Reply) or reply.id != request_id:
            bot.fail(f"expected a reply to request {request_id}, got {reply!r}")
        fault = choice_fault(request, reply.choice)
        if fault is not None:
            bot.fail(f"{fault.kind} reply: {fault.detail}")
        match.apply(to_action(request.decision, reply.choice))
        tally.counts[(name, request.decision)] += 1
    outcome = match.outcome()
    end = MatchEnd(
        match_id=match_id,
        places=list(outcome.places),
        chips=list(outcome.chips),
        reason=outcome.reason,
        hands_played=outcome.hands_played,
        disqualified=[],
    )
    for seat, entry in enumerate(seats):
        if isinstance(entry, tuple):
            _send_events(entry[1], match, seat, cursors, noise)
            entry[1].send(end)
    tally.matches += 1
    return end


def _rules_dict(rules: Rules) -> dict[str, Any]:
    return {key: value for key, value in rules.to_dict().items()}


def _send_events(
    bot: BotEndpoint, match: Match, seat: int, cursors: list[int], noise: bool
) -> None:
    events = [
        converted
        for event in match.events(viewer=seat, since=cursors[seat])
        if (converted := to_protocol_event(event, seat)) is not None
    ]
    cursors[seat] = match.event_count()
    for batch in _batches(events):
        if not noise:
            bot.send(Events(events=batch))
            continue
        data = msgspec.json.decode(encode(Events(events=batch)))
        data["events"].insert(0, {"type": "weather", "sky": "clear"})
        data["events"][-1]["later_field"] = [1, 2, 3]
        bot.send_raw(msgspec.json.encode(data) + b"\n")


def _batches(events: list[pe.Event]) -> list[list[pe.Event]]:
    """Events cut after each ``hand_ended``: no message holds events of two hands (SPEC.md)."""
    batches: list[list[pe.Event]] = [[]]
    for event in events:
        batches[-1].append(event)
        if isinstance(event, pe.HandEnded):
            batches.append([])
    return [batch for batch in batches if batch]


def _with_noise(request: Request) -> bytes:
    data = msgspec.json.decode(encode(request))
    data["hint"] = {"nested": ["type", "id", {"legal": ["2C"]}], "default": "AS"}
    return msgspec.json.encode(data) + b"\n"


def build_request(match: Match, seat: int, request_id: int) -> Request:
    """The request the referee sends the seat to act now (``referee.match.convert`` builds it)."""
    if match.current_seat() != seat:
        raise AssertionError(f"seat {seat} is not the seat to act")
    return convert.build_request(
        match, request_id, time_left_ms=MOVE_TIME_MS + TIME_BANK_MS, time_bank_ms=TIME_BANK_MS
    )


def to_action(decision: str, choice: Choice) -> Any:
    """A reply's choice as the engine action, as the referee converts it."""
    return convert.to_action(decision, choice)  # type: ignore[arg-type]


def to_protocol_event(event: ev.Event, viewer: int) -> pe.Event | None:
    """One engine event, already filtered for ``viewer``, as the referee sends it.

    ``viewer`` documents whose view ``event`` is: the referee's conversion
    reads the one hand the filtered event still shows.
    """
    del viewer
    return convert.protocol_event(event)


def rule_sets() -> list[tuple[str, Rules]]:
    """Every preset, and presets with each dead-hand option: every decision kind appears."""
    sets = [(name, preset(name)) for name in PRESETS]
    for option in ("exchange", "exchange_or_auction", "purchase"):
        sets.append(
            (f"boodle+{option}", preset("boodle").with_options({"dead_hand_exchange": option}))
        )
    sets.append(
        (
            "stops+exchange_or_auction",
            preset("stops").with_options({"dead_hand_exchange": "exchange_or_auction"}),
        )
    )
    return sets
