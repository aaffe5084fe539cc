"""A bot session: one started, handshaken bot that plays many matches in a row.

The protocol's lifecycle is hello/ready once, then any number of matches,
then shutdown, so a league pays a bot's start-up once, not once per match.
``open_bot`` is that lifecycle as an async context manager: entering starts
the bot (a process over stdio, a process that connects over TCP, or a remote
bot that connects by itself) and handshakes; leaving sends ``shutdown`` and
ends the process tree whatever happened.

A bot's failure is never an exception out of this module.  A bot that cannot
be started, never says ``ready``, speaks another protocol version or sends a
wrong token gives a session that is *dead* from the start, with the reason
kept in ``death``; a bot that crashes mid-match makes its session dead from
then on.  ``play_match`` gives every decision of a dead session the default
policy and records the fault, so a league never has to catch anything.

The session is also where the few facts that outlive one match live: the
request-id counter (ids are never reused, so a reply that comes late, even
in a later match, is recognised by its id and discarded) and stderr.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from protocol.conversation import Conversation, HandshakeError, Loss
from protocol.faults import FaultKind
from protocol.framing import LineTooLongError
from protocol.messages import Fault, MalformedMessageError, Shutdown, encode
from protocol.timing import DEFAULT_SHUTDOWN_GRACE_MS, DEFAULT_STDERR_CAP_BYTES
from protocol.transports import ENV_CONNECT, ENV_TOKEN
from referee.bots import BotSpec
from referee.sandbox import Sandbox
from referee.storage.private_files import private_dir, private_opener
from referee.transport.connection import Connection, ConnectionBrokenError, ConnectionClosedError
from referee.transport.process import BotProcess, StderrBuffer, clean_environment, start_process
from referee.transport.tcp_guard import MAX_PENDING_CONNECTIONS, PendingConnections, token_matches
from referee.transport.timecontrol import TimeControl

EXIT_GRACE = 0.2  # after the process exits, how long its last output may still take to arrive
EOF_EXIT_WAIT = 0.5  # after end of stream, how long to wait for an exit (crash) before "eof"
TELL_TIMEOUT = 0.5  # the most a last word to a lost bot may cost
SHUTDOWN_GRACE = DEFAULT_SHUTDOWN_GRACE_MS / 1000
# A reply found already read passes trio's scheduler only every this many in a row
# (``receive_line``; docs/speed.md, "The match loop").
SCHEDULE_EVERY = 8


def referee_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"newmarket {version('newmarket')}"
    except PackageNotFoundError:
        return "newmarket"


class BotLostError(Exception):
    """The bot cannot go on in this session; ``kind`` is the fault kind, ``detail`` why."""

    def __init__(self, kind: FaultKind, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


class _Race:
    """``BotSession._accept``'s handshakes side by side: the first good one wins."""

    def __init__(self, pending: PendingConnections) -> None:
        self.pending = pending
        self.winner: tuple[trio.SocketStream, Conversation] | None = None
        self.stop: list[trio.CancelScope] = []  # cancelled when a handshake wins


ListenCallback = Callable[[str, int, str], None]
"""Called with (host, port, token) once a TCP session listens; for remote bots' operators."""


