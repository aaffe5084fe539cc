"""``newmarket check``: does a bot speak the protocol? One bot, scripted scenarios, a verdict.

    newmarket check -- python3 mybot.py
    newmarket check random
    newmarket check --transport tcp --move-time 0.5 -- node bots/js/bot.js

The work is ``referee.check``'s; this module is only the command line, and
keeps the exit codes a script can rely on: 0 when the bot passed, 1 when it
failed (the report says where and shows the transcript), 2 when the command
itself was used wrongly (one line on stderr naming the argument).  A bundled
bot that cannot run on this machine (no ``node``, no C compiler) is the
third kind, not a failure of the bot.

The report is printed stage by stage as the check goes, because a bot that
uses its whole move time (a search bot) takes a minute to get through every
scenario; ``--json`` prints the whole report once, at the end.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from protocol.timing import DEFAULT_MARGIN_MS
from referee.bots import TRANSPORTS, BotSpec, Transport, command_name, resolve_bot
from referee.check import Stage, check_bot, render_footer, render_header, render_stage
from referee.commands.match import UsageError, build_time_control, fail
from referee.printing import printable_block


def build_spec(words: list[str], transport: str) -> BotSpec:
    """The bot after ``--``: one word may be a bundled name or a quoted command line."""
    if transport not in TRANSPORTS:
        raise UsageError(f"--transport: {transport!r} is not stdio or tcp")
    kind: Transport = "tcp" if transport == "tcp" else "stdio"
    if not words:
        raise UsageError("COMMAND: give the bot to check, e.g. `newmarket check -- python3 bot.py`")
    try:
        if len(words) == 1:
            spec = resolve_bot(words[0], transport=kind)
        else:
            spec = BotSpec(command_name(tuple(words)), tuple(words), transport=kind)
    except ValueError as error:
        raise UsageError(f"COMMAND: {error}") from None
    if spec.unavailable is not None:
        raise UsageError(spec.unavailable)
    return spec


def check_command(
    command: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="COMMAND",
            help="The bot: a bundled bot's name (see `newmarket bots`) or a command line, "
            "after `--`.",
            show_default=False,
        ),
    ] = None,
    move_time: Annotated[float, typer.Option(help="Seconds per decision.")] = 1.0,
    time_bank: Annotated[
        float, typer.Option(help="Extra seconds for the whole of each match.")
    ] = 0.0,
    startup_time: Annotated[
        float, typer.Option(help="Seconds for the bot to start and say ready.")
    ] = 10.0,
    transport: Annotated[
        str, typer.Option(help="How the bot talks to the referee: stdio or tcp.")
    ] = "stdio",
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Run one bot through scripted scenarios covering every message and decision of every
    preset; exit 0 if it conforms to SPEC.md, 1 (with a transcript) if it does not."""
    try:
        spec = build_spec(command or [], transport)
        control = build_time_control(
            move_time, time_bank, startup_time, DEFAULT_MARGIN_MS / 1000, max_faults=3
        )
    except UsageError as error:
        raise fail(str(error)) from None

    def show(stage: Stage) -> None:
        sys.stdout.write(printable_block(render_stage(stage)))  # a bot's lines and stderr
        sys.stdout.flush()

    if not as_json:
        sys.stdout.write(render_header(spec, control) + "\n")
        sys.stdout.flush()
    report = check_bot(spec, control, on_stage=None if as_json else show)
    if as_json:
        sys.stdout.write(json.dumps(report.to_json()) + "\n")
    else:
        sys.stdout.write(printable_block(render_footer(report)))
    if not report.ok:
        raise typer.Exit(code=1)
