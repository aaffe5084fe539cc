"""``LeagueStore.record_many``: many matches in one transaction, the rows ``record`` writes.

A benchmark writes a league of 10^6 generated results with it (one sync to
disk a chunk instead of one a match); the standings must not tell such a
database from one a league wrote a match at a time.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import msgspec
import pytest

from referee.league import standings as standings_module
from referee.league.league_db import LeagueStore
from referee.league.league_file import load_config
from referee.league.runner import rotation_major, round_robin_jobs
from referee.league.standings import standings_of
from referee.match.key import MatchKey
from referee.match.result import MatchResult, result_json
from tests.league.files import write_league_file
from tests.league.results import made_up

BOTS = ("random", "lowest", "tracker", "boodle", "longest", "random")


def generated(path: Path, db: Path) -> tuple[LeagueStore, list[tuple[MatchKey, MatchResult]]]:
    """A league's store and a result for every match of its schedule, in the runner's order."""
    store = LeagueStore.for_league(db, load_config(path))
    seed = int(store.resolved_identity()["league"]["seed"])
    jobs = sorted(round_robin_jobs(load_config(path), seed, store.deal_key()), key=rotation_major)
    rng = random.Random(5)
    made = [(job.key, made_up(job.key, rng)) for job in jobs]
    return store, made


def rows(db: Path) -> list[list[tuple[object, ...]]]:
    """Every stored row but the time each match was written."""
    with sqlite3.connect(db) as raw:
        return [
            raw.execute(
                "SELECT match_id, ordinal, round, table_no, rotation, seed, hands, reason, "
                "log_path, result FROM matches ORDER BY match_id"
            ).fetchall(),
            raw.execute("SELECT * FROM seats ORDER BY match_id, seat").fetchall(),
            raw.execute("SELECT * FROM faults ORDER BY match_id, seat, number").fetchall(),
        ]


def test_a_league_written_in_bulk_has_the_rows_and_standings_of_one_written_a_match_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(standings_module, "EVERY", 10)  # the saved tally's path too
    path = write_league_file(
        tmp_path, BOTS, name="bulk", hand_limit=6, sections="\n[schedule]\ncycles = 3\n"
    )
    one, made = generated(path, tmp_path / "one.db")
    for key, result in made:
        one.record(key, result)
    bulk, _ = generated(path, tmp_path / "bulk.db")  # (a deal key of its own: not stored)
    half = len(made) // 2
    assert bulk.record_many(made[:half]) == half
    standings_of(bulk)  # saves a tally, as a league's standings would mid-way
    assert Path(f"{bulk.path}.standings").exists()
    assert bulk.record_many(made[half:]) == len(made) - half
    faults = sum(len(seat.faults) for _, result in made for seat in result.seats)

    matches, seats, fault_rows = rows(tmp_path / "bulk.db")
    assert (len(matches), len(seats), len(fault_rows)) == (len(made), 3 * len(made), faults)
    assert faults and [matches, seats, fault_rows] == rows(tmp_path / "one.db")
    from_tally = standings_of(bulk)
    every_match = standings_of(one, save=False)
    assert from_tally.to_json() == every_match.to_json()
    assert every_match.finished and every_match.matches_done == len(made)
    one.close()
    bulk.close()


def test_record_many_writes_all_of_its_matches_or_none(tmp_path: Path) -> None:
    path = write_league_file(tmp_path, BOTS, name="bulk", hand_limit=6)
    store, made = generated(path, tmp_path / "league.db")
    store.record_many(made[:2])
    with pytest.raises(sqlite3.IntegrityError):  # the third is stored already
        store.record_many(made[2:5] + made[:1])
    short_key, result = made[6]
    short = (short_key, MatchResult(result.match_id, result.seed, {}, 6, result.seats[:-1]))
    with pytest.raises(ValueError, match="seats"):
        store.record_many([made[5], short])
    assert store.count() == 2
    assert store.record_many([]) == 0
    store.close()


def test_a_league_whose_results_were_kept_as_json_text_reads_as_it_did(tmp_path: Path) -> None:
    """A league database from before results were packed: the same matches, standings and
    results; the matches it plays on are packed beside the old rows."""
    path = write_league_file(tmp_path, BOTS, name="old", hand_limit=6)
    store, made = generated(path, tmp_path / "league.db")
    half = len(made) // 2
    store.record_many(made[:half])
    packed = standings_of(store, save=False).to_json()
    with sqlite3.connect(store.path) as raw:
        for key, result in made[:half]:
            text = msgspec.json.encode(result_json(result)).decode()
            raw.execute("UPDATE matches SET result = ? WHERE match_id = ?", (text, key.match_id))
        kinds = raw.execute("SELECT DISTINCT typeof(result) FROM matches").fetchall()
    assert kinds == [("text",)]
    assert standings_of(store, save=False).to_json() == packed
    assert [stored.result for stored in store.matches()] == [result for _, result in made[:half]]
    store.record_many(made[half:])
    assert [stored.result for stored in store.matches()] == [result for _, result in made]
    with sqlite3.connect(store.path) as raw:
        kinds = raw.execute("SELECT DISTINCT typeof(result) FROM matches ORDER BY 1").fetchall()
    assert kinds == [("blob",), ("text",)]
    store.close()
