"""The web listener: what a client costs the server before the app has its request.

A connection holds a file descriptor from its accept to its close, and the
server needs descriptors of its own: the database, the tables' worker pipes,
a version's check, a match log.  Slow clients that hold many connections
(a request head or body sent a byte every few seconds, an answer never read)
once took them all, and the server ended when its leaderboard loop could not
open the database.  So, the shape of nginx's and Apache's slow-client limits:

* **Descriptors**: the soft limit is raised to the hard one at start
  (``raise_descriptor_limit``), and a reserve (``reserve_for``) is kept for
  the server itself: a connection accepted past ``limit - reserve`` open
  descriptors gets ``503`` and is closed at once.
* **Per address**: at most ``connections_per_address`` open connections from
  one client address; one more gets ``503``.
* **Head**: a request head (line and headers) must arrive whole within
  ``header_timeout`` of the connection (or of the previous answer on a
  kept-alive one), else the connection is closed: hypercorn's
  ``keep_alive_timeout``, which runs until a request head is complete.
* **Answer**: an answer the client does not read within ``send_timeout``
  ends the connection (``GuardedStream``; hypercorn waits for ever).
* **Body**: ``referee.server.middleware.BodyDeadline`` (the app's side), and
  the unauthenticated requests' cap, ``AnonymousRequests``.

hypercorn's trio worker (``hypercorn.trio.run.worker_serve``) builds its
listeners itself, so ``serve_http`` is that function for one plain-HTTP
bind, with the guard between trio's accept and hypercorn's connection.
"""

from __future__ import annotations

import os
import resource
import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState
from hypercorn.utils import repr_socket_addr, wrap_app
from starlette.types import ASGIApp

from referee.server.competition_file import ClientLimits

RESERVE_LEAST = 128  # descriptors kept for the server itself, at the least
RESERVE_SHARE = 8  # or one in this many of the limit, when that is more
DESCRIPTOR_CEILING = 1 << 20  # Linux's default nr_open: the most a soft limit is raised to
MEASURE_EVERY = 0.25  # seconds between counts of the process's open descriptors
LINGERING_MOST = 16  # refused connections given a moment to read their 503 at once
LINGER = 0.5  # seconds a refused connection's unread request is read and dropped
REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"retry-after: 10\r\nconnection: close\r\ncontent-length: %d\r\n\r\n%s"
)


