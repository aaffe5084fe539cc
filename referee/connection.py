"""One bot connection: protocol lines over any ``trio.abc.Stream``.

A process's stdio (stdin and stdout stapled together) and a TCP socket are
both a ``trio.abc.Stream``, and so is the in-memory pair a test builds with
``trio.testing.memory_stream_pair``: one class serves all three, so the
referee's handling of a bot is the same code whatever carries the bytes, and
the match logic can be tested on a virtual clock with no process at all.

The class is a thin loop around ``protocol.framing.LineFramer`` (sans-IO):
bytes in, lines out, never more than the framer's cap buffered.  Timeouts are
the caller's: every method may be cancelled by the caller's cancel scope.  A
cancelled receive loses nothing (trio's ``receive_some`` receives nothing when
cancelled, and whole lines wait in ``_lines``).  A cancelled send may have
written half a line, after which the stream cannot be trusted to start a line
at a boundary, so the connection marks itself ``broken``.

A process's pipes and a TCP socket are file descriptors, and for them the
connection takes a shorter road than ``trio.abc.Stream`` (trio's own
``receive_some`` and ``send_all`` do the same system calls, each after a
checkpoint, that is a pass of the scheduler): a write is tried at once and
only what the OS did not take waits (``send_now``), and a read waits with
``trio.lowlevel.wait_readable`` only when nothing is there.  That is two
scheduler passes fewer per request and reply, which a referee pays for every
decision (docs/speed.md).  A receive still passes the scheduler once, so a
match of fast bots lets other tasks run and is cancellable as before, and a
write while another still waits in the stream's ``send_all`` goes to the
stream too (which refuses it, as it always did), never between its bytes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol, cast

import trio

from protocol.framing import MAX_LINE_BYTES, LineFramer, LineTooLongError

RECEIVE_SIZE = 65536


class ConnectionClosedError(Exception):
    """The peer's side of the stream ended (or broke); ``leftover`` is an unterminated last line."""

    def __init__(self, message: str, leftover: bytes | None = None) -> None:
        super().__init__(message)
        self.leftover = leftover


class ConnectionBrokenError(Exception):
    """Our side can no longer write: the peer stopped reading, closed, or a send was cut short."""


class _HasFileno(Protocol):
    def fileno(self) -> int: ...


def _descriptors(stream: trio.abc.Stream) -> tuple[_HasFileno | None, _HasFileno | None]:
    """What to write to and read from directly (``fileno()``), if the stream is made of fds."""
    if isinstance(stream, trio.SocketStream):
        return stream.socket, stream.socket
    if isinstance(stream, trio.StapledStream):
        send, receive = stream.send_stream, stream.receive_stream
        fd_stream = trio.lowlevel.FdStream
        return (
            send if isinstance(send, fd_stream) else None,
            receive if isinstance(receive, fd_stream) else None,
        )
    return None, None


def no_delay(stream: trio.abc.Stream) -> None:
    """Nagle's algorithm off on a TCP stream (trio's default, relied on: said here).

    A line written in two pieces otherwise waits for the peer's delayed ACK
    before its second piece leaves: about 40 ms a reply (docs/speed.md).
    """
    if isinstance(stream, trio.SocketStream):
        with contextlib.suppress(OSError):  # not TCP (a Unix socket): nothing to turn off
            stream.setsockopt(trio.socket.IPPROTO_TCP, trio.socket.TCP_NODELAY, True)


def _stream_error(
    error: OSError, socket: bool
) -> trio.BrokenResourceError | trio.ClosedResourceError:
    """The error trio's stream would have raised for ``error``, so the details read the same.

    trio's ``FdStream`` and ``SocketStream`` word a closed descriptor differently,
    and both keep the ``OSError`` as the cause, which ``_reason`` prints.
    """
    translated: trio.BrokenResourceError | trio.ClosedResourceError
    if error.errno == errno.EBADF or (socket and error.errno == errno.ENOTSOCK):
        closed = "this socket was already closed" if socket else "file was already closed"
        translated = trio.ClosedResourceError(closed)
    else:
        translated = trio.BrokenResourceError(
            f"socket connection broken: {error}" if socket else ""
        )
    translated.__cause__ = error
    return translated


# A look at the descriptor that ends this long after the one before means the core
# went to another process meanwhile: on a busy machine, a spinning reader would wait
# for that process's turn before it sees the reply (a sleeping one is woken at once).
CONTENDED = 0.00005
MAX_SLEEPS_AFTER_CONTENTION = 1024


