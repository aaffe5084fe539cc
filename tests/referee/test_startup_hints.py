"""A bot that fails its start-up is told what the referee saw, in words that point at the fix.

Real programs, because the usual causes are a real process's: Python's output
buffered in blocks on a pipe (a ``print`` without ``flush=True``), and a
greeting printed to stdout before ``ready``.  The start-up limits are whole
seconds: the bots below either write nothing ever or write at once, and a limit
the bot must first start within (to write, or to connect) is 5 s, so the
verdicts cannot depend on how loaded the machine is.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio

from referee.bots import BotSpec, Transport
from referee.transport.session import open_bot, quoted
from referee.transport.timecontrol import TimeControl

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")

REPO = Path(__file__).resolve().parents[2]


def bot(script: str, *args: str, transport: Transport = "stdio") -> BotSpec:
    command = (sys.executable, "-m", f"tests.referee.bots.{script}", *args)
    return BotSpec(script, command, cwd=REPO, transport=transport)


async def death(spec: BotSpec, startup_time: float) -> str:
    """The start-up fault's detail, as the bot, the match log and the organiser get it."""
    async with open_bot(spec, TimeControl(startup_time=startup_time)) as session:
        assert session.death is not None and not session.handshaken
        assert session.death.kind == "startup"
        return session.death.detail


async def test_a_python_bot_that_does_not_flush_is_told_to_flush() -> None:
    detail = await death(bot("unflushed"), startup_time=2.0)
    assert detail == (
        "no ready within 2 s; the bot wrote nothing to its stdout: if it prints, make sure "
        "it flushes (python3 -u, print(..., flush=True), fflush(stdout))"
    )


async def test_flushed_without_an_end_of_line_is_named_with_its_bytes() -> None:
    # 5 s: the bot writes at once, but "at once" is after a Python start on a loaded machine.
    detail = await death(bot("unflushed", "partial"), startup_time=5.0)
    begins = quoted(b'{"type":"ready","name":"half"')
    assert detail == (
        "no ready within 5 s; the bot wrote 29 bytes to its stdout with no end of line, "
        f"beginning {begins}: end each line with \\n and flush"
    )


async def test_the_same_hint_over_tcp() -> None:
    # 5 s: the bot must have started and connected before the limit to be seen silent on it.
    detail = await death(bot("unflushed", transport="tcp"), startup_time=5.0)
    assert "the bot wrote nothing to its TCP connection: if it prints, make sure" in detail


async def test_a_tcp_bot_s_bad_ready_is_not_quoted_for_it_may_hold_its_token() -> None:
    """A fault's detail goes to logs, standings and pages: a token in it would be public."""
    token = "s3cret-token-of-this-bot"
    spec = BotSpec("leaky", (), transport="tcp")  # a remote bot: it connects by itself
    addresses: list[tuple[str, int]] = []

    async def leaky_bot() -> None:
        while not addresses:
            await trio.sleep(0.01)
        stream = await trio.open_tcp_stream(*addresses[0])
        # A ready with the token and a trailing comma: not JSON.
        ready = '{"type":"ready","name":"leaky","protocol":1,"token":"' + token + '",}\n'
        await stream.send_all(ready.encode())
        await stream.receive_some(65536)
        await stream.aclose()

    control = TimeControl(startup_time=5.0)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(leaky_bot)
        async with open_bot(
            spec, control, token=token, on_listen=lambda h, p, t: addresses.append((h, p))
        ) as session:
            assert session.death is not None
            detail = session.death.detail
    assert token not in detail and token[:6] not in detail
    assert "instead of ready, line 1 of its TCP connection: not JSON" in detail
    assert "is not quoted: it may hold the token" in detail


async def test_a_greeting_before_ready_is_quoted_with_its_line_number() -> None:
    detail = await death(bot("chatty"), startup_time=30.0)
    assert detail == (
        "instead of ready, line 1 of its stdout: not JSON: invalid character (byte 0); "
        'the line begins "Loading the model..." (debugging output goes to stderr, not stdout)'
    )


async def test_blank_lines_count_in_the_line_number_and_odd_bytes_are_escaped() -> None:
    greeting = '\x1b[1mBot v2\x1b[0m "ready" in 0.1 s, café' + "!" * 60
    detail = await death(bot("chatty", "2", greeting), startup_time=30.0)
    assert detail.startswith("instead of ready, line 3 of its stdout: not JSON: ")
    excerpt = detail.split("; the line begins ", 1)[1]
    # One printable line: the escape bytes and quotes escaped, the text kept, cut at 60 bytes.
    assert excerpt.startswith('"\\x1b[1mBot v2\\x1b[0m \\"ready\\" in 0.1 s, café!!!')
    assert excerpt.endswith('"... (debugging output goes to stderr, not stdout)')
    assert excerpt.isprintable()


def test_quoted_escapes_every_byte_that_is_not_text() -> None:
    assert quoted(b"caf\xc3\xa9 \xff\tend\r") == '"café \\xff\\tend\\r"'
    assert quoted(b'a\\b "c"') == '"a\\\\b \\"c\\""'
    assert quoted(b"x" * 61) == '"' + "x" * 60 + '"...'
