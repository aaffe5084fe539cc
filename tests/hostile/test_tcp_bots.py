"""Hostile bots over TCP: they never connect, guess the token, connect twice, hold a
connection open saying nothing, or send their ready one byte a second.

The first five are real processes that the referee starts with
``NEWMARKET_CONNECT`` (``play_hostile`` checks the match finished, the result
is saved, no process is left and memory stayed bounded).  The last tests are
strangers on the loopback reaching a remote seat's listener, in-process: what
a pending connection receives, and that flooding the pending limit cannot
lock the real bot out.  Start-up limits are real seconds, a few of them.
"""

from __future__ import annotations

import contextlib
import json
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import trio

from protocol.framing import LineFramer
from referee.bots import BotSpec
from referee.transport.session import open_bot
from referee.transport.tcp_guard import (
    EVICTED_DETAIL,
    MAX_PENDING_CONNECTIONS,
    PendingConnections,
    find_token,
    token_matches,
)
from referee.transport.timecontrol import TimeControl
from tests.hostile.protocol_harness import CONTROL, play_hostile, proto_bot, table_mates

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")

# The start-up limit of the bot under test, short enough to wait for; its table mates start
# first, under a generous limit (``tests.tables.open_table``), so a loaded machine cannot make
# them miss it.
STARTUP = 5.0
# What a handshake that timed out on a silent connection says (referee.transport.session).
NOTHING = (
    "the bot wrote nothing to its TCP connection: if it prints, make sure it flushes "
    "(python3 -u, print(..., flush=True), fflush(stdout))"
)


async def test_a_bot_that_never_connects_is_a_startup_fault(tmp_path: Path) -> None:
    spec = proto_bot("never_connect", transport="tcp")
    played = await play_hostile([spec, *table_mates()], tmp_path, hostile_startup=STARTUP)
    assert played.faults() == [("startup", "no connection with a ready within 5 s")]
    assert played.status == ["disqualified", "ok", "ok"]


async def test_a_wrong_token_is_refused_and_is_a_startup_fault(tmp_path: Path) -> None:
    spec = proto_bot("good", name="guesser", transport="tcp", env={"HOSTILE_TOKEN": "guess"})
    played = await play_hostile([spec, *table_mates()], tmp_path, hostile_startup=STARTUP)
    [(kind, detail)] = played.faults()
    assert kind == "startup"
    # The bot exits when its refused connection closes, or the deadline comes first.
    assert detail in (
        "exited with status 0 after its connection was refused: wrong or missing token in ready",
        "no connection with a ready within 5 s (refused: wrong or missing token in ready)",
    )
    assert played.status == ["disqualified", "ok", "ok"]


async def test_a_second_connection_for_the_same_seat_learns_nothing(tmp_path: Path) -> None:
    report = tmp_path / "second.jsonl"
    spec = proto_bot("second_connection", transport="tcp", env={"HOSTILE_REPORT": str(report)})
    played = await play_hostile([spec, *table_mates()], tmp_path)
    # The seat plays on one connection, without a fault.
    assert played.status == ["ok", "ok", "ok"] and not played.faults()
    assert played.result.seats[0].decisions > 0
    # The other was closed having been sent hello and nothing else (or, if the listener
    # closed before accepting it, nothing at all).
    [closed] = [json.loads(line) for line in report.read_text().splitlines()]
    assert closed["closed"] in (["hello"], [])


async def test_a_half_open_connection_is_closed_at_the_handshake_deadline(
    tmp_path: Path,
) -> None:
    spec = proto_bot("half_open", transport="tcp")
    played = await play_hostile([spec, *table_mates()], tmp_path, hostile_startup=STARTUP)
    assert played.faults() == [
        (
            "startup",
            f"no connection with a ready within 5 s (refused: no ready within 5 s; {NOTHING})",
        )
    ]
    assert played.status == ["disqualified", "ok", "ok"]


