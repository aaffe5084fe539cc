"""League files for tests that run real leagues: a small league of bundled bots."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path


def write_league_file(
    directory: Path,
    bots: Sequence[str],
    *,
    name: str,
    hand_limit: int,
    logs: str = "false",
    sections: str = "",
    extra_bot: str = "",
) -> Path:
    """``directory/league.toml``: bundled ``bots`` (named ``COMMAND-INDEX``) at tables of 3,
    seed 23, generous time limits for a loaded host; ``logs`` is TOML (``false`` or a path
    string), ``sections`` more TOML tables, ``extra_bot`` one more ``[[bots]]`` entry."""
    text = f"""
[league]
name = "{name}"
seed = 23
table_size = 3
hand_limit = {hand_limit}
logs = {logs}

[time_control]
move_time = 30.0
startup_time = 60.0
{sections}"""
    for index, command in enumerate(bots):
        text += f'\n[[bots]]\nname = "{command}-{index}"\ncommand = "{command}"\n'
    path = directory / "league.toml"
    path.write_text(text + extra_bot)
    return path


def afresh(db: Path, copy: Path) -> None:
    """``copy``: the league of ``db`` as it was made, before any match was played.

    The same identity, bots, seed and deal key (``referee.dealkey``): the
    league's cards are secret and drawn when its database is made, so two
    databases made apart deal different cards, and a test that compares two
    runs of one league plays the second on a fresh copy of the first.
    """
    source = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    target = sqlite3.connect(copy)
    try:
        source.backup(target)
        target.executescript("DELETE FROM faults; DELETE FROM seats; DELETE FROM matches;")
    finally:
        source.close()
        target.close()
