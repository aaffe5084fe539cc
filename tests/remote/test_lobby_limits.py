"""The lobby's limits: wrong tokens per address (never the right token), ``ready`` lines
that are bombs, and the bench for a bot that keeps the tables waiting.

Real loopback sockets, but trio's ``MockClock`` (``mock_clock``: time stands
still unless the test jumps it), so the one-minute window and the block are
crossed by ``jump``, never by waiting: no timing luck.
"""

from __future__ import annotations

import json
import math

import trio
import trio.testing

from protocol.faults import FaultKind
from referee.remote import BENCH_FIRST, WAIT_BUDGET, WAIT_WINDOW, RemoteLobby, open_lobby
from referee.tcp_guard import (
    WRONG_TOKEN_BLOCK,
    WRONG_TOKEN_LIMIT,
    WRONG_TOKEN_WINDOW,
    WrongTokenLimit,
)
from tests.remote.test_lobby import BOTS, CONTROL, TOKENS, join, read_line, until_connected


async def refusal_of(lobby: RemoteLobby, token: str | None) -> str:
    stream, _ = await join(lobby, token)
    line = json.loads(await read_line(stream))
    await stream.aclose()
    assert line["type"] == "fault"
    return str(line["detail"])


async def test_wrong_tokens_are_limited_per_address_and_the_right_token_always_gets_in(
    mock_clock: trio.testing.MockClock,
) -> None:
    notes: list[str] = []
    async with open_lobby(
        BOTS, TOKENS, CONTROL, host="127.0.0.1", port=0, wait=600, note=notes.append
    ) as lobby:
        for _ in range(WRONG_TOKEN_LIMIT - 1):
            assert "wrong or missing token" in await refusal_of(lobby, "guess")
        mock_clock.jump(WRONG_TOKEN_WINDOW + 1)  # the window moved on: counting starts again
        for _ in range(WRONG_TOKEN_LIMIT):
            assert "wrong or missing token" in await refusal_of(lobby, None)
        # Blocked: this address's wrong tokens are refused, told for how long, not reported.
        assert await refusal_of(lobby, "guess") == (
            f"too many wrong tokens from 127.0.0.1; wrong tokens from it are refused for "
            f"{WRONG_TOKEN_BLOCK:g} s more"
        )
        mock_clock.jump(WRONG_TOKEN_BLOCK - 10)
        assert (await refusal_of(lobby, "guess")).endswith("refused for 10 s more")
        # ... and the right token from the same address (a NAT) gets in all the while.
        alice, _ = await join(lobby, "alice-secret")
        await until_connected(lobby, 0)
        await alice.aclose()
        mock_clock.jump(10)  # the block is over: wrong tokens are counted again
        assert "wrong or missing token" in await refusal_of(lobby, "guess")
    wrong = [note for note in notes if note.startswith("lobby: wrong")]
    # One line per attempt counted, each on one line, counting within the window; none
    # for the attempts the block refused.
    assert len(wrong) == 2 * WRONG_TOKEN_LIMIT
    assert wrong[0] == "lobby: wrong or missing token from 127.0.0.1 (1 of 5 in 60 s)"
    assert wrong[2 * WRONG_TOKEN_LIMIT - 2] == (
        f"lobby: wrong or missing token from 127.0.0.1 (5 of 5 in 60 s; "
        f"its wrong tokens are refused for {WRONG_TOKEN_BLOCK:g} s)"
    )
    assert wrong[-1] == "lobby: wrong or missing token from 127.0.0.1 (1 of 5 in 60 s)"
    assert all("\n" not in note for note in notes)


async def test_a_guesser_beside_a_bot_cannot_keep_it_out_by_guessing_all_along(
    mock_clock: trio.testing.MockClock,
) -> None:
    # The old limit blocked the address, right token and all, and anyone behind the same
    # NAT could renew the block for good by guessing again before it ended.
    async with open_lobby(BOTS, TOKENS, CONTROL, host="127.0.0.1", port=0, wait=600) as lobby:
        for minute in range(12):
            for _ in range(WRONG_TOKEN_LIMIT):
                await refusal_of(lobby, f"guess-{minute}")
            bob, _ = await join(lobby, "bob-secret")
            await until_connected(lobby, 1)
            session = lobby.live(1)
            assert session is not None
            session.lose(FaultKind.EOF, "it closed the connection")  # as a match notices
            await bob.aclose()
            mock_clock.jump(60)


