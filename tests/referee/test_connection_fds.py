"""The connection's direct road over file descriptors (``referee.connection``).

A process's pipes take the shorter road (a write tried at once, a read that
waits only when nothing has arrived); these tests drive it over a real pipe
pair in this process, where the rarely taken branches can be forced: a write
longer than the pipe holds (part written at once, the rest waited for), a
reader that waits before its line comes, and a peer that closes.
"""

from __future__ import annotations

import os

import pytest
import trio

from referee.connection import Connection, ConnectionBrokenError, ConnectionClosedError


def _pipe_pair() -> tuple[Connection, Connection]:
    """Two connections over two pipes: what one sends, the other receives."""
    a_read, b_write = os.pipe()
    b_read, a_write = os.pipe()
    a = Connection(
        trio.StapledStream(trio.lowlevel.FdStream(a_write), trio.lowlevel.FdStream(a_read))
    )
    b = Connection(
        trio.StapledStream(trio.lowlevel.FdStream(b_write), trio.lowlevel.FdStream(b_read))
    )
    return a, b


async def test_a_write_longer_than_the_pipe_arrives_whole_and_in_order() -> None:
    a, b = _pipe_pair()
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


async def test_a_reader_that_waits_gets_the_line_when_it_comes() -> None:
    a, b = _pipe_pair()

    async def send_later() -> None:
        await trio.sleep(0.05)
        await a.send(b'{"type":"reply","id":1,"choice":"2C"}\n')

    async with trio.open_nursery() as nursery:
        nursery.start_soon(send_later)
        with trio.fail_after(10):  # generous: a real pipe, not a virtual clock
            line = await b.receive_line()
    assert line == b'{"type":"reply","id":1,"choice":"2C"}'
    await a.aclose()
    await b.aclose()


async def test_a_wait_for_a_line_is_cancelled_by_the_callers_scope_and_loses_nothing() -> None:
    a, b = _pipe_pair()
    with trio.move_on_after(0.05) as scope:
        await b.receive_line()
    assert scope.cancelled_caught
    await a.send(b"late\n")
    assert await b.receive_line() == b"late"
    await a.aclose()
    await b.aclose()


async def test_end_of_stream_and_a_closed_reader_are_named() -> None:
    a, b = _pipe_pair()
    await a.send(b"last\n")
    await a.aclose()
    assert await b.receive_line() == b"last"
    with pytest.raises(ConnectionClosedError, match="end of stream"):
        await b.receive_line()
    await b.aclose()
    c, d = _pipe_pair()
    await d.aclose()  # the peer's reading end is gone: a write is a broken pipe
    with pytest.raises(ConnectionBrokenError, match="input is closed"):
        await c.send(b"anyone?\n")
    assert c.broken
    await c.aclose()
