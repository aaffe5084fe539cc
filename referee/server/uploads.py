"""An upload becomes a version: limits, a durable copy, safe unpacking, then admission.

The order is what makes an upload durable and never overwritten:

1. the runtime must be allowed and the participant under ``per_hour``
   uploads in the last hour (HTTP 400 / 429 with one line);
2. the bytes are streamed to ``data/incoming`` in chunks, counted and cut off
   past ``max_kb`` (413), hashed, fsynced;
3. the version row is written (``pending``), and the file renamed to
   ``versions/<id>/upload`` (a new directory per version: nothing is ever
   overwritten), and the directory fsynced;
4. it is unpacked (``referee.server.unpack``) into ``versions/<id>/files``; a
   refused archive makes the version ``rejected`` at once with the reason
   (it still counts towards the hourly limit, so refusals cannot be spammed).

A full disk anywhere in 2 to 4 is the server's problem, not the upload's: the
participant is told so (507, "try again later"), and the version's row and
files are removed, so it counts neither as a refusal nor towards the limit.
So is a disk under the room the server keeps free (``[storage] min_free_mb``):
the upload is refused at once, 507.

Each participant's versions keep at most ``[storage] participant_mb`` on the
disk (``referee.server.quotas``): before 2, rejected versions' files make room,
oldest first; with too little left the upload is refused (413), and what is
left caps the unpacking in 4 (an archive expanding past it is refused there,
as a bomb is).

Admission (build and check) then happens in the background.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

import trio
from starlette.datastructures import UploadFile

from referee.server.competition import Competition
from referee.server.competition_db import Participant, Version
from referee.server.competition_file import REMOTE, CompetitionConfig
from referee.server.events import decide
from referee.server.operations import log_operation
from referee.server.organiser import refusal as organiser_refusal
from referee.server.phases import upload_refusal
from referee.server.quotas import ParticipantStorage
from referee.server.unpack import (
    Room,
    StorageError,
    UnpackError,
    fsync_parent,
    server_writes,
    unpack_upload,
)
from referee.storage.private_files import PRIVATE_DIR, PRIVATE_FILE, private_dir, private_opener

CHUNK = 64 * 1024
COMPLETE = ".unpacked"  # written in the version directory once files/ is whole


class UploadRefusedError(Exception):
    def __init__(self, status: int, reason: str, retry_after: int | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.retry_after = retry_after  # seconds, for a Retry-After header: the server's trouble

    @property
    def headers(self) -> dict[str, str]:
        return {} if self.retry_after is None else {"Retry-After": str(self.retry_after)}


STORAGE_RETRY_AFTER = 300  # seconds: long enough for an operator to free some disk
LOW_DISK_REASON = "the server is low on disk space and takes no uploads now; try again later"
MIN_ROOM = 64 * 1024  # a participant with less left than this cannot upload at all


def incoming_dir(config: CompetitionConfig) -> Path:
    """Where an upload's bytes are written before they have a version (step 2)."""
    return config.data / "incoming"


def clear_incoming(config: CompetitionConfig) -> int:
    """Remove what uploads cut short left in ``incoming/``; how many entries were removed.

    A request's ``finally`` removes its own temporary file, but a ``kill -9``
    of the server (or a power cut) mid-upload runs no ``finally``, and the
    bytes stayed for ever: a participant resending a 1 MiB upload after every
    crash filled the disk a megabyte at a time.  Called once at the start,
    under the server's lock (``lock_for_serving``): no other server is
    writing here, and no request of this one has begun, so everything in the
    directory is a leftover.
    """
    incoming = incoming_dir(config)
    removed = 0
    try:
        entries = list(incoming.iterdir())
    except FileNotFoundError:
        return 0
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed += 1
    return removed


def version_root(competition: Competition, version_id: int) -> Path:
    return competition.config.uploads_dir / f"{version_id:06d}"


