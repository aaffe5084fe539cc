"""The connection's direct road over file descriptors (``referee.transport.connection``).

A process's pipes take the shorter road (a write tried at once, a read that
waits only when nothing has arrived); these tests drive it over a real pipe
pair in this process, where the rarely taken branches can be forced: a write
longer than the pipe holds (part written at once, the rest waited for), a
reader that waits before its line comes, and a peer that closes.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable

import pytest
import trio

from referee.transport.connection import Connection, ConnectionBrokenError, ConnectionClosedError
from tests.referee.fakes import pipe_pair


async def test_a_write_longer_than_the_pipe_arrives_whole_and_in_order() -> None:
    a, b = pipe_pair()
    # Five lines in one write: a Linux pipe holds 64 KiB, so most of it must wait
    # for the reader (the part the OS did not take goes through the stream).
    lines = [bytes([65 + n]) * 60_000 for n in range(5)]
    received: list[bytes] = []

    async def read_all() -> None:
        for _ in range(len(lines) + 1):
            received.append(await b.receive_line())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(read_all)
        await a.send(b"".join(line + b"\n" for line in lines) + b"after\n")
    assert received == [*lines, b"after"]
    assert a.bytes_sent == 5 * 60_001 + 6
    await a.aclose()
    await b.aclose()


async def _received_while_sent_later(
    a: Connection, b: Connection, data: bytes, *, drained: bool = False
) -> bytes:
    """``b``'s next line, while ``a`` sends ``data`` a moment after ``b`` began to wait."""

    async def send_later() -> None:
        await trio.sleep(0.05)
        await a.send(data)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(send_later)
        with trio.fail_after(10):  # generous: a real pipe, not a virtual clock
            line = await b.receive_line(drained=drained)
    return line


async def test_a_reader_that_waits_gets_the_line_when_it_comes() -> None:
    a, b = pipe_pair()
    line = await _received_while_sent_later(a, b, b'{"type":"reply","id":1,"choice":"2C"}\n')
    assert line == b'{"type":"reply","id":1,"choice":"2C"}'
    await a.aclose()
    await b.aclose()


async def test_a_drained_reader_waits_once_and_reads_each_line_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A session reads what is there (read_now), and only if no line is whole waits in
    # receive_line(drained=True): that wait must come before the next read, so a
    # reply costs one read that finds nothing, not two; and a half line is kept.
    a, b = pipe_pair()
    reads: list[int] = []
    real_read = os.read

    def counting_read(fd: int, size: int) -> bytes:
        reads.append(fd)
        return real_read(fd, size)

    monkeypatch.setattr(os, "read", counting_read)
    await a.send(b'{"type":"reply",')
    assert b.read_now() is False  # half a line: read, framed, not yet a line
    assert b.read_now() is False  # nothing more: a read that finds nothing
    reads.clear()
    line = await _received_while_sent_later(a, b, b'"id":1,"choice":"2C"}\n', drained=True)
    assert line == b'{"type":"reply","id":1,"choice":"2C"}'
    assert len(reads) == 1  # after the wait, the one read that finds the rest
    await a.aclose()
    await b.aclose()


async def test_a_session_s_wait_reads_a_line_sent_in_pieces_once_and_names_the_end() -> None:
    # BotSession.receive_line waits in wait_line once read_now found no whole line:
    # each wake reads what came, a half line is kept, and the end of the stream
    # after an unterminated line says so, as receive_line does.
    a, b = pipe_pair()

    async def send_in_pieces() -> None:
        for piece in (b'{"type":"reply",', b'"id":1,', b'"choice":"2C"}\nnext\nhalf'):
            await trio.sleep(0.02)
            await a.send(piece)
        await trio.sleep(0.02)
        await a.aclose()

    assert b.read_now() is False
    async with trio.open_nursery() as nursery:
        nursery.start_soon(send_in_pieces)
        with trio.fail_after(10):  # generous: a real pipe
            assert await b.wait_line() == b'{"type":"reply","id":1,"choice":"2C"}'
            assert b.take_line() == b"next"
            with pytest.raises(ConnectionClosedError, match="end of stream") as ended:
                await b.wait_line()
    assert ended.value.leftover == b"half"
    await b.aclose()