class _Contention:
    """Whether ``read_soon``'s spin pays on this machine now; one per process.

    A spin pays only with a core to spare.  On a busy one, the spinning
    thread uses up its fair share looking, and when the reply comes it may be
    waiting for another process's turn, where a sleeping thread is woken at once:
    a match under two CPU-bound processes ran at 38 to 83% of the floor spinning,
    81 to 141% sleeping (docs/speed.md).  So no spin starts while every core
    has a runnable process besides this one, and after a spin cut short by
    another process's turn, the next waits sleep at once: one, then two, four,
    ... up to ``MAX_SLEEPS_AFTER_CONTENTION`` while spins keep meeting other
    processes; each clean spin halves the next count.
    """

    __slots__ = ("backoff", "cores", "loadavg", "path", "sleeps")

    def __init__(self, path: str = "/proc/loadavg", cores: int | None = None) -> None:
        self.sleeps = 0  # waits left that sleep without spinning
        self.backoff = 0  # sleeps after the next contended spin
        self.cores = len(os.sched_getaffinity(0)) if cores is None else cores
        self.path = path
        self.loadavg = -2  # ``path`` kept open; -1 if it cannot be read (no spin)

    def may_spin(self) -> bool:
        """True unless a recent spin met another process, or every core has a runnable
        process besides this one right now (the bot just asked is one of them)."""
        if self.sleeps:
            self.sleeps -= 1
            return False
        return self.runnable_besides_me() < self.cores

    def runnable_besides_me(self) -> int:
        """The processes runnable on the machine now, this one left out: /proc/loadavg's
        fourth field ("3/412": runnable/all), read with one pread (2 µs)."""
        if self.loadavg == -2:
            try:
                self.loadavg = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                self.loadavg = -1
        if self.loadavg < 0:
            return self.cores  # nothing known: do not spin
        try:
            fields = os.pread(self.loadavg, 128, 0).split()
            return int(fields[3].split(b"/")[0]) - 1
        except (OSError, IndexError, ValueError):
            return self.cores

    def spun(self, *, contended: bool) -> None:
        if contended:
            self.backoff = min(max(1, 2 * self.backoff), MAX_SLEEPS_AFTER_CONTENTION)
            self.sleeps = self.backoff
        else:
            self.backoff //= 2


_CONTENTION = _Contention()


