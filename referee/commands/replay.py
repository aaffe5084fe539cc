"""``newmarket replay LOG``: verify a match log by re-running the engine, and print it.

Exit 0 when every line verifies, 1 when one does not (the message names the
first line that differs), 2 when the file is not a match log at all: it cannot
be read, it is empty, or its first line is not a log header (one ``error:`` line
on stderr naming the file, as for any bad argument; ``--json`` prints nothing).
A verified log's output ends with what no line of it can confirm
(``Not verifiable:``, by line number and kind; ``not_verifiable`` in ``--json``).

``--seat N --wire`` prints the lines seat N was sent (``<``) and sent back
(``>``), with their times, exactly as they crossed the wire; ``--seat N --feed
CMD`` runs the bot CMD on that seat's recorded input and reports the first
request it answers differently (exit 1 then, 0 if it answers every one alike).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from referee.commands.common import EXIT_USAGE, fail
from referee.commands.match import print_result
from referee.match.log import LogError
from referee.text.printing import print_line, printable
from referee.tools.replay import NotAMatchLog, Replay, render_replay, verify_log
from referee.tools.transcript import feed, transcript

LogFile = Annotated[
    Path,
    typer.Argument(
        metavar="LOG",
        help="A match log: of `newmarket match`, a league, or `newmarket sprt` or "
        "`newmarket check` with --log-dir.",
    ),
]
ReplayJson = Annotated[bool, typer.Option("--json", help="Print the verified match as JSON.")]
TranscriptSeat = Annotated[
    int | None,
    typer.Option(
        "--seat", metavar="SEAT", help="The seat whose wire transcript --wire or --feed uses."
    ),
]
Wire = Annotated[
    bool, typer.Option("--wire", help="Print the seat's lines as sent and received, with times.")
]
FeedCommand = Annotated[
    str | None,
    typer.Option(
        "--feed",
        metavar="COMMAND",
        help="Run this bot command on the seat's recorded input; report the first "
        "request it answers differently.",
    ),
]


def replay_command(
    log: LogFile,
    as_json: ReplayJson = False,
    seat: TranscriptSeat = None,
    wire: Wire = False,
    feed_command: FeedCommand = None,
) -> None:
    """Re-run a match from its log, check every event and the result, and print it."""
    if not log.is_file():
        raise fail(f"LOG: {log} is not a file") from None
    if (wire or feed_command is not None) and seat is None:
        raise fail("--wire and --feed need --seat N") from None
    if seat is not None:
        if not wire and feed_command is None:
            raise fail("--seat needs --wire or --feed CMD") from None
        raise typer.Exit(code=_seat_transcript(log, seat, wire, feed_command))
    replay = _verified(log, as_json)
    if as_json:
        sys.stdout.write(json.dumps(replay.to_json()) + "\n")
        return
    _print_replay(replay)


def _verified(log: Path, as_json: bool) -> Replay:
    """The log verified; one that is no match log exits 2, one that does not verify 1."""
    try:
        return verify_log(log)
    except NotAMatchLog as error:
        raise fail(f"LOG: {error}") from None
    except LogError as error:
        if as_json:
            failure = {"verified": False, "log": str(log), "line": error.line, "error": str(error)}
            sys.stdout.write(json.dumps(failure) + "\n")
        else:
            typer.echo(f"{log}: does not verify: {error}", err=True)
        raise typer.Exit(code=1) from None


def _print_replay(replay: Replay) -> None:
    """The match hand by hand, its result, and what verified and what cannot be."""
    console = Console()
    for line in render_replay(replay):
        print_line(console, line)
    console.print("")
    print_result(console, replay.result)
    print_line(
        console,
        f"Verified: {replay.lines} lines, {len(replay.events)} events and "
        f"{replay.decisions} decisions agree with the engine"
        + (", and every sent and received line with them." if replay.transcript else "."),
    )
    # What no line of the log can confirm, by line: never passed over in silence.
    print_line(console, f"Not verifiable: {len(replay.unverifiable)} parts (docs/match-log.md)")
    for item in replay.unverifiable:
        print_line(console, f"  {printable(item.text())}")


def _seat_transcript(log: Path, seat: int, wire: bool, feed_command: str | None) -> int:
    try:
        lines = transcript(log, seat)
    except NotAMatchLog as error:
        typer.echo(f"error: LOG: {error}", err=True)
        return EXIT_USAGE
    except LogError as error:
        typer.echo(f"{log}: {error}", err=True)
        return 1
    if wire:
        for line in lines:
            mark = "<" if line.direction == "sent" else ">"
            # A bot's bytes, raw, would reach the organiser's terminal: escapes made visible.
            for text in line.data.decode("utf-8", "replace").removesuffix("\n").split("\n"):
                sys.stdout.write(f"{line.t:12.3f} {mark} {printable(text)}\n")
    if feed_command is None:
        return 0
    command = shlex.split(feed_command)
    if not command:
        typer.echo("error: --feed: an empty command", err=True)
        return 2
    try:
        result = feed(lines, command)
    except OSError as error:
        typer.echo(f"error: --feed: cannot start {command[0]}: {error.strerror or error}", err=True)
        return 2
    divergence = result.divergence
    if divergence is None:
        sys.stdout.write(
            f"seat {seat}: {' '.join(command)} answered all {result.requests} requests "
            "as the recorded bot did\n"
        )
        return 0
    sys.stdout.write(
        f"seat {seat}: the first difference is request {divergence.request_id} "
        f"({divergence.decision}), after {result.requests} answered alike\n"
        f"  recorded: {printable(divergence.recorded)}\n"
        f"  this bot: {printable(divergence.answered)}\n"
    )
    return 1
