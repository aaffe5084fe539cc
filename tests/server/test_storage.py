"""A full disk on the server is the server's problem, never held against an upload.

The error is injected where the server writes (a file created while unpacking,
the fsync of the upload's bytes), as a full disk raises it: ``OSError(ENOSPC)``.
"""

from __future__ import annotations

import errno
import io
import os
import re
import sqlite3
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from starlette.datastructures import UploadFile

from engine import preset
from referee.bots import BotSpec, resolve_bot
from referee.match.key import MatchKey
from referee.match.log import read_log
from referee.match.result import MatchResult
from referee.sandbox import Limits, setting_to_env
from referee.server import busy, play, uploads
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.operations import OperationsLog, set_operations_log
from referee.server.quotas import ParticipantStorage
from referee.server.worker_table import WorkerTable
from referee.transport.timecontrol import TimeControl
from tests.server.inprocess import api_upload, finished, open_competition

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
        said = capsys.readouterr().err  # the operations log's line
        assert f'platform-fault where=admission version={version.id} what="disk full"' in said
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


# ---------------------------------------------------------------- the room kept free

GIB = 1 << 30


class _Room:
    """An injected free-space reading: plenty, or none (``competition.disk.free``)."""

    def __init__(self) -> None:
        self.plenty = True

    def __call__(self, _path: Path) -> int:
        return 4 * GIB if self.plenty else 0


def _three_admitted(store: CompetitionStore) -> list[int]:
    versions = []
    for name in ("alice", "bob", "carol"):
        participant, _token = store.add_participant(name)
        version = store.add_version(participant.id, "python3", "main.py", "", 1)
        store.decide(version.id, "admitted", "ok", "", BotSpec(name, ("x",)).to_json())
        versions.append(version.id)
    return versions


class _SecondPerMatch:
    """A table whose every match takes a (virtual) second and ends level."""

    async def play(self, key: MatchKey, *_args: object) -> MatchResult:
        await trio.sleep(1)
        return finished(key.match_id, key.seed)

    async def aclose(self) -> None:
        pass


async def test_a_low_disk_pauses_play_between_matches_and_it_resumes_by_itself(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    _three_admitted(store)
    room = _Room()
    competition.disk.free = room
    queue = play.GroupQueue(competition)

    async def open_table(_number: int) -> play.Table:
        return _SecondPerMatch()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(play.table_loop, competition, queue, 1, open_table)
        await trio.sleep(5.5)
        assert competition.status == "playing"
        played = store.match_count()
        assert played >= 4
        room.plenty = False
        await trio.sleep(1)  # the match in progress ends; no other starts
        paused_at = store.match_count()
        await trio.sleep(600)
        assert store.match_count() == paused_at <= played + 1
        assert competition.status == (
            "paused: the server is low on disk space (under 1024 MiB free); "
            "play resumes by itself when there is room"
        )
        assert str(tmp_path) not in competition.status
        room.plenty = True
        await trio.sleep(play.POLL + 5)
        assert store.match_count() > paused_at
        assert competition.status == "playing"
        nursery.cancel_scope.cancel()
    assert {v.status for v in store.versions()} == {"admitted"}
    store.close()


async def test_a_low_disk_refuses_uploads_and_holds_admission_until_there_is_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, autojump_clock: trio.testing.MockClock
) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    alice, token = store.add_participant("alice")
    pending = store.add_version(alice.id, "python3", "main.py", "", 15)
    root = uploads.version_root(competition, pending.id)
    root.mkdir(parents=True)
    (root / "upload").write_bytes(b"print('hello')\n")
    room = _Room()
    room.plenty = False
    competition.disk.free = room
    sent = await api_upload(competition, token)
    assert (sent.status_code, sent.json()) == (507, {"error": uploads.LOW_DISK_REASON})
    assert sent.headers["Retry-After"] == str(uploads.STORAGE_RETRY_AFTER)
    assert [v.id for v in store.versions(alice.id)] == [pending.id]  # nothing kept

    admitted: list[int] = []

    async def admit(_config: object, the_store: CompetitionStore, found: object) -> bool:
        admitted.append(getattr(found, "id", 0))
        the_store.decide(admitted[-1], "admitted", "ok", "", {"name": "v", "command": ["x"]})
        return True

    monkeypatch.setattr(play, "admit", admit)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(play.admission_loop, competition)
        await trio.sleep(300)
        assert admitted == [] and competition.status.startswith("paused: the server is low")
        room.plenty = True
        waited_from = trio.current_time()
        # No deadline here: a virtual one would expire at once while the unpacking's
        # thread runs (the mock clock jumps whenever trio waits on nothing else).
        while not admitted:
            await competition.changed.wait()
        assert trio.current_time() - waited_from <= play.POLL + 1  # by itself, at its next look
        assert admitted == [pending.id]
        nursery.cancel_scope.cancel()
    store.close()


