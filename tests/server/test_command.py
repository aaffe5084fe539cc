"""``newmarket serve`` from the organiser's shell: management words and one-line failures."""

from __future__ import annotations

import socket
import sqlite3
import subprocess
from pathlib import Path

import pytest

from referee.server.store import CompetitionStore
from tests.clirun import newmarket
from tests.server.serving import NEWMARKET, REPO


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*NEWMARKET, "serve", *args], capture_output=True, text=True, cwd=REPO, timeout=120
    )


def test_add_participant_pause_and_resume_write_the_database(tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text('[competition]\nname = "Cup"\n')
    added = run("add-participant", "alice", "-c", str(config))
    assert added.returncode == 0 and "'alice' added" in added.stderr
    token = added.stdout.strip()
    assert run("pause", "-c", str(config)).returncode == 0
    store = CompetitionStore.open(tmp_path / "cup-data" / "competition.sqlite")
    participant = store.participant_by_token(token)
    assert participant is not None and participant.name == "alice"
    assert store.paused
    assert run("resume", "-c", str(config)).returncode == 0
    assert not store.paused
    store.close()
    again = run("add-participant", "alice", "-c", str(config))
    assert again.returncode == 2 and again.stderr.strip() == (
        "error: participant name 'alice' is taken"
    )


def test_failures_are_one_line(tmp_path: Path) -> None:
    missing = run(str(tmp_path / "nope.toml"))
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'nope.toml'}: cannot read: No such file or directory"
    ]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = tmp_path / "cup.toml"
        config.write_text(f'[competition]\nname = "Cup"\n[server]\nport = {port}\n')
        busy = run(str(config))
    assert busy.returncode == 1
    assert busy.stderr.strip().splitlines()[-1] == (
        f"error: Address already in use (serving 127.0.0.1:{port})"
    )


def test_a_management_command_that_meets_a_locked_database_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server writing for longer than the command's busy timeout: before, a traceback.
    config = tmp_path / "cup.toml"
    config.write_text('[competition]\nname = "Cup"\n')

    def locked(_store: CompetitionStore, _paused: bool) -> None:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(CompetitionStore, "set_paused", locked)
    code, out, err = newmarket("serve", "pause", "-c", str(config))
    database = tmp_path / "cup-data" / "competition.sqlite"
    assert (code, out) == (2, "")
    assert err == (
        f"error: {database}: database is locked (the server, or sqlite3 with a transaction "
        "open, holds it?); nothing was changed: try again\n"
    )
