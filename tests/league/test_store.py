"""The results database: finished matches survive, whole or not at all; other leagues refused."""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from referee.league.config import LeagueConfig, parse_config
from referee.league.store import LeagueStore, StoreError, first_difference

from .results import key, result
from .test_config import GOOD


def config_of(tmp_path: Path, text: str = GOOD) -> LeagueConfig:
    path = tmp_path / "league.toml"
    path.write_text(text)
    return parse_config(text, path)


def test_finished_matches_survive_closing_and_reopening(tmp_path: Path) -> None:
    config = config_of(tmp_path)
    db = tmp_path / "league.db"
    with LeagueStore.for_league(db, config) as store:
        store.record(key("m1", [0, 1, 2]), result("m1", ["a", "b", "c"], [1, 2, 3], [50, 40, 20]))
        store.record(key("m2", [3, 1, 0], ordinal=1), result("m2", ["d", "b", "a"], [2, 1, 3]))
    with LeagueStore.for_league(db, config) as store:
        assert store.finished_ids() == {"m1", "m2"}
        stored = store.matches()
        assert [m.key.match_id for m in stored] == ["m1", "m2"]
        assert stored[0].key.bots == (0, 1, 2)
        assert stored[0].result.seats[0].chips == 50
        assert stored[1].key.bots == (3, 1, 0)
        assert store.bot_names() == ["a", "b", "c", "d"]
    with LeagueStore.open_existing(db) as reader:
        assert reader.count() == 2


def test_a_match_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    with LeagueStore.for_league(tmp_path / "l.db", config_of(tmp_path)) as store:
        bad = result("m1", ["a", "b", "c"], [1, 2, 3])
        bad.seats[2] = dataclasses.replace(bad.seats[2], seat=1)  # two rows for seat 1
        with pytest.raises(sqlite3.IntegrityError):
            store.record(key("m1", [0, 1, 2]), bad)
        assert store.finished_ids() == set()
        assert store.matches() == []
        store.record(key("m1", [0, 1, 2]), result("m1", ["a", "b", "c"], [1, 2, 3]))
        with pytest.raises(sqlite3.IntegrityError):  # never played twice
            store.record(key("m1", [0, 1, 2]), result("m1", ["a", "b", "c"], [1, 2, 3]))
        assert store.count() == 1


def test_a_different_league_is_refused_naming_what_differs(tmp_path: Path) -> None:
    db = tmp_path / "league.db"
    LeagueStore.for_league(db, config_of(tmp_path)).close()
    other = config_of(tmp_path, GOOD.replace("seed = 7", "seed = 8"))
    with pytest.raises(StoreError) as caught:
        LeagueStore.for_league(db, other)
    message = str(caught.value)
    assert "holds a different league (league.seed: 7 in the database, 8 now)" in message
    assert "\n" not in message
    swapped = config_of(tmp_path, GOOD.replace('command = "boodle"', 'command = "random"'))
    with pytest.raises(StoreError, match=r"bots\[2\]\.command: \"boodle\" in the database"):
        LeagueStore.for_league(db, swapped)
    renamed = config_of(tmp_path, GOOD.replace("[league]", '[league]\nname = "Spring cup"'))
    with LeagueStore.for_league(db, renamed) as store:  # the display name is not the league
        assert store.name() == "Spring cup"


def test_what_is_not_a_league_database_is_refused(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_text("not sqlite at all" * 100)
    with pytest.raises(StoreError, match="cannot open the league database"):
        LeagueStore.open_existing(junk)
    with pytest.raises(StoreError, match="no such league database"):
        LeagueStore.open_existing(tmp_path / "missing.db")
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    with pytest.raises(StoreError, match="not a newmarket league database"):
        LeagueStore.open_existing(empty)


def test_first_difference_names_nested_keys() -> None:
    assert first_difference({"a": {"b": 1}}, {"a": {"b": 2}}) == "a.b: 1 in the database, 2 now"
    assert first_difference({"a": [1, 2]}, {"a": [1]}) == "a: 2 entries in the database, 1 now"
    assert first_difference({"a": 1}, {"a": 1, "c": 3}) == "c: absent in the database, 3 now"


def test_the_database_and_its_new_directories_are_the_organisers_alone(tmp_path: Path) -> None:
    # Whatever the umask (0 here, the most open): another account, or a bot given a uid of
    # its own by a root referee, reads nothing of a league's results.
    config = config_of(tmp_path)
    db = tmp_path / "results" / "2026" / "league.db"
    before = stat.S_IMODE(tmp_path.stat().st_mode)
    previous = os.umask(0)
    try:
        with LeagueStore.for_league(db, config) as store:
            store.record(key("m1", [0, 1, 2]), result("m1", ["a", "b", "c"], [1, 2, 3]))
            made = [db, db.with_name("league.db-wal"), db.with_name("league.db.lock")]
            for path in [db, *(path for path in made[1:] if path.exists())]:
                assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    finally:
        os.umask(previous)
    for directory in (db.parent, db.parent.parent):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
    assert stat.S_IMODE(tmp_path.stat().st_mode) == before  # the organiser's own: as it was
