"""``newmarket connect``: its one change to the bot's bytes (the token in its ready), and
what a participant sees when the league refuses the connection or seats it."""

from __future__ import annotations

import contextlib
import json
import math
import sys
from collections.abc import AsyncIterator

import pytest
import trio

from protocol.messages import Fault, Hello, MatchStart, encode
from referee.bots import BotSpec
from referee.commands.connect import RefusalWatch, bridge, with_token
from referee.transport.lobby import RemoteLobby, open_lobby
from referee.transport.timecontrol import TimeControl
from tests.protocol.samples import REFEREE_MESSAGES

# A stdio bot that says ready, then reads until its input ends (as SPEC.md 6.3 asks) and
# exits 0: a bot that prints nothing of what it reads, so only the bridge can explain.
QUIET_BOT = (
    sys.executable,
    "-c",
    "import sys\n"
    'print(\'{"type":"ready","name":"quiet","version":"1","protocol":1}\', flush=True)\n'
    "sys.stdin.read()\n",
)


def test_the_bridge_puts_the_token_into_ready_and_leaves_other_lines_alone() -> None:
    ready = b'{"type":"ready","name":"mine","version":"1","protocol":1}\n'
    sent = json.loads(with_token(ready, "s3cret"))
    assert sent == {
        "type": "ready",
        "name": "mine",
        "version": "1",
        "protocol": 1,
        "token": "s3cret",
    }
    own = b'{"type":"ready","name":"m","version":"1","protocol":1,"token":"old"}\n'
    assert json.loads(with_token(own, "new"))["token"] == "new"
    for line in (b'{"type":"reply","id":1,"choice":"7H"}\n', b"not json\n", b"[1, 2]\n"):
        assert with_token(line, "s3cret") == line


HELLO = next(m for m in REFEREE_MESSAGES if isinstance(m, Hello))
MATCH_START = next(m for m in REFEREE_MESSAGES if isinstance(m, MatchStart))


def fault(detail: str) -> Fault:
    return Fault(id=None, kind="startup", detail=detail, disqualified=True, applied=None)


@contextlib.asynccontextmanager
async def league_of_alice() -> AsyncIterator[tuple[RemoteLobby, str, int]]:
    """A lobby for one remote bot, alice, whose token is ``right``: (lobby, host, port)."""
    bots = [BotSpec("alice", (), transport="tcp")]
    control = TimeControl(startup_time=30)
    async with open_lobby(bots, {0: "right"}, control, host="127.0.0.1", port=0, wait=60) as lobby:
        assert lobby.address is not None
        yield lobby, *lobby.address


@pytest.mark.parametrize("chunk", [1, 7, 1000])
def test_a_refusal_is_found_in_any_chunking_and_nothing_after_a_match_start(chunk: int) -> None:
    refused = encode(HELLO) + encode(fault("no"))
    seated = encode(HELLO) + encode(MATCH_START) + encode(fault("x"))
    for stream, expected in ((refused, "no"), (seated, None)):
        watch = RefusalWatch()
        for start in range(0, len(stream), chunk):
            watch.feed(stream[start : start + chunk])
        assert watch.refusal == expected
    endless = RefusalWatch()
    for _ in range(100):
        endless.feed(b"x" * 4096)  # no newline: it stops looking rather than keep it all
    assert not endless.watching


async def test_a_wrong_token_is_said_by_the_bridge_and_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    async with league_of_alice() as (lobby, host, port):
        with trio.fail_after(60):
            status = await bridge(host, port, "wrong", list(QUIET_BOT))
        assert lobby.live(0) is None
    assert status == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: the league at {host}:{port} refused this bot: wrong or missing token in ready"
    ]


async def test_the_right_token_is_seated_and_nothing_is_said_of_a_refusal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    async with league_of_alice() as (lobby, host, port), trio.open_nursery() as nursery:
        outcome: list[int] = []

        async def participant() -> None:
            outcome.append(await bridge(host, port, "right", list(QUIET_BOT)))

        nursery.start_soon(participant)
        with trio.fail_after(60):
            while lobby.live(0) is None:
                await lobby.wait_for_change(math.inf)
            session = lobby.live(0)
            assert session is not None
            await session.aclose()  # the league is done with it: shutdown, input ends
    assert outcome == [0]
    assert "error:" not in capsys.readouterr().err
