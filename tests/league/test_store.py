"""The results database: finished matches survive, whole or not at all; other leagues refused."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import msgspec
import pytest

from referee.league.league_db import LeagueStore, StoreError, first_difference
from referee.league.league_file import LeagueConfig, parse_config

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
        bad.seats[2] = msgspec.structs.replace(bad.seats[2], seat=1)  # two rows for seat 1
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


def test_a_new_database_keeps_its_own_secret_deal_key_and_deals_every_match_from_it(
    tmp_path: Path,
) -> None:
    config = config_of(tmp_path)
    with LeagueStore.for_league(tmp_path / "a.db", config) as store:
        deals = store.deal_key()
        store.record(key("m1", [0, 1, 2], seed=99), result("m1", ["a", "b", "c"], [1, 2, 3]))
    with LeagueStore.for_league(tmp_path / "b.db", config) as other:
        assert other.deal_key() != deals  # another league of the same file: other cards
    with LeagueStore.open_existing(tmp_path / "a.db") as reader:  # a resume finds it again
        assert reader.deal_key() == deals and not deals.is_public
        (stored,) = reader.matches()
        assert stored.key.seed == 99 and stored.key.deal_seed == deals.deal_seed(99)
        assert reader.schedule_seed() == 7  # the file's
        assert deals.to_text() not in str(reader.identity())  # not in what is compared
    assert deals.to_text() not in (tmp_path / "league.toml").read_text()


def test_a_league_file_without_a_seed_draws_one_once_and_keeps_it(tmp_path: Path) -> None:
    config = config_of(tmp_path, GOOD.replace("seed = 7", ""))
    assert config.seed is None and config.identity()["league"]["seed"] is None  # type: ignore[index]
    db = tmp_path / "league.db"
    with LeagueStore.for_league(db, config) as store:
        drawn = store.schedule_seed()
    with LeagueStore.for_league(db, config) as store:
        assert store.schedule_seed() == drawn
        assert store.resolved_identity()["league"]["seed"] == drawn
    with LeagueStore.for_league(tmp_path / "other.db", config, drawn_seed=5) as store:
        assert store.schedule_seed() == 5


def test_public_deals_deal_the_schedules_seeds_and_the_start_line_says_so(
    tmp_path: Path,
) -> None:
    from referee.commands.league import cards_note

    config = config_of(tmp_path, GOOD.replace("seed = 7", "seed = 7\npublic_deals = true"))
    with LeagueStore.for_league(tmp_path / "public.db", config) as store:
        assert store.deal_key().is_public
        store.record(key("m1", [0, 1, 2], seed=99), result("m1", ["a", "b", "c"], [1, 2, 3]))
        assert store.matches()[0].key.deal_seed == 99
        assert cards_note(config, store) == (
            "deals: public, as the league file asks: anyone who knows the seed (7) knows "
            "every card of every match"
        )
    # Opting in or out is another league: the identity says so.
    with pytest.raises(StoreError, match=r"league\.public_deals: true in the database, absent"):
        LeagueStore.for_league(tmp_path / "public.db", config_of(tmp_path))
    with LeagueStore.for_league(tmp_path / "secret.db", config_of(tmp_path)) as store:
        assert cards_note(config_of(tmp_path), store) is None


def test_a_database_from_before_deal_keys_resumes_with_its_public_deals(tmp_path: Path) -> None:
    from referee.commands.league import cards_note

    config = config_of(tmp_path)
    db = tmp_path / "old.db"
    with LeagueStore.for_league(db, config) as store:
        store.record(key("m1", [0, 1, 2], seed=99), result("m1", ["a", "b", "c"], [1, 2, 3]))
    with sqlite3.connect(db) as connection:  # as a league made before deal keys left it
        connection.execute("DELETE FROM league WHERE key = 'deal_key'")
    with LeagueStore.open_existing(db) as reader:
        assert reader.deal_key().is_public
    for _ in range(2):  # said at every resume, not only the first
        with LeagueStore.for_league(db, config) as store:
            assert store.legacy_public_deals and store.deal_key().is_public
            assert store.matches()[0].key.deal_seed == 99  # dealt as it was, to the end
            note = cards_note(config, store)
            assert note is not None and "made before deals came from a secret key" in note


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
