"""``newmarket replay LOG``: verify a match log by re-running the engine, and print it.

Exit 0 when every line verifies, 1 when one does not (the message names the
first line that differs), 2 when the file cannot be read at all.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from referee.commands.match import print_result
from referee.matchlog import LogError
from referee.printing import print_line
from referee.replay import render_replay, verify_log


def replay_command(
    log: Annotated[Path, typer.Argument(help="A match log written by `newmarket match`.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the verified match as JSON.")
    ] = False,
) -> None:
    """Re-run a match from its log, check every event and the result, and print it."""
    if not log.is_file():
        typer.echo(f"error: LOG: {log} is not a file", err=True)
        raise typer.Exit(code=2)
    try:
        replay = verify_log(log)
    except LogError as error:
        if as_json:
            failure = {"verified": False, "log": str(log), "line": error.line, "error": str(error)}
            sys.stdout.write(json.dumps(failure) + "\n")
        else:
            typer.echo(f"{log}: does not verify: {error}", err=True)
        raise typer.Exit(code=1) from None
    if as_json:
        sys.stdout.write(json.dumps(replay.to_json()) + "\n")
        return
    console = Console()
    for line in render_replay(replay):
        print_line(console, line)
    console.print("")
    print_result(console, replay.result)
    print_line(
        console,
        f"Verified: {replay.lines} lines, {len(replay.events)} events and "
        f"{replay.decisions} decisions agree with the engine.",
    )