def raise_descriptor_limit() -> int:
    """Raise this process's soft descriptor limit to its hard one; the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return DESCRIPTOR_CEILING
    target = DESCRIPTOR_CEILING if hard == resource.RLIM_INFINITY else hard
    if soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):  # a kernel whose nr_open is lower: keep what we have
            pass
    return soft


def reserve_for(limit: int) -> int:
    """Descriptors no connection may take: the server's own, whatever the clients do."""
    return min(max(RESERVE_LEAST, limit // RESERVE_SHARE), limit // 2)


def open_descriptors() -> int:
    """How many descriptors this process has open now."""
    for directory in ("/proc/self/fd", "/dev/fd"):
        if Path(directory).is_dir():
            return len(os.listdir(directory)) - 1  # less the listing's own
    return 0  # unknown: the per-address cap and the timeouts still hold


class ConnectionGuard:
    """Counts open connections per client address, and the descriptors they leave."""

    def __init__(
        self,
        per_address: int,
        limit: int,
        count: Callable[[], int] = open_descriptors,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_address = per_address
        self.limit = limit
        self.reserve = reserve_for(limit)
        self._count = count
        self._clock = clock
        self.open: dict[str, int] = {}
        self.total = 0
        self._others = 0  # descriptors that are not connections, as last counted
        self._counted_at = -MEASURE_EVERY
        self.refused = 0

    def _in_use(self) -> int:
        now = self._clock()
        if now - self._counted_at >= MEASURE_EVERY:
            # Counting lists every descriptor: a flood of connections must not make each
            # accept cost that, so the rest of the process is counted a few times a second.
            self._others = max(0, self._count() - self.total)
            self._counted_at = now
        return self._others + self.total

    def admit(self, address: str) -> str | None:
        """Take a connection from ``address`` (already accepted), or why it is refused."""
        if self.open.get(address, 0) >= self.per_address:
            why = f"too many connections from {address} (at most {self.per_address})"
        elif self._in_use() >= self.limit - self.reserve:
            why = "the server is at its connection limit"
        else:
            self.open[address] = self.open.get(address, 0) + 1
            self.total += 1
            return None
        self.refused += 1
        return why

    def release(self, address: str) -> None:
        left = self.open.get(address, 0) - 1
        if left > 0:
            self.open[address] = left
        else:
            self.open.pop(address, None)
        self.total -= 1


class GuardedStream:
    """A connection's stream whose writes give up after ``send_timeout``.

    hypercorn shields its writes from cancellation, so an answer the client
    never reads held the connection, and its descriptor, for ever.  The
    deadline here is inside that shield: the write ends, the connection is
    closed, and hypercorn sees a client that went away.
    """

    def __init__(
        self,
        stream: trio.SocketStream,
        send_timeout: float,
        on_eof: Callable[[], None] = lambda: None,
    ) -> None:
        self.stream = stream
        self.socket = stream.socket  # hypercorn reads the addresses from it
        self.send_timeout = send_timeout
        self.on_eof = on_eof

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        data = bytes(await self.stream.receive_some(max_bytes))
        if not data:
            # The client closed its end.  hypercorn's connection task lives on until its
            # keep-alive timer runs out (its idle task holds its task group open), so the
            # connection stops counting against its address now, not then.
            self.on_eof()
        return data

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        with trio.move_on_after(self.send_timeout):
            await self.stream.send_all(data)
            return
        await trio.aclose_forcefully(self.stream)
        raise trio.BrokenResourceError("the client did not read its answer in time")

    async def send_eof(self) -> None:
        await self.stream.send_eof()

    async def aclose(self) -> None:
        await self.stream.aclose()


class _Refusals:
    """Closes refused connections, letting a few read their 503 first."""

    def __init__(self) -> None:
        self.lingering = 0

    async def refuse(self, stream: trio.SocketStream, why: str) -> None:
        body = f"{why}; try again in a moment\n".encode()
        with trio.move_on_after(LINGER):
            await stream.send_all(REFUSED % (len(body), body))
        if self.lingering >= LINGERING_MOST:
            await trio.aclose_forcefully(stream)  # a flood: its descriptors first
            return
        # Closing a socket with unread bytes resets it, and the client may lose the 503:
        # its request is read and dropped for a moment first, as nginx's lingering close.
        self.lingering += 1
        try:
            with trio.move_on_after(LINGER):
                await stream.send_eof()
                while await stream.receive_some(65536):
                    pass
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            self.lingering -= 1
            await trio.aclose_forcefully(stream)


def _address(stream: trio.SocketStream) -> str | None:
    try:
        peer = stream.socket.getpeername()
    except OSError:  # gone already
        return None
    return str(peer[0]) if isinstance(peer, tuple) else str(peer)


async def serve_http(
    app: ASGIApp,
    config: HypercornConfig,
    limits: ClientLimits,
    guard: ConnectionGuard,
    *,
    shutdown_trigger: Callable[[], Awaitable[object]],
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """hypercorn's trio worker for ``config.bind`` (plain HTTP), each connection guarded."""
    # hypercorn's own head timeout: its idle timer runs from the accept until a request's
    # head is whole, and again after each answer on a kept-alive connection.
    config.keep_alive_timeout = limits.header_timeout
    wrapped = wrap_app(app, config.wsgi_max_body_size, "asgi")  # type: ignore[arg-type]
    context = WorkerContext(None)
    listeners, binds = _listen(config)
    refusals = _Refusals()

    async def connection(stream: trio.SocketStream) -> None:
        address = _address(stream)
        if address is None:
            await trio.aclose_forcefully(stream)
            return
        why = guard.admit(address)
        if why is not None:
            await refusals.refuse(stream, why)
            return
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                guard.release(address)

        try:
            guarded = GuardedStream(stream, limits.send_timeout, on_eof=release)
            await TCPServer(wrapped, config, context, ConnectionState({}), guarded)  # type: ignore[arg-type]
        finally:
            release()

    async with trio.open_nursery() as connections:
        task_status.started(binds)
        async with trio.open_nursery() as accepting:
            accepting.start_soon(
                partial(
                    trio.serve_listeners,
                    connections_handler(connection),
                    listeners,
                    handler_nursery=connections,
                )
            )
            await shutdown_trigger()
            accepting.cancel_scope.cancel()
        # As hypercorn's worker: requests in progress get graceful_timeout to finish.
        await context.terminated.set()
        connections.cancel_scope.deadline = trio.current_time() + config.graceful_timeout


def _listen(config: HypercornConfig) -> tuple[list[trio.SocketListener], list[str]]:
    """A listener on each of ``config.bind``'s plain HTTP sockets, and its address."""
    sockets = config.create_sockets()
    listeners = []
    binds = []
    for sock in sockets.insecure_sockets:
        sock.listen(config.backlog)
        listeners.append(trio.SocketListener(trio.socket.from_stdlib_socket(sock)))
        binds.append(f"http://{repr_socket_addr(sock.family, sock.getsockname())}")
    return listeners, binds


def connections_handler(
    handle: Callable[[trio.SocketStream], Awaitable[None]],
) -> Callable[[trio.SocketStream], Awaitable[None]]:
    """``handle``, with any error of one connection written as a line, never the server's end."""
    shown: set[type[BaseException]] = set()

    async def guarded(stream: trio.SocketStream) -> None:
        try:
            await handle(stream)
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the client went away
        except Exception as error:  # a bug on one connection's path ends that connection only
            print(
                f"newmarket serve: a connection failed: {type(error).__name__}: {error}",
                file=sys.stderr,
                flush=True,
            )
            if type(error) not in shown:  # a bug stays visible, once, not once per request
                shown.add(type(error))
                traceback.print_exc(file=sys.stderr)

    return guarded