async def test_a_wait_on_bytes_that_never_make_a_line_still_ends_at_the_deadline() -> None:
    # A peer that keeps blank lines coming wakes the wait again and again; every
    # wake passes the scheduler, so the caller's deadline still ends it.
    a, b = pipe_pair()

    async def flood() -> None:
        while True:
            await a.send(b"\n" * 512)
            await trio.sleep(0)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(flood)
        with trio.move_on_after(0.2) as scope:
            await b.wait_line()
        nursery.cancel_scope.cancel()
    assert scope.cancelled_caught
    await a.aclose()
    await b.aclose()


async def test_a_wait_for_a_line_is_cancelled_by_the_callers_scope_and_loses_nothing() -> None:
    a, b = pipe_pair()
    with trio.move_on_after(0.05) as scope:
        await b.receive_line()
    assert scope.cancelled_caught
    await a.send(b"late\n")
    assert await b.receive_line() == b"late"
    await a.aclose()
    await b.aclose()


async def test_end_of_stream_and_a_closed_reader_are_named() -> None:
    a, b = pipe_pair()
    await a.send(b"last\n")
    await a.aclose()
    assert await b.receive_line() == b"last"
    with pytest.raises(ConnectionClosedError, match="end of stream"):
        await b.receive_line()
    await b.aclose()
    c, d = pipe_pair()
    await d.aclose()  # the peer's reading end is gone: a write is a broken pipe
    with pytest.raises(ConnectionBrokenError, match="input is closed"):
        await c.send(b"anyone?\n")
    assert c.broken
    await c.aclose()


class _StreamOnly(trio.abc.Stream):
    """The same stream with its descriptors hidden: the connection takes trio's own road."""

    def __init__(self, inner: trio.abc.Stream) -> None:
        self.inner = inner

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        return await self.inner.receive_some(max_bytes)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _pipes_to_a_gone_peer() -> trio.abc.Stream:
    """A write end whose reader is closed, and a read end whose writer is closed."""
    gone_reader, write_end = os.pipe()
    read_end, gone_writer = os.pipe()
    os.close(gone_reader)
    os.close(gone_writer)
    return trio.StapledStream(trio.lowlevel.FdStream(write_end), trio.lowlevel.FdStream(read_end))


def _socket_to_a_gone_peer() -> trio.abc.Stream:
    ours, theirs = socket.socketpair()
    theirs.close()
    return trio.SocketStream(trio.socket.from_stdlib_socket(ours))


async def _what_goes_wrong(connection: Connection, action: str) -> str:
    try:
        if action == "send":
            await connection.send(b"anyone?\n")
        else:
            await connection.receive_line()
    except (ConnectionBrokenError, ConnectionClosedError) as error:
        return f"{type(error).__name__}: {error}"
    finally:
        await connection.aclose()
    raise AssertionError("nothing went wrong")


@pytest.mark.parametrize("make", [_pipes_to_a_gone_peer, _socket_to_a_gone_peer])
@pytest.mark.parametrize("action", ["send", "receive"])
@pytest.mark.parametrize("closed_by_us", [False, True])
async def test_the_direct_road_names_errors_in_trio_s_own_words(
    make: Callable[[], trio.abc.Stream], action: str, closed_by_us: bool
) -> None:
    # The fault detail a bot author reads must not depend on which road was taken.
    words: list[str] = []
    for wrap in (lambda stream: stream, _StreamOnly):
        stream = make()
        if closed_by_us:
            await stream.aclose()
        words.append(await _what_goes_wrong(Connection(wrap(stream)), action))
    direct, trio_s = words
    assert direct == trio_s
    expected = {
        ("send", False): "input is closed",
        ("send", True): "already closed",
        ("receive", False): "end of stream",
        ("receive", True): "already closed",
    }[action, closed_by_us]
    assert expected in direct