def may_upload(competition: Competition, participant: Participant) -> None:
    """``UploadRefusedError`` if ``participant`` may upload nothing now, whatever it sends:
    disabled or banned, the contest's dates, the hourly limit.  Asked from the headers,
    before the body is read (after the freeze, a 1 MiB upload was read whole to be refused),
    and again before the version is written."""
    config = competition.config
    refused = organiser_refusal(competition.store, participant)  # disabled or banned
    if refused is not None:
        raise UploadRefusedError(403, refused)
    closed = upload_refusal(competition)  # the contest's dates (referee.server.phases)
    if closed is not None:
        raise UploadRefusedError(403, closed)
    recent = competition.store.uploads_since(participant.id, time.time() - 3600)
    if recent >= config.uploads.per_hour:
        raise UploadRefusedError(
            429, f"upload limit: {config.uploads.per_hour} uploads per hour; try again later"
        )


def _allowed(competition: Competition, participant: Participant, runtime: str) -> None:
    """The runtime must be allowed, and the participant allowed to upload (``may_upload``)."""
    config = competition.config
    may_upload(competition, participant)
    if runtime not in config.runtimes:
        allowed = ", ".join(config.runtimes)
        raise UploadRefusedError(400, f"runtime {runtime!r} is not allowed here ({allowed})")


def register_remote(competition: Competition, participant: Participant) -> Version:
    """A remote version: nothing uploaded; it is admitted by its first connection.

    It counts towards the hourly limit as an upload does.
    """
    _allowed(competition, participant, REMOTE)
    version = competition.store.add_version(participant.id, REMOTE, "", "", 0)
    competition.store.decide(version.id, "pending", "waiting for its first connection")
    assert competition.lobby is not None  # a [remote] section allows the runtime
    competition.lobby.register(version)
    competition.notify()
    log_operation(
        "upload", participant=participant.name, version=version.id, runtime=REMOTE, bytes=0
    )
    registered = competition.store.version(version.id)
    assert registered is not None
    return registered


async def accept_upload(
    competition: Competition, participant: Participant, upload: UploadFile, runtime: str
) -> Version:
    config = competition.config
    store = competition.store
    share, room = await _room_for(competition, participant, runtime)
    filename = (upload.filename or "upload")[:200]
    incoming = incoming_dir(config)
    private_dir(incoming)
    temporary = incoming / secrets.token_hex(8)
    version: Version | None = None
    try:
        size, digest = await _receive(upload, temporary, config.uploads.max_bytes)
        if size == 0:
            raise UploadRefusedError(400, "the upload is empty: send the bot's file as 'bot'")
        if size > room:
            raise UploadRefusedError(413, share.refusal(room))
        # Again, with no await between the count and the new row: uploads sent at once all
        # passed the first check while their bodies were read (spooled to disk above 1 MiB,
        # read in threads), and 50 at once made 50 versions under a limit of 3 an hour.
        _allowed(competition, participant, runtime)
        version = store.add_version(participant.id, runtime, filename, digest, size)
        # Before any await: admission must not take the version while this unpacks it.
        competition.unpacking.add(version.id)
        _move_in(temporary, version_root(competition, version.id))
        others = store.versions(participant.id)
        await trio.to_thread.run_sync(unpack_version, competition, version, others)
    except UnpackError as error:
        assert version is not None  # only unpack_version raises it
        decide(store, version.id, "rejected", f"upload: {error}")
        log_operation(
            "rejection",
            version=version.id,
            participant=participant.name,
            runtime=runtime,
            why=f"upload: {error}"[:300],
        )
        raise UploadRefusedError(400, f"upload refused: {error}") from None
    except StorageError as error:
        if version is not None:
            # Never stored whole: not a version of the participant's, nor one of its uploads
            # this hour.  Its directory goes first: a row without files would be unpacked
            # again by admission and rejected as cut short.
            shutil.rmtree(version_root(competition, version.id), ignore_errors=True)
            store.forget_version(version.id)
        status = 507 if error.what in ("disk full", "disk quota exceeded") else 503
        raise UploadRefusedError(status, error.reason, STORAGE_RETRY_AFTER) from None
    finally:
        temporary.unlink(missing_ok=True)
        if version is not None:
            competition.unpacking.discard(version.id)
            competition.notify()
    refreshed = store.version(version.id)
    assert refreshed is not None
    log_operation(
        "upload",
        participant=participant.name,
        version=refreshed.id,
        number=refreshed.number,
        runtime=runtime,
        bytes=size,
    )
    return refreshed