# ---------------------------------------------------------------- a participant's share


def _zip(members: dict[str, bytes]) -> UploadFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    buffer.seek(0)
    return UploadFile(file=buffer, filename="bot.zip")


def _capped_competition(tmp_path: Path, participant_mb: int) -> Competition:
    return open_competition(tmp_path, sections=f"[storage]\nparticipant_mb = {participant_mb}\n")


async def test_a_zip_bomb_stops_at_the_cap_with_one_line(tmp_path: Path) -> None:
    competition = _capped_competition(tmp_path, 256)
    store = competition.store
    alice, _token = store.add_participant("alice")
    bomb = _zip({"main.py": b"print(1)\n", "padding.bin": bytes(64 << 20)})  # 64 KiB sent
    with pytest.raises(uploads.UploadRefusedError) as refused:
        await uploads.accept_upload(competition, alice, bomb, "python3")
    assert (refused.value.status, refused.value.reason) == (
        400,
        "upload refused: 'padding.bin': expands beyond 16384 KiB (a decompression bomb?)",
    )
    (version,) = store.versions(alice.id)
    assert version.status == "rejected"
    root = uploads.version_root(competition, version.id)
    assert not (root / "files").exists()  # nothing of it unpacked is kept
    store.close()


async def test_a_participants_files_are_capped_rejected_ones_making_room_first(
    tmp_path: Path,
) -> None:
    competition = _capped_competition(tmp_path, 24)
    store = competition.store
    alice, _token = store.add_participant("alice")
    big = {"main.py": b"print(1)\n", "table.bin": bytes(12 << 20)}

    first = await uploads.accept_upload(competition, alice, _zip(big), "python3")
    store.decide(first.id, "admitted", "ok", "", {"name": "a", "command": ["x"]})
    # 12 MiB more does not fit in what is left of 24: stopped there, while written.
    with pytest.raises(uploads.UploadRefusedError) as refused:
        await uploads.accept_upload(competition, alice, _zip(big), "python3")
    assert refused.value.status == 400
    assert re.fullmatch(  # refused by the size the zip declares, before a byte is written
        r"upload refused: 'table.bin': expands beyond the \d+ KiB of storage you have left "
        r"\(each participant may keep 24 MiB\)",
        refused.value.reason,
    ), refused.value.reason
    second = await uploads.accept_upload(competition, alice, _zip({"main.py": b"2"}), "python3")
    store.decide(second.id, "admitted", "ok", "", {"name": "a", "command": ["x"]})
    rejected = await uploads.accept_upload(competition, alice, _zip({"x.txt": b"1"}), "python3")
    store.decide(rejected.id, "rejected", "build: no main.py")
    rejected_root = uploads.version_root(competition, rejected.id)
    (rejected_root / "files" / "x.txt").write_bytes(bytes(1 << 20))  # as a build might leave
    share = ParticipantStorage(competition.config, store)
    built = uploads.version_root(competition, second.id) / "files" / "build.bin"

    def leave(room: int) -> None:
        """Grow the admitted second version's files until ``room`` bytes are left."""
        used = share.used(store.versions(alice.id))
        size = built.stat().st_size if built.exists() else 0
        built.write_bytes(bytes(size + share.cap - used - room))

    leave(32 << 10)
    # A rejected version's files are the first to go when room is needed, with a line.
    said = io.StringIO()
    previous = set_operations_log(OperationsLog(stream=said))
    try:
        third = await uploads.accept_upload(competition, alice, _zip({"main.py": b"3"}), "python3")
    finally:
        set_operations_log(previous)
    assert third.status == "pending" and not rejected_root.exists()
    assert " retention what=version-files versions=1 freed_bytes=" in said.getvalue()
    assert 'why="room for an upload"' in said.getvalue()
    # With nothing rejected left to remove, an upload is refused in one line.
    leave(32 << 10)
    with pytest.raises(uploads.UploadRefusedError) as full:
        await uploads.accept_upload(competition, alice, _zip({"main.py": b"4"}), "python3")
    assert (full.value.status, full.value.reason) == (
        413,
        "storage limit: your versions keep 24.0 MiB of the 24 MiB each participant may keep "
        "(rejected versions' files are removed first; these are versions that may still "
        "play): ask the organiser",
    )
    assert [v.status for v in store.versions(alice.id)] == [
        "admitted",
        "rejected",
        "admitted",
        "rejected",
        "pending",
    ]
    # Another participant's share is their own.
    bob, _token = store.add_participant("bob")
    assert (await uploads.accept_upload(competition, bob, _zip(big), "python3")).status == "pending"
    store.close()


