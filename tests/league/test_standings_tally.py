"""``standings`` from the tally saved beside the database: only newer matches read, same numbers.

A duplicate round robin's database gets generated results (no match played)
in the order the runner plays them (every table's rotation 0, then 1, ...),
so the finished prefix of the schedule lags behind; the standings save their
tally, the rest of the league arrives, and the next standings, reading only
the matches after the tally, must equal standings that fold every match,
exactly (JSON, every field).  A file altered or ahead of the database is not
used.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from referee.league import standings as standings_module
from referee.league.league_db import LeagueStore
from referee.league.league_file import load_config
from referee.league.runner import rotation_major, round_robin_jobs
from referee.league.standings import compute, standings_of
from referee.league.standings_tally import TALLY_SUFFIX, Tally
from referee.tables.job import TableJob
from tests.league.files import write_league_file
from tests.league.results import made_up

BOTS = ("random", "lowest", "tracker", "boodle", "longest", "random")


def league(tmp_path: Path) -> tuple[LeagueStore, list[TableJob]]:
    path = write_league_file(
        tmp_path, BOTS, name="tally", hand_limit=6, sections="\n[schedule]\ncycles = 3\n"
    )
    config = load_config(path)
    store = LeagueStore.for_league(tmp_path / "league.db", config)
    seed = int(store.resolved_identity()["league"]["seed"])
    jobs = sorted(round_robin_jobs(config, seed, store.deal_key()), key=rotation_major)
    return store, jobs


def record(store: LeagueStore, jobs: list[TableJob], seed: int) -> None:
    rng = random.Random(seed)
    for job in jobs:
        store.record(job.key, made_up(job.key, rng))


@pytest.fixture
def small_every(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(standings_module, "EVERY", 10)
    return 10


def test_standings_read_only_the_matches_after_the_tally_and_give_the_same_numbers(
    tmp_path: Path, small_every: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, jobs = league(tmp_path)
    part = len(jobs) // 2  # cycle 1, and cycle 2's rotation 0 and part of 1
    record(store, jobs[:part], seed=1)
    standings_of(store)  # saves the tally of the finished prefix
    saved = Path(f"{store.path}{TALLY_SUFFIX}")
    assert saved.exists() and saved.stat().st_mode & 0o077 == 0
    record(store, jobs[part:], seed=2)

    read: list[int] = []
    matches = LeagueStore.matches

    def counting(self: LeagueStore, after: Any = None) -> Any:
        got = matches(self, after)
        read.append(len(got))
        return got

    monkeypatch.setattr(LeagueStore, "matches", counting)
    resumed = standings_of(store, save=False)
    assert 0 < sum(read) < len(jobs)  # the matches after the tally, not every one
    monkeypatch.undo()

    saved.unlink()
    every_match = standings_of(store, save=False)
    # Exactly, not as printed: every float of every row (ratings, scores, intervals).
    assert resumed.rows == every_match.rows
    assert resumed.to_json() == every_match.to_json()
    assert every_match.matches_done == len(jobs) and every_match.finished
    identity, names = store.resolved_identity(), store.bot_names()
    folded = compute(identity, names, store.matches(), store.name(), store.deal_key())
    assert folded.rows == every_match.rows
    store.close()


@pytest.mark.parametrize("spoil", ["altered", "an older database"])
def test_a_tally_that_does_not_fit_the_database_is_not_used(
    tmp_path: Path, small_every: int, spoil: str
) -> None:
    store, jobs = league(tmp_path)
    record(store, jobs, seed=1)
    expected = standings_of(store, save=False).to_json()
    standings_of(store)
    saved = Path(f"{store.path}{TALLY_SUFFIX}")
    assert saved.exists()
    if spoil == "altered":
        blob = bytearray(saved.read_bytes())
        blob[-5] ^= 1
        saved.write_bytes(bytes(blob))
    else:  # its last match is gone: some of its matches are not in the database
        for table in ("faults", "seats"):
            store._db.execute(f"DELETE FROM {table} WHERE match_id = ?", (jobs[0].key.match_id,))
        store._db.execute("DELETE FROM matches WHERE match_id = ?", (jobs[0].key.match_id,))
        kept = saved.read_bytes()
        saved.unlink()
        expected = standings_of(store, save=False).to_json()
        saved.write_bytes(kept)
    assert standings_of(store, save=False).to_json() == expected
    store.close()


def test_a_tally_that_cannot_go_on_gives_way_to_folding_every_match(
    tmp_path: Path, small_every: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ``Tally.extend`` refuses a group it has folded in already; the standings then fold
    # every match afresh, whether that happens while saving a tally or after loading one.
    store, jobs = league(tmp_path)
    record(store, jobs[: len(jobs) // 2], seed=1)
    standings_of(store)  # saves the tally of the finished prefix
    record(store, jobs[len(jobs) // 2 :], seed=2)
    expected = standings_of(store, save=False).to_json()
    extend = Tally.extend

    def refusing(self: Tally, ordered: Any) -> None:
        if self.matches and ordered:  # going on from earlier matches: refused
            raise ValueError("a group of these matches was folded in already")
        extend(self, ordered)

    monkeypatch.setattr(Tally, "extend", refusing)
    assert standings_of(store, save=False).to_json() == expected  # after loading one
    Path(f"{store.path}{TALLY_SUFFIX}").unlink()
    assert standings_of(store).to_json() == expected  # while saving one, run by run
    assert not Path(f"{store.path}{TALLY_SUFFIX}").exists()
    store.close()
