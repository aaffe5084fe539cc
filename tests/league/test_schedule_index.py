"""The matches' index in schedule order: made for new databases and on a league's resume, and
the standings the same with it or without it (a database made before it, read as it is)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from referee.league.league_db import LeagueStore
from referee.league.league_file import load_config
from referee.league.standings import standings_of
from tests.league.files import write_league_file
from tests.league.test_record_many import generated

BOTS = ("random", "lowest", "tracker", "boodle", "longest", "random")


def indexes(db: Path) -> set[str]:
    with sqlite3.connect(db) as raw:
        rows = raw.execute("SELECT name FROM sqlite_master WHERE type = 'index'").fetchall()
    return {str(name) for (name,) in rows}


def test_standings_read_the_same_from_a_database_made_before_the_index(tmp_path: Path) -> None:
    path = write_league_file(
        tmp_path, BOTS, name="index", hand_limit=6, sections="\n[schedule]\ncycles = 2\n"
    )
    db = tmp_path / "league.db"
    store, made = generated(path, db)
    store.record_many(made)
    store.close()
    assert "matches_in_order" in indexes(db)
    with LeagueStore.open_existing(db) as reader:
        half = sorted(reader.matches(), key=lambda m: (m.key.round, m.key.ordinal))[len(made) // 2]
        after = (half.key.round, half.key.ordinal, half.key.match_id)
        indexed = (standings_of(reader, save=False).to_json(), reader.matches(after))
    with sqlite3.connect(db) as raw:
        raw.execute("DROP INDEX matches_in_order")  # as a database made before it
    with LeagueStore.open_existing(db) as reader:
        assert (standings_of(reader, save=False).to_json(), reader.matches(after)) == indexed
        assert len(indexed[1]) == len(made) - len(made) // 2 - 1
    LeagueStore.for_league(db, load_config(path)).close()  # a league resumed: index made
    assert "matches_in_order" in indexes(db)
