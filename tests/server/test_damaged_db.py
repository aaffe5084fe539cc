"""The competition's database damaged, misplaced or out of reach: one line, never a traceback.

The server and each management word (``pause``, ``add-participant``,
``revoke-sessions``) on a copy of a small competition's database damaged
one way.  Each prints one ``error:`` line naming the file and the problem,
exits non-zero, and writes nothing into the file.  The server is always a
real ``newmarket serve`` process, as the organiser starts it; for each kind of
damage the management words run through the console script's own entry point
in this process (``tests/clirun.py``: the same exit code and stderr, without a
Python start-up of a second each), and the tests of a locked, unwritable or
read-only database run every word as a real process.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from referee.server.competition_db import CompetitionStore
from referee.server.competition_file import load_config
from tests.clirun import newmarket
from tests.server.serving import REPO

NEWMARKET = [sys.executable, "-m", "referee.cli", "serve"]
COMMANDS = (("CUP",), ("pause", "CUP"), ("add-participant", "zed", "CUP"))
EVERY = (*COMMANDS, ("revoke-sessions", "alice", "CUP"))
NOBODY = 65534


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A competition's directory: its file and a database with participants (checkpointed)."""
    directory = tmp_path_factory.mktemp("cup")
    config = directory / "cup.toml"
    config.write_text('[competition]\nname = "Cup"\nhouse_bots = []\n[server]\nport = 0\n')
    database = load_config(config).database
    store = CompetitionStore.open(database)
    for name in ("alice", *(f"p{n}" for n in range(300))):  # several pages of rows
        store.add_participant(name)
    store.close()
    with sqlite3.connect(database) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return directory


def copy(source: Path, into: Path) -> tuple[Path, Path]:
    """The competition copied into ``into``: its file and its database."""
    shutil.copytree(source, into, dirs_exist_ok=True)
    config = into / "cup.toml"
    return config, load_config(config).database


