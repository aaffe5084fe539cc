"""The operator's side: what a league cannot write or start is said before it starts, in one
line naming what and where; a disk that fills mid-league (under the database or under the
match logs) stops it cleanly with every finished match intact, and it resumes.

Tests run as root, for whom permission bits stop nothing, so an unwritable place is a
directory that is really a regular file, and a full disk is a small tmpfs filled up (the
tests that need a mount are skipped, saying why, where mounting is not allowed).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.tools.replay import verify_log
from tests.league.files import afresh, write_league_file
from tests.small_disks import fill, tmpfs

REPO = Path(__file__).resolve().parents[2]
BOTS = ("lowest", "longest", "boodle", "tracker", "lowest")


def league_file(tmp_path: Path, *, logs: str = "false", extra_bot: str = "") -> Path:
    return write_league_file(
        tmp_path, BOTS, name="operator test", hand_limit=10, logs=logs, extra_bot=extra_bot
    )


def league(config: Path, db: Path) -> list[str]:
    return [sys.executable, "-m", "referee.cli", "league", str(config), "--db", str(db)]


def run(config: Path, db: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*league(config, db), "--jobs", "2", "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
        timeout=600,
    )


def error_line(stderr: str) -> str:
    """The run's one error line (the sandbox line before it is informational)."""
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, stderr
    assert "Traceback" not in stderr, stderr
    return errors[0]


def finished(db: Path) -> int:
    try:
        with sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True) as connection:
            return int(connection.execute("SELECT COUNT(*) FROM matches").fetchone()[0])
    except sqlite3.Error:
        return 0


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """2 MiB: room for the database of the test league, not for its logs."""
    with tmpfs(tmp_path / "disk", 2) as disk:
        yield disk


@pytest.fixture
def log_disk(tmp_path: Path) -> Iterator[Path]:
    """8 MiB: room for every log of the test league (about 2.4 MiB) once it is emptied."""
    with tmpfs(tmp_path / "logdisk", 8) as disk:
        yield disk


def fill_mid_league(config: Path, db: Path, disk: Path) -> str:
    """Start the league, fill ``disk`` once two matches are recorded; the league must stop
    with exit 1 and one error line, which is returned."""
    process = subprocess.Popen(
        [*league(config, db), "--jobs", "2", "--json"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while finished(db) < 2:
        assert process.poll() is None and time.monotonic() < deadline, "no progress"
        time.sleep(0.02)
    fill(disk / "filler")
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 1, stderr
    return error_line(stderr)


def test_a_database_under_a_regular_file_is_refused_before_the_league_starts(
    tmp_path: Path,
) -> None:
    (tmp_path / "results").write_text("not a directory")
    db = tmp_path / "results" / "league.db"
    done = run(league_file(tmp_path), db)
    assert done.returncode == 2
    line = error_line(done.stderr)
    assert line == (
        f"error: database directory {db.parent}: {tmp_path / 'results'} is a file, not a directory"
    )


def test_a_log_directory_under_a_regular_file_is_refused_before_the_league_starts(
    tmp_path: Path,
) -> None:
    (tmp_path / "blocked").write_text("not a directory")
    logs = tmp_path / "blocked" / "logs"
    db = tmp_path / "league.db"
    done = run(league_file(tmp_path, logs=json.dumps(str(logs))), db)
    assert done.returncode == 2
    assert error_line(done.stderr) == (
        f"error: log directory {logs}: {tmp_path / 'blocked'} is a file, not a directory"
    )
    assert not db.exists()  # nothing started, nothing written


def test_a_missing_bot_binary_is_named_with_its_path_before_the_league_starts(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "bin" / "my-bot"
    extra = f'\n[[bots]]\nname = "mine"\ncommand = ["{missing}", "--fast"]\n'
    db = tmp_path / "league.db"
    done = run(league_file(tmp_path, extra_bot=extra), db)
    assert done.returncode == 2
    line = error_line(done.stderr)
    assert "bots[5].command" in line and "'mine'" in line and str(missing) in line
    assert "does not exist" in line
    assert not db.exists()


def test_a_full_disk_is_refused_before_the_league_starts(tmp_path: Path, small_disk: Path) -> None:
    fill(small_disk / "filler")
    db = small_disk / "league.db"
    done = run(league_file(tmp_path), db)
    assert done.returncode == 2
    assert error_line(done.stderr) == (
        f"error: database directory {small_disk}: cannot write there: No space left on device"
    )


def test_a_disk_that_fills_mid_league_stops_it_cleanly_and_it_resumes(
    tmp_path: Path, small_disk: Path
) -> None:
    config = league_file(tmp_path)
    db = small_disk / "league.db"
    line = fill_mid_league(config, db, small_disk)  # the next match's transaction finds no room
    assert line.startswith(f"error: {db}: cannot record match ")
    assert "full" in line and f"finished matches are kept in {db}" in line

    kept = finished(db)
    assert 2 <= kept < 30
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    (small_disk / "filler").unlink()  # the operator makes room and runs the same command
    resumed = run(config, db)
    assert resumed.returncode == 0, resumed.stderr
    # The same league (its secret deal key) played straight through, from a fresh copy.
    afresh(db, tmp_path / "straight.db")
    expected = run(config, tmp_path / "straight.db")
    assert expected.returncode == 0, expected.stderr
    assert json.loads(expected.stdout)["matches_done"] == 30
    assert json.loads(resumed.stdout) == json.loads(expected.stdout)


def test_a_log_disk_that_fills_mid_league_stops_it_cleanly_and_it_resumes(
    tmp_path: Path, log_disk: Path
) -> None:
    logs = log_disk / "logs"
    config = league_file(tmp_path, logs=json.dumps(str(logs)))

    db = tmp_path / "league.db"
    line = fill_mid_league(config, db, log_disk)  # the next match log's write finds no room
    assert "No space left on device" in line, line
    assert str(logs) in line, line  # the operator is told where
    assert f"finished matches are kept in {db}" in line

    # The same league (no logs; its secret deal key) played straight, from a fresh copy.
    afresh(db, tmp_path / "straight.db")
    (tmp_path / "plain").mkdir()
    expected = run(league_file(tmp_path / "plain"), tmp_path / "straight.db")
    assert expected.returncode == 0, expected.stderr
    kept = finished(db)
    assert 2 <= kept < json.loads(expected.stdout)["matches_total"]
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        recorded = [row[0] for row in connection.execute("SELECT log_path FROM matches")]
    for path in recorded:  # every recorded match has its whole log, and it replays
        verify_log(Path(path))

    (log_disk / "filler").unlink()
    resumed = run(config, db)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout) == json.loads(expected.stdout)
