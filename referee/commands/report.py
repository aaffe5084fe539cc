"""``newmarket report LEAGUE.toml --out DIR``: the league as a static site that opens from disk.

Standings with a chart of ratings, a page per bot and a page per match with a
replay viewer (``referee.report``).  The database is read read-only, so this
runs safely while the league plays; ``--watch`` rebuilds the site each time a
match finishes, until Ctrl-C or SIGTERM: exit 130 or 143, the site in place being
the last complete one.  Each build prints the site's ``index.html`` and what it
holds on stdout (as ``newmarket view`` prints its page's).  Exit 0, or 2 with one
line on stderr for a database that cannot be read or an ``--out`` that cannot be
written.
"""

from __future__ import annotations

import functools
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from referee.commands.common import UsageError, fail
from referee.commands.league_database import DatabaseToRead, LeagueToRead, league_database
from referee.league.league_db import StoreError
from referee.report.data import League
from referee.report.frames import plural
from referee.report.site import SiteBuilder, watch

SiteDir = Annotated[
    Path, typer.Option(metavar="DIR", help="The directory to write the site to (replaced whole).")
]
LogDir = Annotated[
    Path | None,
    typer.Option(
        "--log-dir",
        "--logs",
        metavar="DIR",
        help="Where the match logs are, if not where the league wrote them.",
        show_default=False,
    ),
]
Watch = Annotated[
    bool,
    typer.Option("--watch", help="Rebuild the site as matches finish, until Ctrl-C or SIGTERM."),
]
Interval = Annotated[
    float,
    typer.Option(
        metavar="SECONDS", help="--watch: seconds between looks at the database.", min=0.1
    ),
]
NoVerify = Annotated[
    bool,
    typer.Option("--no-verify", help="Do not replay each log through the engine to check it."),
]


def report_command(
    out: SiteDir,
    league_file: LeagueToRead = None,
    db: DatabaseToRead = None,
    logs: LogDir = None,
    watch_db: Watch = False,
    interval: Interval = 2.0,
    no_verify: NoVerify = False,
) -> None:
    """Write a league's standings, bot pages and match replays as a static site."""
    try:
        db = league_database(league_file, db, f"report --out {out}")
    except UsageError as error:
        raise fail(str(error)) from None
    if logs is not None and not logs.is_dir():
        raise fail(f"--log-dir: {logs} is not a directory") from None
    # Under --watch the standings page of an unfinished league reloads itself.
    refresh = max(5, round(interval * 5)) if watch_db else None
    builder = SiteBuilder(db, out, logs, verify=not no_verify, refresh=refresh)
    built = functools.partial(print_built, out)
    stop = StopRequest()
    try:
        with stop.on_signals():
            built(builder.build())
            if watch_db:
                watch(builder, interval=interval, on_build=built, should_stop=stop.is_set)
    except StoreError as error:
        raise fail(f"{error}") from None
    except OSError as error:
        raise fail(f"--out: {out}: {error.strerror or error}") from None
    except KeyboardInterrupt:
        stop.signal = stop.signal or signal.SIGINT  # ours knows which signal was sent
    if stop.signal is not None:
        typer.echo("stopped: the site in place is the last complete one", err=True)
        raise typer.Exit(code=128 + stop.signal)


def print_built(out: Path, league: League) -> None:
    """The result, on stdout as every command's (docs/cli.md), and as `view` names its page."""
    print(
        f"{out / 'index.html'}: {plural(len(league.matches), 'match')}, "
        f"{plural(len(league.bots), 'bot')}",
        flush=True,
    )


class StopRequest:
    """Whether SIGINT or SIGTERM has asked the command to stop, and which.

    ``on_signals`` installs the handler explicitly, whatever the process
    inherited: Python turns SIGINT into ``KeyboardInterrupt`` only if SIGINT
    was not ignored when it started, and a shell without job control (``sh -c
    'CMD &'``, scripts, some CI runners) starts background commands with
    SIGINT ignored, so there ``--watch`` ignored Ctrl-C and ``kill -INT`` and
    ran on forever.  The handler raises ``KeyboardInterrupt`` at once, to stop
    a build midway (its fresh directory is deleted, the site in place stays),
    and also records the request: should the exception be raised where Python
    cannot pass it on (inside an object's ``__del__``, where it is only printed
    as "Exception ignored"), the watch loop still sees ``is_set`` at its next
    poll and ends.
    """

    def __init__(self) -> None:
        self.signal: int | None = None

    def is_set(self) -> bool:
        return self.signal is not None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.signal = signum
        raise KeyboardInterrupt

    @contextmanager
    def on_signals(self) -> Iterator[None]:
        """SIGINT and SIGTERM stop the command while the block runs."""
        numbers = (signal.SIGINT, signal.SIGTERM)
        previous = {number: signal.signal(number, self._handle) for number in numbers}
        try:
            yield
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)