class BotSession:
    """A bot for many matches; see the module docstring.

    Build one with ``open_bot`` (a spec) or ``open_stream_bot`` (any stream).
    """

    def __init__(
        self,
        spec: BotSpec,
        time_control: TimeControl,
        sandbox: Sandbox | None = None,
        stderr_cap: int = DEFAULT_STDERR_CAP_BYTES,
    ) -> None:
        self.spec = spec
        self.time_control = time_control
        self.sandbox = sandbox  # the limits and isolation its process starts under
        self.stderr_cap = stderr_cap  # bytes of its stderr kept, per match and in all
        self.connection: Connection | None = None
        self.process: BotProcess | None = None
        self.conversation = Conversation()  # the handshake, request ids, each line's verdict
        self.address: tuple[str, int] | None = None
        self.death: BotLostError | None = None
        self.startup_latency: float | None = None
        self._wait_scope: trio.CancelScope | None = None
        self._ready_streak = 0  # replies taken in a row without a scheduler pass
        self._send_error: ConnectionBrokenError | None = None  # from send_now, for send_rest
        self._refusal = ""  # why the last TCP connection was refused, for the fault's detail

    # ----------------------------------------------------------------- state

    @property
    def name(self) -> str:
        """The display name (the spec's): results and standings use it."""
        return self.spec.name

    @property
    def alive(self) -> bool:
        return self.death is None

    @property
    def handshaken(self) -> bool:
        """A valid ready was received: later deaths are not start-up's."""
        return self.conversation.handshaken

    @property
    def reported_name(self) -> str | None:
        ready = self.conversation.ready
        return None if ready is None else ready.name

    @property
    def reported_version(self) -> str | None:
        ready = self.conversation.ready
        return None if ready is None else ready.version

    @property
    def exited(self) -> bool:
        return self.process is not None and self.process.exited.is_set()

    @property
    def pgid(self) -> int | None:
        return None if self.process is None else self.process.pgid

    def cpu_seconds(self) -> float | None:
        """CPU time the bot's process tree has used so far (None: no process of ours)."""
        return None if self.process is None else self.process.cpu_seconds()

    def stderr_text(self) -> str:
        return "" if self.process is None else self.process.stderr.text()

    def take_match_stderr(self) -> StderrBuffer | None:
        """The stderr written since the previous call (a match's worth), or None for no process."""
        return None if self.process is None else self.process.match_stderr.take()

    # ----------------------------------------------------------------- I/O for matches

    async def send(self, data: bytes, timeout: float) -> None:
        """Write whole lines within ``timeout`` seconds, or raise ``BotLostError``.

        A bot that does not read its input for that long is lost: the write
        may have stopped half-way through a line.
        """
        # What the OS takes at once needs no timeout (the usual case: a pipe or a
        # socket with room); only the rest waits, under a bare CancelScope.
        rest = self.send_now(data)
        if rest or self._send_error is not None:  # a break is raised even with no rest
            await self.send_rest(rest, timeout)

    def send_now(self, data: bytes) -> bytes:
        """Write what the OS takes of ``data`` at once, without waiting; the rest for ``send_rest``.

        Never raises for the bot's side: if the connection broke, nothing was
        written, all of ``data`` is returned, and ``send_rest`` raises the
        ``BotLostError`` that says why.  (A dead session raises its death, as
        ``send`` does.)
        """
        connection = self._live_connection()
        try:
            return connection.send_now(data)
        except ConnectionBrokenError as error:
            self._send_error = error
            return data

    async def send_rest(self, rest: bytes, timeout: float) -> None:
        """``send``'s second half: the bytes ``send_now`` left, within ``timeout`` seconds."""
        connection = self._live_connection()
        try:
            error, self._send_error = self._send_error, None
            if error is not None:
                raise error
            with trio.CancelScope(deadline=trio.current_time() + timeout) as scope:
                await connection.send_rest(rest)
            if scope.cancelled_caught:
                raise self._lost(Loss.NOT_READING, f"did not read its input for {timeout:.3g} s")
        except ConnectionBrokenError as error:
            if await self._exited_soon():
                raise self._lost(Loss.EXITED, self._exit_detail()) from None
            raise self._lost(Loss.ENDED, f"stopped reading: {error}") from None

    async def receive_line(
        self, deadline: float, brief_wait: float = 0.0, spin: float = 0.0
    ) -> bytes | None:
        """The next line, or None when the absolute ``deadline`` (trio time) passes first.

        ``brief_wait``: when no line is there yet, first block the whole trio run
        up to this many seconds for one, spending the first ``spin`` of them
        looking rather than sleeping (``Connection.read_soon``), before waiting
        the trio way; skipped when the deadline is nearer.  Only for a caller
        alone in its trio run (docs/speed.md, "The match loop").

        Raises ``BotLostError`` when the stream ends (a ``crash`` if the process
        exited, else ``eof``) or a line passes the length cap (``line_too_long``).
        If the process exits while this waits, the wait is cut to ``EXIT_GRACE``.
        """
        connection = self._live_connection()
        now = trio.current_time()
        try:
            if now >= deadline:
                # Held up past the deadline: only lines read before it count.
                ready = connection.pending()
            elif brief_wait and deadline - now > brief_wait:
                ready = connection.read_soon(brief_wait, spin)
            else:
                ready = connection.read_now()
        except (ConnectionClosedError, LineTooLongError) as error:
            raise await self._read_failed(error) from None
        if not ready:
            self._ready_streak = 0
            return await self._wait_line(connection, deadline)
        # A line already read: trio's scheduler is passed only every SCHEDULE_EVERY
        # such replies in a row, cancellation is checked every time.
        streak = self._ready_streak + 1
        if streak >= SCHEDULE_EVERY:
            self._ready_streak = 0
            await trio.lowlevel.checkpoint()
        else:
            self._ready_streak = streak
            await trio.lowlevel.checkpoint_if_cancelled()
        return connection.take_line()

    async def _wait_line(self, connection: Connection, deadline: float) -> bytes | None:
        """``receive_line`` when no line is there yet: wait the trio way, under the deadline."""
        if self.exited:
            deadline = min(deadline, trio.current_time() + EXIT_GRACE)
        with trio.CancelScope(deadline=deadline) as scope:
            self._wait_scope = scope
            try:
                return await connection.wait_line()
            except (ConnectionClosedError, LineTooLongError) as error:
                raise await self._read_failed(error) from None
            finally:
                self._wait_scope = None
        if self.exited:
            raise self._lost(Loss.EXITED, self._exit_detail())
        return None

    def lose(self, kind: FaultKind, detail: str) -> BotLostError:
        """Mark the session dead for good; returns the error to raise.

        The process is not ended here: the caller first tells the bot why, if
        it still can (``tell``), then calls ``end``.
        """
        error = BotLostError(kind, detail)
        if self.death is None:
            self.death = error
        return error

    async def tell(self, data: bytes, timeout: float = TELL_TIMEOUT) -> None:
        """Best effort: write ``data`` even to a dead session (a last ``fault``); never raises."""
        connection = self.connection
        if connection is None or connection.broken:
            return
        with trio.move_on_after(timeout), contextlib.suppress(ConnectionBrokenError):
            await connection.send(data)

    async def end(self) -> None:
        """End the process tree and close the connection (idempotent)."""
        await self._end_process()

    def _live_connection(self) -> Connection:
        if self.death is not None:
            raise self.death
        assert self.connection is not None
        return self.connection

    def _lost(self, loss: Loss, detail: str) -> BotLostError:
        """``lose`` for a failure under the lines: the conversation names its fault kind."""
        return self.lose(self.conversation.lost(loss), detail)

    async def _exited_soon(self) -> bool:
        """After the stream broke: whether the process exits within ``EOF_EXIT_WAIT``."""
        if self.process is None:
            return False
        with trio.move_on_after(EOF_EXIT_WAIT):
            await self.process.exited.wait()
        return self.exited

    async def _read_failed(self, error: ConnectionClosedError | LineTooLongError) -> BotLostError:
        """The session's death when a read fails: a line too long, a crash, or an end."""
        if isinstance(error, LineTooLongError):
            return self._lost(Loss.LINE_TOO_LONG, str(error))
        if await self._exited_soon():
            return self._lost(Loss.EXITED, self._exit_detail())
        what = "its output ended" if self.spec.transport == "stdio" else "it closed the connection"
        if error.leftover is not None:
            what += f" after an unterminated line ({len(error.leftover)} bytes)"
        elif str(error) != "end of stream":
            what = str(error)
        return self._lost(Loss.ENDED, what)

    def _exit_detail(self, when: str = "") -> str:
        """``exited with status 1 before ready; stderr: <its last line>``."""
        assert self.process is not None
        text = self.process.exit_text() + (f" {when}" if when else "")
        last = self.process.stderr.last_line()
        return f"{text}; stderr: {last}" if last else text

    # ----------------------------------------------------------------- start-up

    async def _start(
        self,
        nursery: trio.Nursery,
        *,
        host: str,
        port: int,
        token: str | None,
        on_listen: ListenCallback | None,
        stream: trio.abc.Stream | None = None,
    ) -> None:
        """Start and handshake within ``startup_time``; any failure makes the session dead."""
        started = trio.current_time()
        deadline = started + self.time_control.startup_time
        try:
            if self.spec.unavailable is not None:
                raise BotLostError(FaultKind.STARTUP, self.spec.unavailable)
            if stream is not None:
                connection = Connection(stream)
                self.connection = connection
                self.conversation = await self._handshake(connection, deadline, token)
            elif self.spec.transport == "stdio":
                await self._start_stdio(nursery, deadline)
            else:
                await self._start_tcp(nursery, deadline, host, port, token, on_listen)
            self.startup_latency = trio.current_time() - started
        except BotLostError as error:
            if self.death is None:
                self.death = error
            await self.tell(startup_fault(error))
            await self._end_process()

    async def _spawn(self, nursery: trio.Nursery, env: dict[str, str], stdio: bool) -> BotProcess:
        spec = self.spec
        try:
            process = await start_process(
                spec.command,
                cwd=spec.cwd,
                env=clean_environment(env),
                stdio=stdio,
                stderr_cap=self.stderr_cap,
                sandbox=self.sandbox,
            )
        except OSError as error:
            reason = error.strerror or str(error)
            where = f" in {spec.cwd}" if spec.cwd is not None else ""
            raise BotLostError(
                FaultKind.STARTUP, f"cannot start {spec.command[0]!r}{where}: {reason}"
            ) from None
        self.process = process
        nursery.start_soon(self._watch, process)
        nursery.start_soon(process.drain_stderr)
        return process

    async def _watch(self, process: BotProcess) -> None:
        await process.watch()
        scope = self._wait_scope
        if scope is not None:
            scope.deadline = min(scope.deadline, trio.current_time() + EXIT_GRACE)

    async def _start_stdio(self, nursery: trio.Nursery, deadline: float) -> None:
        process = await self._spawn(nursery, dict(self.spec.env), stdio=True)
        self.connection = Connection(process.stdio())
        self.conversation = await self._handshake(self.connection, deadline, None)

    async def _start_tcp(
        self,
        nursery: trio.Nursery,
        deadline: float,
        host: str,
        port: int,
        token: str | None,
        on_listen: ListenCallback | None,
    ) -> None:
        token = token or secrets.token_urlsafe(24)
        try:
            listeners = await trio.open_tcp_listeners(port, host=host)
        except OSError as error:
            # The referee's own problem, but reported as this bot's start-up failure so
            # that a match or league still finishes (and says why).
            raise BotLostError(
                FaultKind.STARTUP, f"cannot listen on {host}:{port}: {error}"
            ) from None
        listener = listeners[0]
        for extra in listeners[1:]:
            await extra.aclose()
        try:
            bound = listener.socket.getsockname()
            self.address = (str(bound[0]), int(bound[1]))
            connect = _connect_text(*self.address)
            if on_listen is not None:
                on_listen(self.address[0], self.address[1], token)
            if not self.spec.remote:
                env = dict(self.spec.env)
                env[ENV_CONNECT] = connect
                env[ENV_TOKEN] = token
                await self._spawn(nursery, env, stdio=False)
            stream, self.conversation = await self._accept(listener, deadline, token)
        finally:
            await listener.aclose()
        self.connection = Connection(stream)

    async def _accept(
        self, listener: trio.SocketListener, deadline: float, token: str
    ) -> tuple[trio.SocketStream, Conversation]:
        """The first connection that completes the handshake with the right token.

        Connections are accepted until ``deadline``.  Handshakes run side by
        side, so a connection that stalls cannot keep the real bot waiting,
        each under the start-up limit as its deadline (a remote bot's counts
        from its accepted connection, SPEC.md 6.1; a started bot's from its
        start).  At most ``MAX_PENDING_CONNECTIONS`` are pending at once; one
        more evicts the oldest (``referee.transport.tcp_guard``).  A refused connection
        is told why and closed, and the seat keeps waiting for the right one.
        """
        race = _Race(PendingConnections(MAX_PENDING_CONNECTIONS))
        async with trio.open_nursery() as handshakes:
            with trio.CancelScope(deadline=deadline) as accepting:
                race.stop = [accepting, handshakes.cancel_scope]
                self._wait_scope = accepting
                try:
                    while True:
                        stream = await listener.accept()
                        until = deadline
                        if self.spec.remote:
                            until = trio.current_time() + self.time_control.startup_time
                        handshakes.start_soon(self._race_handshake, race, stream, until, token)
                finally:
                    self._wait_scope = None
        if race.winner is not None:
            return race.winner
        raise self._no_connection()

    async def _race_handshake(
        self, race: _Race, stream: trio.SocketStream, until: float, token: str
    ) -> None:
        """One accepted connection's handshake in ``_accept``'s race; refused or the winner."""
        connection = Connection(stream)
        error: BotLostError | None = None
        conversation: Conversation | None = None
        with race.pending.admit() as admission:
            try:
                conversation = await self._handshake(connection, until, token)
            except BotLostError as lost:
                error = lost
        if admission.refusal is not None:
            error = BotLostError(FaultKind.STARTUP, admission.refusal)
        if error is not None:
            self._refusal = error.detail
            with trio.move_on_after(TELL_TIMEOUT), contextlib.suppress(ConnectionBrokenError):
                await connection.send(startup_fault(error))
            await connection.aclose()
            return
        assert conversation is not None
        if race.winner is not None:
            await stream.aclose()
            return
        race.winner = (stream, conversation)
        for scope in race.stop:
            scope.cancel()  # the others lost the race

    def _no_connection(self) -> BotLostError:
        """Why no connection won ``_accept``'s race before its deadline."""
        refused = f"refused: {self._refusal}" if self._refusal else ""
        if self.exited:
            when = "before connecting to the referee"
            if refused:
                when = f"after its connection was {refused}"
            return BotLostError(FaultKind.STARTUP, self._exit_detail(when))
        return BotLostError(
            FaultKind.STARTUP,
            f"no connection with a ready within {self.time_control.startup_time:g} s"
            + (f" ({refused})" if refused else ""),
        )

    async def _handshake(
        self, connection: Connection, deadline: float, token: str | None
    ) -> Conversation:
        """Send hello, read ready, and (TCP) check the token; the conversation that follows."""
        conversation = Conversation()
        quote = token is None  # a TCP line may hold the token: never quoted
        line = await self._first_line(connection, conversation, deadline, quote=quote)
        try:
            ready = conversation.receive_ready(line)
        except HandshakeError as error:
            detail = error.detail
            if error.malformed is not None:
                detail = self._not_ready(connection, line, error.malformed, quote=quote)
            raise BotLostError(error.kind, detail) from None
        if token is not None and not token_matches(ready.token, token):
            raise BotLostError(FaultKind.STARTUP, "wrong or missing token in ready")
        return conversation

    async def _first_line(
        self, connection: Connection, conversation: Conversation, deadline: float, *, quote: bool
    ) -> bytes:
        """Send hello and read the bot's first line by ``deadline``, or say why not."""
        with trio.CancelScope(deadline=deadline) as scope:
            if self.connection is connection:
                self._wait_scope = scope
            try:
                await connection.send(conversation.hello(referee_version()))
                return await connection.receive_line()
            except (ConnectionBrokenError, ConnectionClosedError) as error:
                what = str(error)
                if isinstance(error, ConnectionClosedError):
                    what = "its output ended before ready"
                detail = await self._startup_gone(what)
                raise BotLostError(conversation.lost(Loss.ENDED), detail) from None
            except LineTooLongError as error:
                kind = conversation.lost(Loss.LINE_TOO_LONG)
                raise BotLostError(kind, f"instead of ready: {error}") from None
            finally:
                if self._wait_scope is scope:  # (a TCP handshake's is not: accept's stays)
                    self._wait_scope = None
        if self.exited:
            raise BotLostError(conversation.lost(Loss.EXITED), self._exit_detail("before ready"))
        raise BotLostError(
            conversation.lost(Loss.SILENT),
            f"no ready within {self.time_control.startup_time:g} s; "
            + self._silence(connection, quote=quote),
        )

    def _not_ready(
        self, connection: Connection, line: bytes, error: MalformedMessageError, *, quote: bool
    ) -> str:
        """A start-up fault's detail for a first line that is not a message."""
        number = connection.leading_blank_lines + 1
        # Not even JSON: most often a print meant for the bot's own log.
        printed = self.spec.transport == "stdio" and error.problem in ("not_json", "not_utf8")
        return (
            f"instead of ready, line {number} of its {self._output}: {error}; "
            + _begins(line, quote=quote)
            + (STDERR_HINT if printed else "")
        )

    @property
    def _output(self) -> str:
        """Where the bot's protocol lines come from, in a fault's words."""
        return "stdout" if self.spec.transport == "stdio" else "TCP connection"

    def _silence(self, connection: Connection, *, quote: bool) -> str:
        """What the bot wrote before its start-up limit passed, when no line came whole.

        Nothing at all is usually a program whose output waits in its own buffer
        (Python's, C's stdio: a pipe is not a terminal) for a flush that never comes.
        """
        if connection.bytes_received == 0:
            return (
                f"the bot wrote nothing to its {self._output}: if it prints, make sure it "
                "flushes (python3 -u, print(..., flush=True), fflush(stdout))"
            )
        size, head = connection.unfinished(QUOTED_BYTES)
        if size:
            return (
                f"the bot wrote {size} bytes to its {self._output} with no end of line"
                + (f", beginning {quoted(head)}" if quote else "")
                + ": end each line with \\n and flush"
            )
        return f"the bot wrote only blank lines to its {self._output}"

    async def _startup_gone(self, what: str) -> str:
        if self.process is not None:
            with trio.move_on_after(EOF_EXIT_WAIT):
                await self.process.exited.wait()
        if self.exited:
            return self._exit_detail("before ready")
        return what

    # ----------------------------------------------------------------- the end

    async def aclose(self, *, shutdown_grace: float = SHUTDOWN_GRACE) -> None:
        """Send shutdown, give the bot ``shutdown_grace`` seconds to exit, end the tree."""
        with trio.CancelScope(shield=True):
            connection = self.connection
            if self.death is None and connection is not None and not connection.broken:
                with trio.move_on_after(TELL_TIMEOUT):
                    with contextlib.suppress(ConnectionBrokenError):
                        await connection.send(encode(Shutdown()))
                        await connection.send_eof()  # SPEC.md 6.3: then your input ends
                if self.process is not None:
                    with trio.move_on_after(shutdown_grace):
                        await self.process.exited.wait()
            if self.death is None:
                self.death = BotLostError(FaultKind.EOF, "the session is closed")
            await self._end_process()

    async def _end_process(self) -> None:
        if self.process is not None:
            await self.process.end()
        if self.connection is not None:
            await self.connection.aclose()