def started(
    config: Path, commands: tuple[tuple[str, ...], ...], wrap: tuple[str, ...] = ()
) -> list[subprocess.Popen[str]]:
    """Each command on ``config`` started, side by side (each stops at opening the database)."""
    return [
        subprocess.Popen(
            [*wrap, *NEWMARKET, *(str(config) if word == "CUP" else word for word in command)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for command in commands
    ]


def finished(running: list[subprocess.Popen[str]]) -> list[subprocess.CompletedProcess[str]]:
    done = []
    for process in running:
        try:
            out, err = process.communicate(timeout=120)
        finally:
            process.kill()
        done.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    return done


def run_all(
    config: Path, commands: tuple[tuple[str, ...], ...], wrap: tuple[str, ...] = ()
) -> list[subprocess.CompletedProcess[str]]:
    """Each command on ``config``, side by side, to its end."""
    return finished(started(config, commands, wrap))


def in_process(config: Path, command: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """A management word run as the console script runs it, in this process."""
    args = ["serve", *(str(config) if word == "CUP" else word for word in command)]
    code, out, err = newmarket(*args)
    return subprocess.CompletedProcess(args, code, out, err)


def one_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode not in (0, None), (done.args, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    return errors[0]


def truncated(db: Path) -> None:
    os.truncate(db, db.stat().st_size // 2)


def zero_header(db: Path) -> None:
    with db.open("r+b") as file:
        file.write(bytes(100))


def not_sqlite(db: Path) -> None:
    db.write_bytes(b"this is not a database\n" * 400)


def index_page(db: Path) -> None:
    with sqlite3.connect(db) as raw:
        (page_size,) = raw.execute("PRAGMA page_size").fetchone()
        (root,) = raw.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_participants_1'"
        ).fetchone()
    with db.open("r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(b"\xff" * page_size)


def newer_schema(db: Path) -> None:
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")


def another_programs(db: Path) -> None:
    db.unlink()
    with sqlite3.connect(db) as raw:
        raw.executescript("CREATE TABLE rounds (x); CREATE TABLE bots (y);")


def missing_table(db: Path) -> None:
    with sqlite3.connect(db) as raw:
        raw.execute("DROP TABLE versions")


def wrong_shape(db: Path) -> None:
    with sqlite3.connect(db) as raw:
        raw.executescript(
            "PRAGMA foreign_keys = OFF; DROP TABLE participants;"
            "CREATE TABLE participants (id INTEGER PRIMARY KEY, nom TEXT);"
        )


def a_directory(db: Path) -> None:
    db.unlink()
    db.mkdir()


def data_is_a_file(db: Path) -> None:
    shutil.rmtree(db.parent)
    db.parent.write_text("a file where the data directory should be\n")


def wal_without_database(db: Path) -> None:
    with sqlite3.connect(db) as raw:  # a log with frames in it, as a running server leaves
        raw.execute("PRAGMA journal_mode = WAL")
        raw.execute("PRAGMA wal_autocheckpoint = 0")
        raw.execute("UPDATE participants SET created_at = 1")
        shutil.copy(db.with_name(db.name + "-wal"), db.parent / "kept-wal")
    db.with_name(db.name + "-wal").unlink(missing_ok=True)
    (db.parent / "kept-wal").rename(db.with_name(db.name + "-wal"))
    db.unlink()


CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "truncated": (truncated, "{db}: cannot open the competition database: database disk image"),
    "zero-header": (zero_header, "{db}: cannot open the competition database: file is not a"),
    "not-sqlite": (not_sqlite, "{db}: cannot open the competition database: file is not a"),
    "index-page": (index_page, "{db}: damaged competition database: "),
    "newer-schema": (newer_schema, "{db}: schema 7; this server reads 1"),
    "another-programs": (another_programs, "{db}: not a competition database: it holds other"),
    "missing-table": (missing_table, "{db}: damaged competition database: table versions is"),
    "wrong-shape": (wrong_shape, "{db}: damaged competition database: table participants has"),
    "directory": (a_directory, "{db}: a directory where the competition database file should"),
    "data-is-a-file": (data_is_a_file, "{dir}: not a directory, so it cannot hold the"),
    "wal-alone": (wal_without_database, "{db}: missing, but its write-ahead log"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_damaged_database_is_one_line_from_serve_and_every_management_word(
    tmp_path: Path, source: Path, case: str
) -> None:
    damage, expected = CASES[case]
    config, db = copy(source, tmp_path)
    damage(db)
    before = tables(db)
    server = started(config, EVERY[:1])  # the words run while the server process starts
    try:
        words = [in_process(config, word) for word in EVERY[1:]]
    finally:
        done_all = finished(server)
    done_all += words
    for done in done_all:
        line = one_error(done)
        assert line.startswith("error: " + expected.format(db=db, dir=db.parent)), (
            done.args,
            line,
        )
    assert tables(db) == before  # nothing made in it: no schema in another program's file


def tables(db: Path) -> list[str] | None:
    """The tables of a file SQLite can read, else None."""
    try:
        with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as raw:
            return sorted(name for (name,) in raw.execute("SELECT name FROM sqlite_master"))
    except sqlite3.Error:
        return None


def test_a_database_another_process_holds_locked_is_one_line(tmp_path: Path, source: Path) -> None:
    config, db = copy(source, tmp_path)
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")  # sqlite3 left open with a write transaction
        for done in run_all(config, COMMANDS):
            line = one_error(done)
            assert line.startswith(f"error: {db}: ") and "locked" in line, line
    finally:
        holder.close()


def test_a_bad_row_met_by_the_running_server_is_one_line(tmp_path: Path, source: Path) -> None:
    config, db = copy(source, tmp_path)
    with sqlite3.connect(db) as raw:  # a value no server writes: a version's spec cut short
        raw.execute(
            "INSERT INTO versions (participant, number, runtime, filename, sha256, size, status, "
            "spec, created_at) VALUES (1, 1, 'python3', 'main.py', '', 1, 'admitted', '{\"na', 0)"
        )
    (done,) = run_all(config, (("CUP",),))
    assert one_error(done).startswith(
        f"error: {db}: damaged competition database: version 1 holds a bad value"
    )


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A directory another user can reach (pytest's own are the owner's alone)."""
    directory = Path(tempfile.mkdtemp(prefix="newmarket-"))
    directory.chmod(0o755)
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def test_a_database_this_user_may_not_write_is_one_line(source: Path, shared_tmp: Path) -> None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run the server as another user")
    config, db = copy(source, shared_tmp)
    for path in (shared_tmp, db.parent):
        path.chmod(0o755)
    config.chmod(0o644)
    db.chmod(0o644)  # the owner's (root's) to write, the server runs as nobody
    wrap = ("setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups")
    probe = subprocess.run([*wrap, sys.executable, "-c", "import referee"], cwd=REPO, check=False)
    if probe.returncode != 0:
        pytest.skip("this machine's Python cannot run as another user")
    for done in run_all(config, EVERY, wrap):
        assert one_error(done) == f"error: {db}: no permission to read and write it"


def test_a_database_on_a_read_only_file_system_is_one_line(tmp_path: Path, source: Path) -> None:
    config, db = copy(source, tmp_path)
    mount = (
        f'mount --bind {tmp_path} {tmp_path} && mount -o remount,bind,ro {tmp_path} && exec "$@"'
    )
    wrap = ("unshare", "-rm", "sh", "-c", mount, "sh")
    probe = subprocess.run([*wrap, "true"], capture_output=True, check=False)
    if shutil.which("unshare") is None or probe.returncode != 0:
        pytest.skip("this machine cannot make a read-only mount (unshare -rm)")
    for done in run_all(config, EVERY, wrap):
        assert one_error(done) == f"error: {db}: on a read-only file system; the server writes here"
