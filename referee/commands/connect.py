"""``newmarket connect HOST:PORT --token T --bot BOT``: join a league from your machine.

``-- COMMAND...`` after the options is the same as ``--bot``.

A bridge between a stdio bot and a league's socket, so a participant's bot
needs no TCP code at all: the bot is started with ``COMMAND`` (its stderr
stays on this terminal), its output goes to the league and the league's
lines go to its input, byte for byte, except for one thing: the bot's first
line, its ``ready``, gets ``"token": T`` added (a bot that sets a token of
its own has it replaced), so a bot written for stdio joins unchanged.

The bridge ends when either side does: the league's end of the connection
(after ``shutdown``, or a refusal) closes the bot's input, which is how a bot
knows to exit (SPEC.md 6.3); the bot's exit closes the connection, which the
league records as this bot's dropped connection.  The exit status is the
bot's, or 1 if the league could not be reached within ``--wait`` seconds (a
participant may start before the organiser) or refused the connection: a
refusal (a wrong token, a second connection while the bot plays a match) is
a ``fault`` before any ``match_start``, and the bridge says it on stderr, so
a bot that prints nothing of what it reads still tells its owner why.  Run
the same command again to reconnect: the league gives a reconnected bot the
matches still to come.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
from pathlib import Path
from typing import Annotated

import trio
import typer

from bots.registry import BUNDLED
from protocol.framing import MAX_LINE_BYTES, LineFramer, LineTooLongError
from protocol.messages import Fault, MalformedMessageError, MatchStart, decode_referee_message
from protocol.transports import ENV_CONNECT, ENV_TOKEN, parse_connect
from referee.bots import resolve_bot
from referee.commands.common import UsageError, bot_of, fail, why_not_startable
from referee.transport.connection import no_delay

BOT_EXIT_GRACE = 5.0  # after the league's end of the connection, the bot's time to exit
DRAIN_GRACE = 2.0  # after the bot exits, how long the league's last lines may take
RETRY_EVERY = 1.0  # seconds between attempts while the league is not listening yet


class RefusalWatch:
    """Reads the league's lines up to the first ``match_start`` for a refusal.

    SPEC.md 3.2: a connection the league will not seat gets ``hello``, one
    ``fault`` saying why, and its end; a seated one gets ``match_start``.
    Only those first few lines are decoded (as a bot would decode them);
    everything after is passed on without a look.
    """

    def __init__(self) -> None:
        self.refusal: str | None = None
        self.watching = True
        self._framer = LineFramer()

    def feed(self, data: bytes | bytearray) -> None:
        if not self.watching:
            return
        try:
            lines = self._framer.feed(data)
        except LineTooLongError:
            self.watching = False  # not the league's short first lines: stop looking
            return
        for line in lines:
            try:
                message = decode_referee_message(line)
            except MalformedMessageError:
                continue  # the bot will say what it makes of it
            if isinstance(message, Fault):
                self.refusal = message.detail
            if isinstance(message, Fault | MatchStart):
                self.watching = False
                return


def with_token(line: bytes, token: str) -> bytes:
    """``line`` with ``"token": token`` set if it is a JSON ``ready`` object, else unchanged."""
    try:
        message = json.loads(line)
    except ValueError:
        return line
    if not isinstance(message, dict) or message.get("type") != "ready":
        return line
    message["token"] = token
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


async def open_with_retries(host: str, port: int, wait: float) -> trio.SocketStream:
    """Connect, trying again every second for ``wait`` seconds (the league may start later)."""
    deadline = trio.current_time() + wait
    told = False
    while True:
        try:
            stream = await trio.open_tcp_stream(host, port)
        except OSError:
            if trio.current_time() + RETRY_EVERY > deadline:
                raise
            if not told:
                typer.echo(f"waiting for the league at {host}:{port} ...", err=True)
                told = True
            await trio.sleep(RETRY_EVERY)
            continue
        no_delay(stream)  # the bot's lines go out as they come, often in pieces
        return stream


async def bridge(host: str, port: int, token: str, command: list[str], *, wait: float = 0.0) -> int:
    """Run ``command`` with its stdio joined to ``host:port``; returns the bot's exit status."""
    try:
        stream = await open_with_retries(host, port, wait)
    except OSError as error:
        typer.echo(f"error: cannot connect to {host}:{port}: {error}", err=True)
        return 1
    env = {key: value for key, value in os.environ.items() if key not in (ENV_CONNECT, ENV_TOKEN)}
    try:
        process = await trio.lowlevel.open_process(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
    except OSError as error:
        await stream.aclose()
        typer.echo(f"error: cannot start {command[0]!r}: {error.strerror or error}", err=True)
        return 1
    typer.echo(f"connected to {host}:{port}; running {' '.join(command)}", err=True)
    watch = RefusalWatch()
    try:
        async with trio.open_nursery() as nursery:
            done = nursery.cancel_scope
            nursery.start_soon(league_to_bot, stream, process, watch, done)
            nursery.start_soon(bot_to_league, process, stream, token, done)
    finally:
        with trio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
                await process.wait()
            await stream.aclose()
    if watch.refusal is not None:
        typer.echo(
            f"error: the league at {host}:{port} refused this bot: {watch.refusal}", err=True
        )
        return 1
    return process.returncode if process.returncode is not None else 1


async def league_to_bot(
    stream: trio.SocketStream, process: trio.Process, watch: RefusalWatch, done: trio.CancelScope
) -> None:
    """The league's bytes to the bot's input, as they come; then the bot's time to exit."""
    assert process.stdin is not None
    bot_in = process.stdin
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        async for data in stream:
            watch.feed(data)
            await bot_in.send_all(data)
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        await bot_in.aclose()  # the bot's input ends: it exits (SPEC.md 6.3)
    with trio.move_on_after(BOT_EXIT_GRACE):
        await process.wait()
    if process.returncode is None:
        process.kill()
    done.cancel()


async def bot_to_league(
    process: trio.Process, stream: trio.SocketStream, token: str, done: trio.CancelScope
) -> None:
    """The bot's bytes to the league, its first line with the token; then a last drain."""
    assert process.stdout is not None
    first: bytes | None = b""
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        async for data in process.stdout:
            if first is not None:
                first += data
                if b"\n" not in first and len(first) <= MAX_LINE_BYTES:
                    continue
                line, newline, rest = first.partition(b"\n")
                data = (with_token(line + newline, token) if newline else line) + rest
                first = None
            await stream.send_all(data)
        if first:
            await stream.send_all(first)
        with contextlib.suppress(AttributeError, OSError):
            await stream.send_eof()
    await process.wait()
    await trio.sleep(DRAIN_GRACE)  # the league's last lines, if any, still go to the bot
    done.cancel()


def connect_command(
    address: Annotated[str, typer.Argument(metavar="HOST:PORT", help="The league's address.")],
    command: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[-- COMMAND...]",
            help="How to start your bot, as words after `--` (the same as --bot).",
            show_default=False,
        ),
    ] = None,
    *,
    bot: Annotated[
        str | None,
        typer.Option(
            "--bot",
            metavar="BOT",
            help="Your bot: a bundled bot's name (see `newmarket bots`) or a command line, "
            "as `match --bot` takes it.",
            show_default=False,
        ),
    ] = None,
    token: Annotated[
        str, typer.Option(metavar="TOKEN", help="Your bot's token, from the organiser.")
    ],
    wait: Annotated[
        float,
        typer.Option(
            metavar="SECONDS",
            help="Seconds to keep trying while the league is not listening yet.",
            min=0,
        ),
    ] = 60.0,
) -> None:
    """Join a league: run a stdio bot and bridge it to the league's HOST:PORT with a token."""
    try:
        host, port = parse_connect(address)
    except ValueError as error:
        raise fail(f"HOST:PORT: {str(error).split(': ', 1)[-1]}") from None
    if not token.strip():
        raise fail("--token: must not be empty") from None
    if bot is not None and command:
        raise fail("--bot: give the bot once, with --bot or after --, not both") from None
    if bot is not None:
        try:
            command = list(bot_of(bot, "--bot").command)
        except UsageError as error:
            raise fail(str(error)) from None
    command = command or []
    if len(command) == 1 and command[0] in BUNDLED:  # `-- random`, as `check random` takes
        bundled = resolve_bot(command[0])
        if bundled.unavailable is not None:
            raise fail(f"COMMAND: {bundled.unavailable}") from None
        command = list(bundled.command)
    # As every command that runs a bot: a program that cannot start is the command line's
    # mistake, said before the league is contacted.
    if not command:
        raise fail("--bot: give your bot, e.g. --bot 'python3 bot.py'") from None
    why = why_not_startable(command, Path.cwd())
    if why is not None:
        raise fail(f"COMMAND: {why}") from None
    status = trio.run(functools.partial(bridge, host, port, token, list(command), wait=wait))
    raise typer.Exit(code=status)
