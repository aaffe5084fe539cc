"""``newmarket serve`` from the organiser's shell: management words and one-line failures."""

from __future__ import annotations

import socket
import sqlite3
import subprocess
from pathlib import Path

import pytest

from referee.server.competition_db import CompetitionStore
from tests.clirun import newmarket
from tests.server.serving import NEWMARKET, REPO


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """``newmarket serve ARGS...`` as the console script runs it, in this process: each
    management word costs no Python start-up and import of the server (seconds apiece on a
    loaded machine).  Serving itself is ``serve_process``'s."""
    code, out, err = newmarket("serve", *args)
    return subprocess.CompletedProcess(["newmarket", "serve", *args], code, out, err)


def serve_process(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*NEWMARKET, "serve", *args], capture_output=True, text=True, cwd=REPO, timeout=120
    )


def test_add_participant_pause_and_resume_write_the_database(tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text('[competition]\nname = "Cup"\n')
    added = run("add-participant", "alice", str(config))
    assert added.returncode == 0 and "'alice' added" in added.stderr
    token = added.stdout.strip()
    assert run("pause", str(config)).returncode == 0
    store = CompetitionStore.open(tmp_path / "cup-data" / "competition.sqlite")
    participant = store.participant_by_token(token)
    assert participant is not None and participant.name == "alice"
    assert store.paused
    assert run("resume", str(config)).returncode == 0
    assert not store.paused
    store.close()
    again = run("add-participant", "alice", str(config))
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
        busy = serve_process(str(config))
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
    code, out, err = newmarket("serve", "pause", str(config))
    database = tmp_path / "cup-data" / "competition.sqlite"
    assert (code, out) == (2, "")
    assert err == (
        f"error: {database}: database is locked (the server, or sqlite3 with a transaction "
        "open, holds it?); nothing was changed: try again\n"
    )


def test_unsuspend_admits_a_suspended_version_again_and_flags_lists_why(tmp_path: Path) -> None:
    # A suspension used to be for good: a version suspended for the platform's fault (a
    # full disk) stayed out after the disk was grown, and nothing could lift it.
    config = tmp_path / "cup.toml"
    config.write_text('[competition]\nname = "Cup"\n')
    store = CompetitionStore.open(tmp_path / "cup-data" / "competition.sqlite")
    alice, _token = store.add_participant("alice")
    mallory, _token = store.add_participant("mallory")
    fine = store.add_version(alice.id, "python3", "main.py", "", 1)
    store.decide(fine.id, "admitted", "ok", "", {"name": "a", "command": ["x"]})
    bad = store.add_version(mallory.id, "python3", "main.py", "", 1)
    store.decide(bad.id, "admitted", "ok", "", {"name": "m", "command": ["x"]})
    crashed = "its table worker ended (exited with status 1)"
    evidence = [{"match": match, "what": crashed} for match in ("g1r0", "g1r0", "g4r2")]
    store.suspend(bad.id, "its table's referee process failed 3 times in a row", evidence)
    faults = [{"match": "g7r1", "faults": 2}, {"match": "g6r0", "faults": 0}]
    store.flag(fine.id, "alice v1 faulted in 9 of its last 12 matches", faults)
    store.close()

    listed = run("flags", str(config))
    assert listed.returncode == 0
    assert listed.stdout.splitlines() == [
        f"suspended  mallory v1 (version {bad.id}): its table's referee process failed 3 "
        "times in a row",
        "             g1r0: its table worker ended (exited with status 1)",
        "             g1r0: its table worker ended (exited with status 1)",
        "             g4r2: its table worker ended (exited with status 1)",
        f"flagged    alice v1 (version {fine.id}): alice v1 faulted in 9 of its last 12 matches",
        "             matches with faults: g7r1",
    ]
    # What the organiser may type, each refused in one line that says what would work.
    wrong = run("unsuspend", "alice", str(config))
    assert wrong.returncode == 2 and wrong.stderr.strip() == (
        "error: serve unsuspend: nothing of 'alice' is suspended (alice v1 admitted); "
        f"newmarket serve flags {config} lists what is"
    )
    unknown = run("unsuspend", "nobody", str(config))
    assert unknown.stderr.strip() == (
        "error: serve unsuspend: 'nobody' is neither a version id nor a participant's name"
    )
    backwards = run(str(config), "unsuspend", "mallory")
    assert backwards.returncode == 2 and backwards.stderr.strip() == (
        f"error: serve: the action comes first: newmarket serve unsuspend mallory {config}"
    )

    lifted = run("unsuspend", "mallory", str(config))
    assert lifted.returncode == 0
    assert lifted.stderr.strip() == f"mallory v1 (version {bad.id}): admitted again"
    store = CompetitionStore.open(tmp_path / "cup-data" / "competition.sqlite")
    version = store.version(bad.id)
    assert version is not None and version.status == "admitted"
    assert version.spec == {"name": "m", "command": ["x"]}  # it can be seated again
    (suspension,) = store.suspensions(bad.id)
    assert suspension["lifted_by"] == "newmarket serve unsuspend"
    assert [v.id for v in store.playing_versions()] == [fine.id, bad.id]
    store.close()
    assert run("unsuspend", str(bad.id), str(config)).returncode == 2  # not twice


def test_every_management_word_is_in_the_serve_help_and_the_server_docs() -> None:
    # The words are registered in one place; the help is made from it and the docs keep up.
    from referee.commands.serve_actions import ACTIONS

    _code, help_text, _err = newmarket("serve", "--help")
    page = (Path(__file__).resolve().parents[2] / "docs" / "server.md").read_text()
    flat_help = " ".join(help_text.replace("│", " ").split())
    for word in ACTIONS.values():
        assert word.usage in flat_help, word.usage
        assert f"`newmarket serve {word.usage} COMPETITION.toml`" in page, word.usage
