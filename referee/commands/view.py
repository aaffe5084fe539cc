"""``newmarket view LOG``: one match log as a page with its replay, no league needed.

A bot writer who played ``newmarket match`` (or was sent one log of a
league) opens the same match page a league's site has: the result, whether
the log verifies, the step-by-step replay and the bots' stderr, with the log
beside it for download.  Exit 0 (a log that does not verify gets its page, which
names the problem); 2 with one line on stderr for a LOG that is not a file or
not a match log at all (empty, no header: ``newmarket replay`` says the same),
or an ``--out`` that cannot be written or replaced.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from referee.commands.common import fail
from referee.match.log import NotAMatchLog, log_records
from referee.report.site import write_match_site


def view_command(
    log: Annotated[
        Path,
        typer.Argument(metavar="LOG", help="A match log (JSON lines), of a match or a league."),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR",
            help="The directory to write the page to (replaced whole); default LOG-view.",
        ),
    ] = None,
    no_verify: Annotated[
        bool,
        typer.Option("--no-verify", help="Do not replay the log through the engine to check it."),
    ] = False,
) -> None:
    """Write one match log as a page with its replay: open OUT/index.html in a browser."""
    if not log.is_file():
        raise fail(f"LOG: {log} is not a file") from None
    try:  # the header alone: a file that is no match log gets no page, as replay says
        next(log_records(log))
    except NotAMatchLog as error:
        raise fail(f"LOG: {error}") from None
    target = out if out is not None else log.with_name(f"{log.stem}-view")
    try:
        written = write_match_site(log, target, verify=not no_verify)
    except OSError as error:
        raise fail(f"--out: {target}: {error.strerror or error}") from None
    problem = written.error or written.verified
    tail = f" (the log has a problem, named on the page: {problem})" if problem else ""
    print(f"{target / 'index.html'}{tail}", file=sys.stdout, flush=True)