async def test_one_byte_a_second_is_ended_by_the_handshake_deadline(tmp_path: Path) -> None:
    spec = proto_bot("slowloris", transport="tcp")
    played = await play_hostile([spec, *table_mates()], tmp_path, hostile_startup=STARTUP)
    [(kind, detail)] = played.faults()
    assert kind == "startup"
    assert detail.startswith(
        "no connection with a ready within 5 s (refused: no ready within 5 s; the bot wrote "
    )
    # Its bytes are not quoted: a TCP bot's unfinished line may be a ready with its token.
    assert "bytes to its TCP connection with no end of line: end each line" in detail
    # Its ready would take about a minute at this pace; the deadline ended it.
    assert trio.current_time() - played.began < 40


# ---------------------------------------------------------------- strangers at a remote seat


async def read_all(stream: trio.SocketStream, seconds: float = 10.0) -> list[dict[str, Any]]:
    """Every line the referee sends on ``stream`` until it closes it (or resets it)."""
    framer = LineFramer()
    lines: list[bytes] = []
    with trio.fail_after(seconds), contextlib.suppress(trio.BrokenResourceError):
        while data := await stream.receive_some(65536):
            lines.extend(framer.feed(data))
    return [json.loads(line) for line in lines]


async def send_ready(stream: trio.SocketStream, token: str) -> None:
    line = {"type": "ready", "name": "remote", "protocol": 1, "token": token}
    await stream.send_all(json.dumps(line).encode() + b"\n")


async def test_a_refused_connection_is_sent_hello_and_why_and_nothing_about_a_match() -> None:
    addresses: list[tuple[str, int, str]] = []
    seen: list[list[dict[str, Any]]] = []

    async def strangers() -> None:
        while not addresses:
            await trio.sleep(0.01)
        host, port, token = addresses[0]
        wrong = await trio.open_tcp_stream(host, port)
        await send_ready(wrong, "guess")
        seen.append(await read_all(wrong))
        old = await trio.open_tcp_stream(host, port)
        await old.send_all(b'{"type":"ready","name":"old","protocol":2}\n')
        seen.append(await read_all(old))
        right = await trio.open_tcp_stream(host, port)
        await send_ready(right, token)
        await right.receive_some(65536)  # hello
        await right.aclose()

    remote = BotSpec("remote", (), transport="tcp")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(strangers)
        async with open_bot(
            remote, CONTROL, on_listen=lambda h, p, t: addresses.append((h, p, t))
        ) as session:
            assert session.alive, session.death
    hello = {"type": "hello", "protocol": 1}
    for lines, detail in zip(
        seen,
        ["wrong or missing token in ready", "this referee speaks protocol 1; ready says 2"],
        strict=True,
    ):
        assert [line["type"] for line in lines] == ["hello", "fault"]
        assert lines[0].items() >= hello.items() and set(lines[0]) == {
            "type",
            "protocol",
            "referee",
        }
        assert lines[1]["detail"] == detail and lines[1]["disqualified"] is True


async def test_junk_before_ready_is_refused_without_buffering_it() -> None:
    """A stranger's megabyte without a newline, or garbage, instead of ready: refused, named."""
    # Made before tracing starts: the test's own megabyte is not the referee's.
    junks = [b"x" * (1 << 20), b"\xff not json\n", b'{"type":"reply","id":1,"choice":0}\n']
    addresses: list[tuple[str, int, str]] = []
    seen: list[list[dict[str, Any]]] = []

    async def strangers() -> None:
        while not addresses:
            await trio.sleep(0.01)
        host, port, token = addresses[0]
        for junk in junks:
            stream = await trio.open_tcp_stream(host, port)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_send_quietly, stream, junk)
                seen.append(await read_all(stream))
        right = await trio.open_tcp_stream(host, port)
        await send_ready(right, token)
        await right.receive_some(65536)  # hello
        await right.aclose()

    remote = BotSpec("remote", (), transport="tcp")
    tracemalloc.start()
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(strangers)
            async with open_bot(
                remote, CONTROL, on_listen=lambda h, p, t: addresses.append((h, p, t))
            ) as session:
                assert session.alive, session.death
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Closing a socket with the rest of the megabyte unread resets it, and a reset may
    # discard what the stranger had not read yet: what it got is a prefix.
    megabyte, garbage, reply = seen
    assert [line["type"] for line in megabyte] in (["hello", "fault"], ["hello"], [])
    if len(megabyte) == 2:
        assert megabyte[1]["detail"].startswith("instead of ready: line too long: ")
    assert [line["type"] for line in garbage] == ["hello", "fault"]
    assert garbage[1]["detail"] == (
        "instead of ready, line 1 of its TCP connection: not JSON: invalid character (byte 0); "
        "the line (10 bytes) is not quoted: it may hold the token"
    )
    assert [line["type"] for line in reply] == ["hello", "fault"]
    assert reply[1]["detail"] == "the first message must be ready, got reply"
    assert peak < 1 << 20  # the stranger's megabyte was never held