async def _room_for(
    competition: Competition, participant: Participant, runtime: str
) -> tuple[ParticipantStorage, int]:
    """Refusals before a byte is read: the runtime, the hourly limit, the disk, the share.

    Returns the participant's storage share and the bytes left in it.
    """
    config = competition.config
    store = competition.store
    if runtime == REMOTE:
        raise UploadRefusedError(400, "a remote bot is registered without a file")
    _allowed(competition, participant, runtime)
    if competition.disk.low():
        raise UploadRefusedError(507, LOW_DISK_REASON, STORAGE_RETRY_AFTER)
    share = ParticipantStorage(config, store)
    wanted = config.uploads.max_bytes + config.uploads.max_unpacked_bytes
    room = await trio.to_thread.run_sync(share.room, store.versions(participant.id), wanted)
    if room < MIN_ROOM:
        raise UploadRefusedError(413, share.refusal(room))
    return share, room


async def _receive(upload: UploadFile, temporary: Path, max_bytes: int) -> tuple[int, str]:
    """The upload's body written to ``temporary`` and synced; its size and SHA-256.

    A body over ``max_bytes`` is refused (413) as soon as it passes the limit.
    """
    digest = hashlib.sha256()
    size = 0
    with server_writes(), open(temporary, "wb", opener=private_opener) as out:
        while chunk := await upload.read(CHUNK):
            size += len(chunk)
            if size > max_bytes:
                raise UploadRefusedError(413, f"upload too large: at most {max_bytes // 1024} KiB")
            digest.update(chunk)
            out.write(chunk)
        out.flush()
        os.fsync(out.fileno())
    return size, digest.hexdigest()


def _move_in(temporary: Path, root: Path) -> None:
    """The received upload becomes the new version's ``upload``, durably."""
    with server_writes():
        private_dir(root.parent)
        root.mkdir(mode=PRIVATE_DIR)  # (not there yet: a version's id is new)
        temporary.rename(root / "upload")
        fsync_parent(root / "upload")
        fsync_parent(root)


def unpack_version(
    competition: Competition, version: Version, others: Sequence[Version] = ()
) -> Path:
    """Unpack a version's stored upload into ``files/`` (again, if a crash cut it short).

    ``others``: the participant's other versions (read on the trio thread: this runs in a
    worker thread), whose files with this upload leave the room the unpacking may use.
    """
    root = version_root(competition, version.id)
    files = root / "files"
    if (root / COMPLETE).exists():
        return files
    if not (root / "upload").is_file():
        # A kill between the version's row and the rename of its bytes (step 3): they are
        # lost with the request, which was never answered, and only the owner has them.
        raise UnpackError("the server stopped before this upload was stored; upload it again")
    shutil.rmtree(files, ignore_errors=True)
    share = ParticipantStorage(competition.config, competition.store)
    mine = [other for other in others if other.id != version.id]
    left = share.room([*mine, version], competition.config.uploads.max_unpacked_bytes)
    try:
        unpack_upload(
            root / "upload",
            version.filename,
            files,
            competition.config.uploads,
            executable=version.runtime == "binary",
            room=Room(left, share.over(left)),
        )
        with server_writes():
            (root / COMPLETE).touch(mode=PRIVATE_FILE)
            fsync_parent(root / COMPLETE)
    except (UnpackError, StorageError):  # whatever the bytes raised, or a full disk
        shutil.rmtree(files, ignore_errors=True)
        raise
    return files