class Connection:
    """Protocol lines over a ``trio.abc.Stream``; see the module docstring."""

    __slots__ = (
        "_closed",
        "_framer",
        "_in",
        "_lines",
        "_out",
        "_poller",
        "_sending",
        "_socket",
        "_stream",
        "broken",
        "bytes_received",
        "bytes_sent",
        "on_receive",
        "on_send",
        "spun",
    )

    def __init__(self, stream: trio.abc.Stream, *, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self._stream = stream
        self._out, self._in = _descriptors(stream)
        self._socket = isinstance(stream, trio.SocketStream)
        no_delay(stream)
        self._sending = False  # a send_rest waits in the stream's send_all
        self._poller: tuple[int, select.poll] | None = None  # read_soon's, for its descriptor
        self.spun = 0.0  # seconds read_soon has spent looking for lines (its ``spin``)
        self._framer = LineFramer(max_line_bytes)
        self._lines: deque[bytes] = deque()
        self._closed = False
        self.broken = False
        self.bytes_sent = 0
        self.bytes_received = 0
        # Told every chunk before it is sent and every line as it is taken
        # (transcripts, benchmarks); they must not raise.
        self.on_send: Callable[[bytes], None] | None = None
        self.on_receive: Callable[[bytes], None] | None = None

    @property
    def stream(self) -> trio.abc.Stream:
        return self._stream

    async def send(self, data: bytes) -> None:
        """Write ``data`` (whole lines): at once if the OS takes it, else with ``send_all``.

        Raises ``ConnectionBrokenError`` if the peer cannot be written to; if
        the caller's scope cancels the write, the connection is broken too.
        """
        rest = self.send_now(data)
        if rest:
            await self.send_rest(rest)

    def send_now(self, data: bytes) -> bytes:
        """Write what the OS takes of ``data`` without waiting; what is left to ``send_rest``.

        Without a file descriptor (a memory stream) nothing is written here.
        Raises ``ConnectionBrokenError`` as ``send`` does.
        """
        if self.broken or self._closed:
            raise ConnectionBrokenError("the connection is already broken")
        if self.on_send is not None:
            self.on_send(data)
        out = self._out
        fd = -1 if out is None or self._sending else out.fileno()
        if fd < 0:
            return data  # no descriptor, or closed: the stream says so in its own words
        try:
            written = os.write(fd, data)
        except BlockingIOError:
            return data
        except OSError as error:
            self.broken = True
            reason = _reason(_stream_error(error, self._socket))
            raise ConnectionBrokenError(f"the bot's input is closed ({reason})") from None
        self.bytes_sent += written
        return data[written:]

    async def send_rest(self, data: bytes) -> None:
        """Write the rest of a ``send_now`` with the stream's ``send_all`` (it may wait)."""
        sending, self._sending = self._sending, True
        try:
            await self._stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as error:
            self.broken = True
            raise ConnectionBrokenError(f"the bot's input is closed ({_reason(error)})") from None
        except BaseException:
            # Cancelled part-way: some bytes of a line may be out; the stream is out of step.
            self.broken = True
            raise
        finally:
            self._sending = sending
        self.bytes_sent += len(data)

    async def send_eof(self) -> None:
        """Close our sending side only (the bot reads end of file), if the stream can."""
        stream = self._stream
        if isinstance(stream, trio.abc.HalfCloseableStream) and not self.broken:
            try:
                await stream.send_eof()
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                self.broken = True
            else:
                self.broken = True  # nothing more can be sent

    def take_line(self) -> bytes | None:
        """A whole line already received, without waiting; None if there is none."""
        if not self._lines:
            return None
        line = self._lines.popleft()
        if self.on_receive is not None:
            self.on_receive(line)
        return line

    def pending(self) -> bool:
        """True if a whole line has been received and not yet taken."""
        return bool(self._lines)

    @property
    def leading_blank_lines(self) -> int:
        """The framer's: read when the first line is taken, that line's number minus one."""
        return self._framer.leading_blank_lines

    def unfinished(self, limit: int) -> tuple[int, bytes]:
        """The unfinished line received so far: its length and its first ``limit`` bytes."""
        return self._framer.buffered, self._framer.head(limit)

    def read_now(self) -> bool:
        """Read what has arrived, without waiting; True if a whole line is now ready.

        Only for a stream of file descriptors with no line ready yet (else it
        reads nothing).  Raises as ``receive_line`` does: ``ConnectionClosedError``
        at the end of the stream, ``LineTooLongError`` past the cap.  The caller
        takes the line (``take_line``).
        """
        if self._lines or self._in is None or self._framer.failed:
            return bool(self._lines)
        fd = self._in.fileno()
        if fd < 0:
            return False
        try:
            data = os.read(fd, RECEIVE_SIZE)
        except BlockingIOError:
            return False
        except OSError as error:
            stream_error = _stream_error(error, self._socket)
            raise ConnectionClosedError(f"the connection broke ({_reason(stream_error)})") from None
        if not data:
            raise ConnectionClosedError("end of stream", self._framer.end())
        self._take(data)
        return bool(self._lines)

    def read_soon(self, seconds: float, spin: float = 0.0) -> bool:
        """``read_now`` after blocking this thread up to ``seconds`` for the descriptor.

        This blocks the whole trio run: every other task and every deadline
        waits with it.  It is for a caller that knows nothing else is in play
        (``BotSession.receive_line``'s ``brief_wait``), for a time short beside
        any time limit: a quick bot's reply is then read without a pass of
        trio's run loop, which costs a referee more than the read itself
        (docs/speed.md).  ``poll``, not ``select``, so any descriptor number works.

        ``spin``: for the first this many seconds (at most ``seconds``), look
        without sleeping, giving the core to any other runnable process between
        looks (``sched_yield``), and only then sleep in ``poll``.  A core that
        sleeps even 0.1 ms runs the referee's next steps two to five times
        slower on a virtual machine (``benchmarks/wakeup.py``), so a reply that
        comes within the spin is handled while the core is still warm.
        """
        if self._lines or self._in is None or self._framer.failed:
            return bool(self._lines)
        fd = self._in.fileno()
        if fd < 0:
            return False
        poller = self._poller
        if poller is None or poller[0] != fd:
            poller = (fd, select.poll())
            poller[1].register(fd, select.POLLIN)
            self._poller = poller
        poll = poller[1].poll
        if spin > 0.0:
            spun, ready = self._spin(poll, min(spin, seconds))
            if ready:
                return self.read_now()
            seconds = max(0.0, seconds - spun)  # poll waits for ever if < 0
        if not poll(seconds * 1000):
            return False
        return self.read_now()

    def _spin(
        self, poll: Callable[[int], list[tuple[int, int]]], spin: float
    ) -> tuple[float, bool]:
        """``read_soon``'s looks: (seconds spent, True if the descriptor became readable).

        A reply already there costs one look and no check of the machine.  The
        spin ends early, to sleep instead, when the core went to another process
        between two looks (a yield or a preemption): a sleeping thread is woken by
        the reply at once, a spinning one only after that process's turn.
        """
        if poll(0):
            return 0.0, True
        if not _CONTENTION.may_spin():
            return 0.0, False
        clock = time.perf_counter
        give_way = os.sched_yield
        start = last = clock()
        ready = contended = False
        while not ready:
            give_way()
            ready = bool(poll(0))
            now = clock()
            contended = now - last > CONTENDED
            if contended or now - start >= spin:
                break
            last = now
        spent = clock() - start
        _CONTENTION.spun(contended=contended)
        self.spun += spent
        return spent, ready

    def _take(self, data: bytes) -> None:
        """Frame bytes just read into lines (an over-long line raises once the lines
        before it are kept)."""
        self.bytes_received += len(data)
        try:
            self._lines.extend(self._framer.feed(data))
        except LineTooLongError as error:
            self._lines.extend(error.lines)
            if not self._lines:
                raise

    async def receive_line(self, *, drained: bool = False) -> bytes:
        """The next line, without its terminator.

        ``drained``: the caller has just read all there was (``read_now`` said no
        line), so this waits before it reads again instead of trying a read that
        would find nothing (``wait_line``).

        Raises ``ConnectionClosedError`` at the end of the stream and
        ``LineTooLongError`` (from the framer) when a line passes the cap.
        Lines that came whole before an over-long one are returned first.
        """
        if drained and not self._lines:
            return await self.wait_line()
        passed = self._lines or self._in is None  # no read of ours, or the stream's own
        while not self._lines:
            if self._framer.failed:
                self._framer.feed(b"")  # raises the framer's error again
            try:
                data = await self._receive_some()
                if data is None:  # it waited: the scheduler has been passed
                    passed = True
                    continue
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as error:
                raise ConnectionClosedError(f"the connection broke ({_reason(error)})") from None
            if not data:
                leftover = self._framer.end() if not self._framer.failed else None
                raise ConnectionClosedError("end of stream", leftover)
            self._take(bytes(data))
            if not self._lines:
                # Bytes but no line yet (blank lines, a line in pieces): pass the
                # scheduler before reading again, or a bot that keeps bytes coming
                # keeps this loop from ever seeing the caller's deadline.
                await trio.lowlevel.checkpoint()
                passed = True
        if not passed:
            # Read without waiting: pass the scheduler once all the same, as the
            # stream's receive_some would have (other tasks, cancellation, Ctrl-C).
            await trio.lowlevel.checkpoint()
        line = self._lines.popleft()
        if self.on_receive is not None:
            self.on_receive(line)
        return line

    async def wait_line(self) -> bytes:
        """``receive_line(drained=True)``, on the shortest road for a file descriptor.

        The caller's ``read_now`` has just said no whole line is there: wait for
        the descriptor (a pass of the scheduler, and the caller's deadline), read
        what came, and again until a line is whole.  Raises as ``receive_line``.
        Anything but an open descriptor with a working framer takes ``receive_line``.
        """
        source = self._in
        fd = -1 if source is None or self._framer.failed else source.fileno()
        if source is None or fd < 0:  # the stream's own receive_some waits, or raises
            return await self.receive_line()
        while True:
            try:
                await trio.lowlevel.wait_readable(fd)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as error:
                raise ConnectionClosedError(f"the connection broke ({_reason(error)})") from None
            if self.read_now():
                return cast(bytes, self.take_line())
            if self._framer.failed or source.fileno() < 0:
                return await self.receive_line()

    async def _receive_some(self) -> bytes | bytearray | None:
        """What has arrived, b"" at the end, or None after waiting until something may have.

        Without a file descriptor, or with one already closed, the stream's own
        ``receive_some`` (which waits, or says what is wrong in its own words).
        """
        fd = -1 if self._in is None else self._in.fileno()
        if fd < 0:
            return await self._stream.receive_some(RECEIVE_SIZE)
        try:
            return os.read(fd, RECEIVE_SIZE)
        except BlockingIOError:
            await trio.lowlevel.wait_readable(fd)
            return None
        except OSError as error:
            raise _stream_error(error, self._socket) from error

    async def aclose(self) -> None:
        """Close our side; never raises and never waits on the peer."""
        if self._closed:
            return
        self._closed = True
        quiet = contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError)
        with trio.CancelScope(shield=True), trio.move_on_after(1), quiet:
            await self._stream.aclose()


def _reason(error: BaseException) -> str:
    cause = error.__cause__ or error.__context__
    text = str(error) or type(error).__name__
    if cause is not None and str(cause):
        text = f"{text}: {cause}"
    return text
