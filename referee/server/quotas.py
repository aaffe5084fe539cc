"""The server's disk: room kept free under the data directory, and each participant's share.

Two limits, both from the competition file's ``[storage]`` section:

* **Free space.**  ``DiskSpace.low()`` is true while the file system holding
  the data directory has less than ``min_free_mb`` free.  The tables start
  no match, admission takes no version and uploads are refused (507) while
  it is; everything resumes by itself once there is room again.  A full disk
  is the platform's fault: it is never charged to a bot (``referee.server.failures``).
* **A participant's files.**  The uploads, unpacked files and build output
  of a participant's versions together stay under ``participant_mb``
  (``ParticipantStorage``).  Before an upload, the files of that
  participant's rejected versions are removed, oldest first, while room is
  needed (a rejected version never plays again; its row, reason and
  transcript stay); if still too little is left, the upload is refused with
  one line.  What room is left caps the upload's unpacking, so an archive
  that expands past it stops there.

``public_text`` takes the server's paths out of a line a page shows (a status,
a reason): the data directory's place is the operator's business.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from referee.server.competition_db import CompetitionStore, Version
from referee.server.competition_file import CompetitionConfig
from referee.server.operations import log_operation

MIB = 1 << 20


def free_bytes(path: Path) -> int:
    """Bytes an unprivileged writer can still use on the file system holding ``path``."""
    stats = os.statvfs(path)
    return stats.f_bavail * stats.f_frsize


@dataclasses.dataclass
class DiskSpace:
    """Whether every file system the server writes has the room it keeps free.

    ``paths``: the data directory and the places under it that an operator may
    mount elsewhere (the match logs, the versions); one that does not exist yet
    is measured where it will be made.  ``free`` is how the room is measured
    (``free_bytes``; a test injects its own).  A file system that cannot even
    be asked counts as low: the server cannot tell that a write would succeed.
    """

    paths: tuple[Path, ...]
    minimum: int
    free: Callable[[Path], int] = free_bytes

    def low(self) -> bool:
        try:
            return any(self.free(_existing(path)) < self.minimum for path in self.paths)
        except OSError:
            return True

    def status(self) -> str:
        """The public status line while low (no path: the directory is the operator's)."""
        return (
            f"paused: the server is low on disk space (under {self.minimum // MIB} MiB free); "
            "play resumes by itself when there is room"
        )


def _existing(path: Path) -> Path:
    """``path``, or its nearest ancestor that exists."""
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


def for_config(config: CompetitionConfig) -> DiskSpace:
    """The room kept free under a competition's data directory."""
    paths = (config.data, config.logs_dir, config.uploads_dir)
    return DiskSpace(paths, config.storage.min_free_bytes)


# An absolute path in a message: a slash after a start, a space, a quote or "(", then
# path characters.  Replaced by "…/" and its last part (a file name says what failed).
_PATH = re.compile(r"""(?:(?<=^)|(?<=[\s'"(=]))/(?:[^\s'"():]+/)*([^\s'"():/]*)""")


def public_text(text: str) -> str:
    """``text`` with every absolute path cut to its last part: ``…/g12r0.jsonl``."""
    return _PATH.sub(lambda match: f"…/{match.group(1)}", text)


def tree_bytes(root: Path) -> int:
    """The size of every file under ``root`` (0 if it is gone), as written: what a
    participant can predict from their files; links are not followed."""
    total = 0
    for directory, _dirs, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(directory, name)).st_size
            except OSError:
                continue
    return total


class StorageFullError(Exception):
    """A participant's files leave no room for this; the message is one line for them."""


@dataclasses.dataclass
class ParticipantStorage:
    """A participant's share of the disk: what their versions keep, and making room."""

    config: CompetitionConfig
    store: CompetitionStore

    @property
    def cap(self) -> int:
        return self.config.storage.participant_bytes

    def version_root(self, version_id: int) -> Path:
        return self.config.uploads_dir / f"{version_id:06d}"

    def used(self, versions: Iterable[Version]) -> int:
        """The bytes ``versions`` (a participant's) keep on the disk now."""
        return sum(tree_bytes(self.version_root(version.id)) for version in versions)

    def room(self, versions: Sequence[Version], wanted: int = 0) -> int:
        """The bytes left to the participant whose ``versions`` these are, after removing
        rejected versions' files, oldest first, while fewer than ``wanted`` are left.

        Walks directories: called in a worker thread, with the versions read before.
        """
        used = self.used(versions)
        for version in versions:
            if self.cap - used >= wanted:
                break
            if version.status != "rejected":
                continue
            root = self.version_root(version.id)
            kept = tree_bytes(root)
            if kept:
                shutil.rmtree(root, ignore_errors=True)
                freed = kept - tree_bytes(root)
                used -= freed
                # A prune, as retention's are: one line (``referee.server.version_files``).
                log_operation(
                    "retention",
                    what="version-files",
                    versions=1,
                    freed_bytes=freed,
                    why="room for an upload",
                )
        return max(0, self.cap - used)

    def refusal(self, room: int) -> str:
        """The one line refusing an upload when only ``room`` bytes are left."""
        return (
            f"storage limit: your versions keep {(self.cap - room) / MIB:.1f} MiB of the "
            f"{self.cap // MIB} MiB each participant may keep (rejected versions' files are "
            "removed first; these are versions that may still play): ask the organiser"
        )

    def over(self, room: int) -> str:
        """Why an upload's files were refused past the ``room`` that was left."""
        return (
            f"expands beyond the {room // 1024} KiB of storage you have left "
            f"(each participant may keep {self.cap // MIB} MiB)"
        )
