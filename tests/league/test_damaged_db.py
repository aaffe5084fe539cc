"""The operator's database: one writer at a time, and damage said in one line, never a traceback.

Real ``newmarket`` processes.  A second ``newmarket league`` on a database in
use is refused at once (a lock beside it), and the first finishes with
nothing corrupted.  A database whose page bytes were overwritten, or with a
row holding a value no league writes, makes ``standings``, ``report`` and
``league`` print one line naming the file and what is wrong: ``league`` as a
real process, ``standings`` and ``report`` through the console script's own
entry point in this process (``tests/clirun.py``: the same exit code and
stderr, without a Python start-up of a second each).
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.league.league_db import LeagueStore
from referee.league.league_file import load_config
from referee.match.packed_result import pack, unpack
from tests.clirun import newmarket as in_process
from tests.league.files import write_league_file

REPO = Path(__file__).resolve().parents[2]
NEWMARKET = [sys.executable, "-m", "referee.cli"]


def newmarket(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*NEWMARKET, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False
    )


def one_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    return errors[0]


@pytest.fixture(scope="module")
def finished_league(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A small finished league: its file and its database (WAL checkpointed into it)."""
    directory = tmp_path_factory.mktemp("league")
    league = write_league_file(
        directory, ("lowest", "longest", "lowest"), name="damage", hand_limit=2
    )
    db = directory / "league.db"
    done = newmarket("league", str(league), "--db", str(db), "--jobs", "1", "--json")
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return league, db


def damaged_copy(tmp_path: Path, source: tuple[Path, Path], damage: Callable[[Path], None]) -> Path:
    league, db = source
    copy = tmp_path / "league.db"
    shutil.copy(db, copy)
    shutil.copy(league, tmp_path / "league.toml")
    damage(copy)
    return copy


def overwrite_last_page(db: Path) -> None:
    with sqlite3.connect(db) as connection:
        page = int(connection.execute("PRAGMA page_size").fetchone()[0])
        pages = int(connection.execute("PRAGMA page_count").fetchone()[0])
    assert pages >= 3
    with db.open("r+b") as file:
        file.seek(page * (pages - 1))
        file.write(bytes(range(256)) * (page // 256))


def bad_result_json(db: Path) -> None:
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE matches SET result = '{\"seats\": 3' WHERE rotation = 1")


def bad_ordinal(db: Path) -> None:
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE matches SET ordinal = 'second' WHERE rotation = 2")


def bad_place(db: Path) -> None:
    """A well-formed result whose first seat's place is not the seats table's."""
    with sqlite3.connect(db) as connection:
        (stored,) = connection.execute("SELECT result FROM matches WHERE rotation = 0").fetchone()
        result = unpack(stored)
        result.seats[0].place = 9
        connection.execute("UPDATE matches SET result = ? WHERE rotation = 0", (pack(result),))


def bad_packed_result(db: Path) -> None:
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE matches SET result = x'01ffff' WHERE rotation = 1")


@pytest.mark.parametrize(
    ("damage", "what"),
    [
        (overwrite_last_page, "damaged league database: "),
        (bad_result_json, "damaged league database: match c1-t00001-r1 holds a bad value"),
        (bad_ordinal, "damaged league database: match c1-t00001-r2 holds a bad value"),
        (bad_place, "damaged league database: match c1-t00001-r0 holds a bad value"),
        (bad_packed_result, "damaged league database: match c1-t00001-r1 holds a bad value"),
    ],
    ids=["page", "result-json", "ordinal", "place", "packed-result"],
)
def test_a_damaged_database_is_one_line_from_standings_report_and_league(
    tmp_path: Path,
    finished_league: tuple[Path, Path],
    damage: Callable[[Path], None],
    what: str,
) -> None:
    db = damaged_copy(tmp_path, finished_league, damage)
    league = (str(tmp_path / "league.toml"), "--db", str(db), "--jobs", "1")
    # The league process runs beside the others: each only reads the file (the league
    # stops at opening it).
    process = subprocess.Popen(
        [*NEWMARKET, "league", *league], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    done_all = []
    for args in (("standings", "--db", str(db)),
                 ("report", "--db", str(db), "--out", str(tmp_path / "site"))):  # fmt: skip
        code, out, err = in_process(*args)
        done_all.append(subprocess.CompletedProcess(args, code, out, err))
    out, err = process.communicate(timeout=300)
    done_all.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    for done in done_all:
        line = one_error(done)
        assert line.startswith(f"error: {db}: {what}"), (done.args, line)


def test_a_second_league_process_on_a_database_in_use_is_refused_at_once(
    tmp_path: Path, finished_league: tuple[Path, Path]
) -> None:
    league, source = finished_league
    db = tmp_path / "league.db"
    shutil.copy(source, db)
    config = load_config(league)
    with LeagueStore.for_league(db, config):  # this process is the league now
        started = time.monotonic()
        refused = newmarket("league", str(league), "--db", str(db), "--jobs", "1")
        line = one_error(refused)
        assert refused.returncode == 2 and time.monotonic() - started < 60
        assert line.startswith(f"error: {db}: already in use by league process ")
        assert "one league process per database" in line
    # Free again once the first is closed: the same command simply finds it finished.
    assert newmarket("league", str(league), "--db", str(db), "--jobs", "1").returncode == 0


def test_two_real_league_processes_one_database_the_second_refused_nothing_corrupted(
    tmp_path: Path,
) -> None:
    bots = "".join(
        f"""
[[bots]]
name = "slow{index}"
command = ["{sys.executable}", "-m", "tests.league.remembers_deals", "slow"]
cwd = "{REPO}"
"""
        for index in range(3)
    )
    league = write_league_file(tmp_path, (), name="two", hand_limit=2, extra_bot=bots)
    db = tmp_path / "league.db"
    lock = tmp_path / "league.db.lock"
    first = subprocess.Popen(
        [*NEWMARKET, "league", str(league), "--db", str(db), "--jobs", "1", "--json"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not (lock.exists() and lock.read_text().strip() == str(first.pid)):
            assert first.poll() is None and time.monotonic() < deadline, "no lock taken"
            time.sleep(0.05)
        second = newmarket("league", str(league), "--db", str(db), "--jobs", "1")
        # The first is still playing its slow matches (about 10 s of them).
        assert first.poll() is None, "the first league ended before the second was refused"
        assert one_error(second) == (
            f"error: {db}: already in use by league process {first.pid} "
            "(lock league.db.lock); one league process per database"
        )
        _out, err = first.communicate(timeout=600)
    finally:
        first.kill()
    assert first.returncode == 0, err
    with LeagueStore.open_existing(db) as store:
        assert store.count() == 3 and len(store.matches()) == 3
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
