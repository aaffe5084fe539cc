"""A full disk on the server is the server's problem, never held against an upload.

The error is injected where the server writes (a file created while unpacking,
the fsync of the upload's bytes), as a full disk raises it: ``OSError(ENOSPC)``.
"""

from __future__ import annotations

import errno
import io
import os
import sqlite3
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from starlette.datastructures import UploadFile

from referee.server import busy, play, uploads
from referee.server.store import CompetitionStore
from tests.server.inprocess import api_upload, open_competition

DISK_FULL = "the server could not store this upload: disk full; try again later"


def _zipped_bot() -> UploadFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("main.py", "print('hello')\n")
    buffer.seek(0)
    return UploadFile(file=buffer, filename="bot.zip")


def _full_disk_on_create(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """``os.open`` of a new file fails as on a full disk; returns how to free the disk."""
    real_open = os.open
    full = True

    def open_on_a_full_disk(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if full and flags & os.O_CREAT and flags & os.O_EXCL:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real_open(path, flags, *args, **kwargs)

    def free() -> None:
        nonlocal full
        full = False

    monkeypatch.setattr(os, "open", open_on_a_full_disk)
    return free


async def test_a_full_disk_unpacking_an_upload_is_the_servers_507_not_a_rejection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A zip's members are written inside zipfile's error handling, where an OSError is a
    # damaged archive's: a full disk made the version "rejected: cannot be read".
    competition = open_competition(tmp_path)
    store = competition.store
    alice, _token = store.add_participant("alice")
    free_the_disk = _full_disk_on_create(monkeypatch)
    with pytest.raises(uploads.UploadRefusedError) as refused:
        await uploads.accept_upload(competition, alice, _zipped_bot(), "python3")
    assert (refused.value.status, refused.value.reason) == (507, DISK_FULL)
    assert refused.value.headers == {"Retry-After": str(uploads.STORAGE_RETRY_AFTER)}
    # Nothing held against alice: no version (rejected or not), no upload this hour.
    assert store.versions(alice.id) == []
    assert store.uploads_since(alice.id, 0) == 0
    assert list(competition.config.uploads_dir.iterdir()) == []
    assert list(uploads.incoming_dir(competition.config).iterdir()) == []

    free_the_disk()
    version = await uploads.accept_upload(competition, alice, _zipped_bot(), "python3")
    assert (version.number, version.status) == (1, "pending")
    store.close()


async def test_a_full_disk_writing_the_upload_itself_answers_507_with_retry_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: the OSError escaped the request, a 500 and a traceback.
    competition = open_competition(tmp_path)
    store = competition.store
    alice, token = store.add_participant("alice")

    def fsync_on_a_full_disk(_fd: int) -> None:
        raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))

    monkeypatch.setattr(os, "fsync", fsync_on_a_full_disk)
    sent = await api_upload(competition, token)
    assert sent.status_code == 507
    assert sent.json() == {"error": DISK_FULL.replace("disk full", "disk quota exceeded")}
    assert sent.headers["Retry-After"] == str(uploads.STORAGE_RETRY_AFTER)
    assert store.versions(alice.id) == []
    assert list(uploads.incoming_dir(competition.config).iterdir()) == []
    store.close()


async def test_a_full_disk_at_admission_leaves_the_version_pending_and_retries(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    autojump_clock: trio.testing.MockClock,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A restart unpacks a version its upload request had not finished: on a full disk
    # that was "rejected ... (a server bug, not yours)", for good.
    competition = open_competition(tmp_path)
    store = competition.store
    alice, _token = store.add_participant("alice")
    version = store.add_version(alice.id, "python3", "main.py", "", 15)
    root = uploads.version_root(competition, version.id)
    root.mkdir(parents=True)
    (root / "upload").write_bytes(b"print('hello')\n")
    admitted: list[int] = []

    async def admit(_config: object, the_store: CompetitionStore, found: object) -> bool:
        admitted.append(getattr(found, "id", 0))
        the_store.decide(admitted[-1], "admitted", "ok", "", {"name": "v", "command": ["x"]})
        return True

    monkeypatch.setattr(play, "admit", admit)
    free_the_disk = _full_disk_on_create(monkeypatch)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(play.admission_loop, competition)
        while not competition.status.startswith("admission waits"):
            await competition.changed.wait()
        pending = store.version(version.id)
        assert pending is not None and pending.status == "pending" and admitted == []
        assert competition.status == "admission waits: disk full"
        assert f"admission of version {version.id} waits" in capsys.readouterr().err
        free_the_disk()
        waited_from = trio.current_time()
        while not admitted:
            await competition.changed.wait()
        assert trio.current_time() - waited_from >= play.STORAGE_WAIT * 0.9  # not at once
        nursery.cancel_scope.cancel()
    decided = store.version(version.id)
    assert decided is not None and decided.status == "admitted"
    assert admitted == [version.id]
    store.close()


async def test_a_full_disk_under_the_database_is_a_507_for_a_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SQLite's own "database or disk is full" (SQLITE_FULL): a 500 before.
    competition = open_competition(tmp_path)
    store = competition.store
    _alice, token = store.add_participant("alice")

    def add_version_on_a_full_disk(*_args: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(store, "add_version", add_version_on_a_full_disk)
    sent = await api_upload(competition, token)
    assert sent.status_code == 507
    assert sent.json() == {"error": busy.DISK_FULL_REASON}
    assert sent.headers["Retry-After"] == str(uploads.STORAGE_RETRY_AFTER)
    assert list(uploads.incoming_dir(competition.config).iterdir()) == []
    store.close()


async def test_a_finished_match_waits_for_room_in_the_database(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, capsys: pytest.CaptureFixture[str]
) -> None:
    stored: list[str] = []
    full = [True]

    def record() -> str:
        if full[0]:
            raise sqlite3.OperationalError("database or disk is full")
        stored.append("g1r0")
        return "g1r0"

    async def free_the_disk_later() -> None:
        await trio.sleep(10)
        full[0] = False

    async with trio.open_nursery() as nursery:
        nursery.start_soon(free_the_disk_later)
        assert await busy.written("recording match g1r0", record) == "g1r0"
    assert stored == ["g1r0"]
    assert capsys.readouterr().err.startswith(
        "newmarket serve: the disk is full (the database cannot grow) while recording match "
        "g1r0; trying again in 0.5 s\n"
    )