def startup_fault(error: BotLostError) -> bytes:
    """The ``fault`` line that tells a bot why its session ended before it began."""
    return encode(
        Fault(id=None, kind=str(error.kind), detail=error.detail, disqualified=True, applied=None)
    )


QUOTED_BYTES = 60  # of a bot's line, quoted in a start-up fault
STDERR_HINT = " (debugging output goes to stderr, not stdout)"


def _begins(line: bytes, *, quote: bool) -> str:
    """How a start-up fault shows the bot's line: quoted, unless it may hold a token.

    A connection that must send a token (TCP) may have put it in the very line that
    failed, and a fault's detail goes to logs, standings and pages: such a line is
    named by its length only.
    """
    if quote:
        return f"the line begins {quoted(line)}"
    return f"the line ({len(line)} bytes) is not quoted: it may hold the token"


def quoted(line: bytes, limit: int = QUOTED_BYTES) -> str:
    """The first ``limit`` bytes of a bot's line as a double-quoted string, escaped.

    Text stays readable (UTF-8 included); control characters, quotes, backslashes
    and bytes that are not UTF-8 are escaped, so the excerpt is one printable line
    that says exactly which bytes came.
    """
    text = line[:limit].decode("utf-8", "surrogateescape")
    out = []
    for char in text:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8 (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif char in '"\\':
            out.append("\\" + char)
        elif char.isprintable():
            out.append(char)
        elif char in _NAMED_ESCAPES:
            out.append(_NAMED_ESCAPES[char])
        else:
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    more = "..." if len(line) > limit else ""
    return '"' + "".join(out) + '"' + more


_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _connect_text(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@asynccontextmanager
async def open_bots(
    specs: Sequence[BotSpec],
    time_control: TimeControl,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    tokens: Sequence[str | None] | None = None,
    on_listen: Callable[[int, str, int, str], None] | None = None,
    stderr_dir: Path | None = None,
    sandbox: Sandbox | None = None,
    stderr_cap: int = DEFAULT_STDERR_CAP_BYTES,
) -> AsyncIterator[list[BotSession]]:
    """Start several bots side by side (start-up is paid in parallel); end them all on exit.

    ``tokens`` gives each TCP bot its token (default: a fresh random one);
    ``on_listen(index, host, port, token)`` is told each TCP address, so an
    operator can pass it to a remote bot.  With ``stderr_dir`` each bot's
    stderr (head and tail, capped) is saved there as ``<index>-<name>.stderr``.
    ``sandbox`` (``referee.sandbox.resolve``) is what every bot process starts
    under; None is the process group alone.  ``stderr_cap``: the bytes of each
    bot's stderr kept, its head and its tail, per match and in all (the rest is
    counted).
    """
    sessions = [BotSession(spec, time_control, sandbox, stderr_cap) for spec in specs]
    async with trio.open_nursery() as nursery:
        try:
            async with trio.open_nursery() as starters:
                for index, session in enumerate(sessions):
                    token = tokens[index] if tokens is not None else None
                    listen = None
                    if on_listen is not None:
                        listen = _bind_index(on_listen, index)
                    starters.start_soon(_start_one, session, nursery, host, port, token, listen)
            yield sessions
        finally:
            with trio.CancelScope(shield=True):
                async with trio.open_nursery() as closers:
                    for session in sessions:
                        closers.start_soon(_close_one, session)
                if stderr_dir is not None:
                    _save_stderr(sessions, stderr_dir)
            nursery.cancel_scope.cancel()


def _bind_index(callback: Callable[[int, str, int, str], None], index: int) -> ListenCallback:
    def bound(host: str, port: int, token: str) -> None:
        callback(index, host, port, token)

    return bound


async def _start_one(
    session: BotSession,
    nursery: trio.Nursery,
    host: str,
    port: int,
    token: str | None,
    on_listen: ListenCallback | None,
) -> None:
    await session._start(nursery, host=host, port=port, token=token, on_listen=on_listen)


async def _close_one(session: BotSession) -> None:
    await session.aclose()


def _save_stderr(sessions: Sequence[BotSession], directory: Path) -> None:
    try:
        private_dir(directory)
        for index, session in enumerate(sessions):
            if session.process is None:
                continue
            safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session.name)
            path = directory / f"{index}-{safe}.stderr"
            with open(path, "w", opener=private_opener) as file:
                file.write(session.stderr_text())
    except OSError:
        pass  # a bot's log is a courtesy; losing it must not fail the match


@asynccontextmanager
async def open_bot(
    spec: BotSpec,
    time_control: TimeControl,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    on_listen: ListenCallback | None = None,
    stderr_path: Path | None = None,
    sandbox: Sandbox | None = None,
    stderr_cap: int = DEFAULT_STDERR_CAP_BYTES,
) -> AsyncIterator[BotSession]:
    """Start one bot and handshake; on exit shut it down and end its process tree.

    A start-up failure is not an exception: the session is dead (``alive`` is
    False, ``death`` says why) and every decision of it in a match gets the
    default policy with the fault recorded.
    """
    listen = None if on_listen is None else _drop_index(on_listen)
    opened: list[BotSession] = []
    try:
        async with open_bots(
            [spec],
            time_control,
            host=host,
            port=port,
            tokens=[token],
            on_listen=listen,
            sandbox=sandbox,
            stderr_cap=stderr_cap,
        ) as sessions:
            opened = sessions
            yield sessions[0]
    finally:
        # Written once the process has ended and its stderr is read to the end: what
        # it wrote in its last moments (after the referee had its last reply) counts.
        if stderr_path is not None and opened:
            _append_stderr(stderr_path, opened[0].stderr_text())


def _append_stderr(path: Path, text: str) -> None:
    """Add one process's stderr to ``path``: a bot's later processes append to its file.

    Appended, not overwritten, because a table worker starts a bot afresh
    after a crash and for every repeated deal; what an earlier process said
    (often why it crashed) must not be lost.  Nothing is written for silence.
    """
    if not text:
        return
    try:
        private_dir(path.parent)
        with open(path, "a", encoding="utf-8", errors="replace", opener=private_opener) as file:
            file.write(text if text.endswith("\n") else text + "\n")
    except OSError:
        pass


def _drop_index(callback: ListenCallback) -> Callable[[int, str, int, str], None]:
    def dropped(_index: int, host: str, port: int, token: str) -> None:
        callback(host, port, token)

    return dropped


@asynccontextmanager
async def open_stream_bot(
    stream: trio.abc.Stream,
    name: str,
    time_control: TimeControl,
    *,
    token: str | None = None,
) -> AsyncIterator[BotSession]:
    """A session over a stream someone else opened (a test's memory stream, an accepted socket).

    The handshake is the same as for a started bot; there is no process, so
    an end of stream is always ``eof``, never ``crash``.
    """
    spec = BotSpec(name, (), transport="tcp")
    session = BotSession(spec, time_control)
    async with trio.open_nursery() as nursery:
        try:
            await session._start(
                nursery, host="", port=0, token=token, on_listen=None, stream=stream
            )
            yield session
        finally:
            await session.aclose(shutdown_grace=0)
            nursery.cancel_scope.cancel()
