"""``newmarket report --db FILE --out DIR``: the league as a static site that opens from disk.

Standings with a chart of ratings, a page per bot and a page per match with a
replay viewer (``referee.report``).  The database is read read-only, so this
runs safely while the league plays; ``--watch`` rebuilds the site each time a
match finishes, until Ctrl-C.  Exit 0, or 2 with one line on stderr for a
database that cannot be read or an ``--out`` that cannot be written.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from referee.league.store import StoreError
from referee.report.data import League
from referee.report.frames import plural
from referee.report.site import SiteBuilder, watch


def report_command(
    db: Annotated[Path, typer.Option(help="The league's results database.")],
    out: Annotated[Path, typer.Option(help="The directory to write the site to (replaced whole).")],
    logs: Annotated[
        Path | None,
        typer.Option(
            "--log-dir",
            "--logs",
            help="Where the match logs are, if not where the league wrote them.",
            show_default=False,
        ),
    ] = None,
    watch_db: Annotated[
        bool, typer.Option("--watch", help="Rebuild the site as matches finish, until Ctrl-C.")
    ] = False,
    interval: Annotated[
        float, typer.Option(help="--watch: seconds between looks at the database.", min=0.1)
    ] = 2.0,
    no_verify: Annotated[
        bool,
        typer.Option("--no-verify", help="Do not replay each log through the engine to check it."),
    ] = False,
) -> None:
    """Write a league's standings, bot pages and match replays as a static site."""
    if logs is not None and not logs.is_dir():
        typer.echo(f"error: --log-dir: {logs} is not a directory", err=True)
        raise typer.Exit(code=2)
    # Under --watch the standings page of an unfinished league reloads itself.
    refresh = max(5, round(interval * 5)) if watch_db else None
    builder = SiteBuilder(db, out, logs, verify=not no_verify, refresh=refresh)

    def built(league: League) -> None:
        print(
            f"{out / 'index.html'}: {plural(len(league.matches), 'match')}, "
            f"{plural(len(league.bots), 'bot')}",
            file=sys.stderr,
            flush=True,
        )

    try:
        built(builder.build())
        if watch_db:
            watch(builder, interval=interval, on_build=built)
    except StoreError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=2) from None
    except OSError as error:
        typer.echo(f"error: --out: {out}: {error.strerror or error}", err=True)
        raise typer.Exit(code=2) from None
    except KeyboardInterrupt:
        typer.echo("stopped: the site in place is the last complete one", err=True)
        raise typer.Exit(code=130) from None
