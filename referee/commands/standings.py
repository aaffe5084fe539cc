"""``newmarket standings --db FILE``: a league's standings from its database, at any time.

The database is opened read-only, so this is safe while the league is still
running (SQLite's WAL lets a reader see every committed match).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from referee.commands.league import one_format, print_standings
from referee.league.league_db import LeagueStore, StoreError
from referee.league.standings import standings_of


def standings_command(
    db: Annotated[Path, typer.Option(metavar="FILE", help="The league's results database.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the standings as JSON.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print the standings as CSV.")] = False,
) -> None:
    """Print a league's standings from its database (also while it runs)."""
    one_format(as_json, as_csv)
    try:
        with LeagueStore.open_existing(db) as store:
            standings = standings_of(store)  # a damaged row is a StoreError here
    except StoreError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=2) from None
    print_standings(standings, as_json=as_json, as_csv=as_csv)