# ---------------------------------------------------------------- stderr

FLOOD = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "flood", "protocol": 1}), flush=True)
    elif message["type"] == "request":
        sys.stderr.write(("x" * 1023 + "\\n") * 256)  # 256 KiB a decision
        sys.stderr.flush()
        reply = {"type": "reply", "id": message["id"], "choice": message["default"]}
        print(json.dumps(reply), flush=True)
    elif message["type"] == "shutdown":
        break
"""


async def test_a_bot_flooding_stderr_keeps_at_most_the_cap_per_match(tmp_path: Path) -> None:
    # A legal bot writing a megabyte of stderr a match made the server's logs grow by
    # tens of gigabytes an hour: a 1 MiB head and tail per match, and again per process.
    (tmp_path / "flood.py").write_text(FLOOD)
    flood = BotSpec("mallory-v1", (sys.executable, "flood.py"), cwd=tmp_path)
    specs = {0: flood, 1: resolve_bot("random", "alice-v1"), 2: resolve_bot("lowest", "bob-v1")}
    cap = 4096
    logs = tmp_path / "logs"
    control = TimeControl(move_time=10.0, startup_time=30.0)
    table = await WorkerTable.start(control, logs, 1, setting_to_env("none", Limits()), cap)
    try:
        for group in (1, 2):  # two matches on the same processes (two deals)
            key = MatchKey(
                f"g{group}r0", group * 8, group, 1, 0, group, (0, 1, 2), (40,) * 3, group
            )
            rules = preset("boodle").with_options({"hand_limit": 3})
            await table.play(key, rules, specs, specs)
    finally:
        await table.aclose()
    for group in (1, 2):
        records = [record for _n, record in read_log(logs / f"g{group}r0.nmr")]
        (kept,) = [r for r in records if r["type"] == "stderr" and r["seat"] == 0]
        written = sum(1 for r in records if r["type"] == "request" and r["seat"] == 0)
        assert kept["bytes"] == written * (256 << 10)  # counted whole
        assert kept["dropped"] == kept["bytes"] - cap  # and only the cap kept
        marker = f"\n[... {kept['dropped']} bytes of stderr dropped ...]\n"
        assert marker in kept["text"]
        assert len(kept["text"].encode()) == cap + len(marker)
    assert sorted(path.name for path in logs.iterdir()) == ["g1r0.nmr", "g2r0.nmr"]
