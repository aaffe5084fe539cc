"""Which results database ``standings`` and ``report`` read: the one ``league`` writes.

``newmarket league cup.toml`` keeps its results in ``cup.db`` (or ``--db
FILE``), so ``newmarket standings cup.toml`` and ``newmarket report cup.toml``
read that same file: the organiser types the name they already know.
``--db FILE`` still names the database itself, and a database given where the
league file goes is read as it is.  A league file given to ``--db`` is the
likeliest slip of all (SQLite's own answer was "file is not a database"), so
it is named as one, with the command that reads it.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated

import typer

from referee.commands.common import UsageError
from referee.commands.league import default_db

SQLITE_HEADER = b"SQLite format 3\x00"
MAX_LEAGUE_FILE = 1 << 20  # a league file of 50 bots is a few kilobytes

# The two ways ``standings`` and ``report`` are told which database to read.
LeagueToRead = Annotated[
    Path | None,
    typer.Argument(
        metavar="LEAGUE.toml",
        help="The league's file: its database is read, as `newmarket league` wrote it.",
        show_default=False,
    ),
]
DatabaseToRead = Annotated[
    Path | None,
    typer.Option(
        metavar="FILE",
        help="The league's results database (default: the league file's name with .db).",
        show_default=False,
    ),
]


def is_database(path: Path) -> bool:
    """Whether ``path`` is an SQLite file (by its first 16 bytes, as SQLite itself tells)."""
    try:
        with open(path, "rb") as file:
            return file.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def is_league_file(path: Path) -> bool:
    """Whether ``path`` looks like a league file: named ``.toml``, or TOML with its tables."""
    if not path.is_file() or is_database(path):
        return False
    if path.suffix == ".toml":
        return True
    try:
        if path.stat().st_size > MAX_LEAGUE_FILE:  # a log or an archive: not worth parsing
            return False
        with open(path, "rb") as file:
            data = tomllib.load(file)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return "league" in data or "bots" in data


def league_database(league_file: Path | None, db: Path | None, command: str) -> Path:
    """The database of ``LEAGUE.toml`` (``league``'s default, ``--db`` over it); ``UsageError``.

    ``command`` is how to read a league file instead, as the user would type it
    (``"standings"``, ``"report --out site"``): the error for ``--db cup.toml`` gives it.
    """
    if db is not None:
        if is_league_file(db):
            raise UsageError(
                f"{db} is a league file, not a database: run `newmarket {_with(command, db)}`"
            )
        return db
    if league_file is None:
        raise UsageError("give the league's file (LEAGUE.toml) or its database (--db FILE)")
    if is_database(league_file):
        return league_file
    found = default_db(league_file)
    if not found.is_file():
        raise UsageError(
            f"{found}: no such league database ({league_file}'s results go there once "
            f"`newmarket league {league_file}` has started; or give --db FILE)"
        )
    return found


def _with(command: str, league_file: Path) -> str:
    """``command`` with the league file after its name: ``report cup.toml --out site``."""
    name, _, rest = command.partition(" ")
    return " ".join(part for part in (name, str(league_file), rest) if part)