async def _send_quietly(stream: trio.SocketStream, data: bytes) -> None:
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        await stream.send_all(data)


async def test_a_flood_of_idle_connections_cannot_lock_the_real_bot_out() -> None:
    """More idle connections than the pending limit, then the real bot: it still gets in.

    Refusing connections beyond the limit would let these idle ones hold the
    seat until its start-up limit; evicting the oldest lets the real one in.
    """
    addresses: list[tuple[str, int, str]] = []
    idle: list[trio.SocketStream] = []
    evicted: list[list[dict[str, Any]]] = []

    async def attack() -> None:
        while not addresses:
            await trio.sleep(0.01)
        host, port, token = addresses[0]
        for _ in range(3 * MAX_PENDING_CONNECTIONS):
            idle.append(await trio.open_tcp_stream(host, port))
        await trio.sleep(0.5)  # every idle one is accepted and pending
        right = await trio.open_tcp_stream(host, port)
        await send_ready(right, token)
        await right.receive_some(65536)  # hello
        evicted.append(await read_all(idle[0]))
        await right.aclose()

    remote = BotSpec("remote", (), transport="tcp")
    control = TimeControl(startup_time=20.0)
    started = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(attack)
        async with open_bot(
            remote, control, on_listen=lambda h, p, t: addresses.append((h, p, t))
        ) as session:
            assert session.alive, session.death
            assert trio.current_time() - started < 15  # not held until the start-up limit
    [lines] = evicted
    assert [line["type"] for line in lines] == ["hello", "fault"]
    assert lines[1]["detail"] == EVICTED_DETAIL
    for stream in idle:
        await stream.aclose()


# ---------------------------------------------------------------- the guard's pieces


def test_tokens_match_exactly_and_only_then() -> None:
    assert token_matches("c2c7e1f0a9", "c2c7e1f0a9")
    for given in (None, "", "c2c7e1f0a", "c2c7e1f0a9 ", "C2C7E1F0A9", "x" * 1000):
        assert not token_matches(given, "c2c7e1f0a9")
    tokens = {"alpha-token": "alpha", "beta-token": "beta", "": "nobody"}
    assert find_token("beta-token", tokens) == "beta"
    assert find_token("gamma", tokens) is None
    assert find_token("", tokens) is None and find_token(None, tokens) is None


async def test_the_pending_limit_evicts_the_oldest_and_deadlines_expire(
    autojump_clock: object,
) -> None:
    pending = PendingConnections(limit=2)
    outcomes: dict[str, str | None] = {}

    async def handshake(name: str, deadline: float, takes: float) -> None:
        with pending.admit(deadline) as admission:
            await trio.sleep(takes)
        outcomes[name] = admission.refusal

    async with trio.open_nursery() as nursery:
        nursery.start_soon(handshake, "oldest", trio.current_time() + 100, 50)
        await trio.sleep(1)
        nursery.start_soon(handshake, "slow", trio.current_time() + 5, 50)
        await trio.sleep(1)
        assert len(pending) == 2
        nursery.start_soon(handshake, "quick", trio.current_time() + 100, 1)
    assert outcomes == {
        "oldest": EVICTED_DETAIL,
        "slow": "no ready before the handshake deadline",
        "quick": None,
    }
    assert pending.evictions == 1 and len(pending) == 0
