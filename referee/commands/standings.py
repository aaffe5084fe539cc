"""``newmarket standings LEAGUE.toml``: a league's standings from its database, at any time.

The database is the one ``newmarket league LEAGUE.toml`` writes (its
``--db``, by default the file's name with ``.db``); ``--db FILE`` names it
directly.  It is opened read-only, so this is safe while the league is still
running (SQLite's WAL lets a reader see every committed match).  The table
shows one ranking and how sure it is, with a legend; ``--all`` shows every
column, as ``--json`` and ``--csv`` always do.
"""

from __future__ import annotations

from referee.commands.common import AllColumns, UsageError, fail
from referee.commands.league import StandingsCsv, StandingsJson, one_format, print_standings
from referee.commands.league_database import DatabaseToRead, LeagueToRead, league_database
from referee.league.league_db import LeagueStore, StoreError
from referee.league.standings import standings_of


def standings_command(
    league_file: LeagueToRead = None,
    db: DatabaseToRead = None,
    as_json: StandingsJson = False,
    as_csv: StandingsCsv = False,
    all_columns: AllColumns = False,
) -> None:
    """Print a league's standings from its database (also while it runs)."""
    one_format(as_json, as_csv)
    try:
        path = league_database(league_file, db, "standings")
    except UsageError as error:
        raise fail(str(error)) from None
    try:
        with LeagueStore.open_existing(path) as store:
            standings = standings_of(store)  # a damaged row is a StoreError here
    except StoreError as error:
        raise fail(f"{error}") from None
    print_standings(standings, as_json=as_json, as_csv=as_csv, all_columns=all_columns)