async def test_the_limit_is_per_address_and_forgets_what_is_over(
    mock_clock: trio.testing.MockClock,
) -> None:
    limit: WrongTokenLimit[str] = WrongTokenLimit(limit=2, window=10, block=30)
    assert limit.wrong("10.0.0.1") == 1
    assert limit.wrong("10.0.0.2") == 1  # another address has its own count
    assert limit.refused("10.0.0.1") is None
    assert limit.wrong("10.0.0.1") == 2
    assert limit.refused("10.0.0.1") == 30 and limit.refused("10.0.0.2") is None
    mock_clock.jump(30)
    assert limit.refused("10.0.0.1") is None and limit.refused("10.0.0.2") is None
    assert limit._attempts == {} and limit._blocked_until == {}  # nothing kept


async def test_a_stranger_whose_ready_is_deeply_nested_is_refused_and_the_lobby_goes_on(
    mock_clock: trio.testing.MockClock,
) -> None:
    async with open_lobby(BOTS, TOKENS, CONTROL, host="127.0.0.1", port=0, wait=600) as lobby:
        assert lobby.address is not None
        for bomb in (b"[" * 20_000 + b"]" * 20_000, b'{"type":"ready","name":' + b"[" * 9000):
            stream = await trio.open_tcp_stream(*lobby.address)
            assert json.loads(await read_line(stream))["type"] == "hello"
            await stream.send_all(bomb + b"\n")
            fault = json.loads(await read_line(stream))
            assert fault["type"] == "fault"
            assert fault["detail"].startswith("instead of ready: arrays or objects nested more")
            await stream.aclose()
        bob, _ = await join(lobby, "bob-secret")
        await until_connected(lobby, 1)
        await bob.aclose()


async def test_a_bot_that_keeps_the_tables_waiting_is_refused_while_benched_saying_why(
    mock_clock: trio.testing.MockClock,
) -> None:
    notes: list[str] = []
    async with open_lobby(
        BOTS, TOKENS, CONTROL, host="127.0.0.1", port=0, wait=600, note=notes.append
    ) as lobby:
        for waited in (40, 20):  # two absences; the tables wait 40 s, then 20 s
            alice, _ = await join(lobby, "alice-secret")
            await until_connected(lobby, 0)
            session = lobby.live(0)
            assert session is not None
            session.lose(FaultKind.EOF, "it closed the connection")  # as its match notices
            await alice.aclose()
            assert lobby.live(0) is None
            since = trio.current_time()
            again = lobby.kept_waiting([0], since)  # a table starts waiting for it
            assert again == (math.inf if waited == 40 else since + WAIT_BUDGET - 40)
            mock_clock.jump(waited)
            lobby.waited([0], since)
        assert lobby.bench.left(0) is None
        lobby.kept_waiting([0], trio.current_time())  # the table would wait on: benched
        assert lobby.absent_deadline(0) <= trio.current_time()  # not waited for any more
        assert await refusal_of(lobby, "alice-secret") == (
            f"alice is benched for {BENCH_FIRST:g} s more: the tables waited 60 s for it in 2 "
            f"absences within {WAIT_WINDOW:g} s after its connection dropped; each next bench "
            "is twice as long"
        )
        assert lobby.live(0) is None
        bob, _ = await join(lobby, "bob-secret")  # another bot is not concerned
        await until_connected(lobby, 1)
        await bob.aclose()
        mock_clock.jump(BENCH_FIRST)  # the bench is over: it gets in again
        alice, _ = await join(lobby, "alice-secret")
        await until_connected(lobby, 0)
        await alice.aclose()
    benched = [note for note in notes if "benched" in note]
    assert benched == [
        f"lobby: alice benched for {BENCH_FIRST:g} s: the tables waited 60 s for it in 2 "
        f"absences within {WAIT_WINDOW:g} s after its connection dropped (each next bench is "
        "twice as long)"
    ]
