"""A line file rotated by size: ``operations.log``, then ``operations.log.1`` (the newest
old one) up to ``operations.log.N`` (the oldest kept).

The operations log (``referee.server.operations``) is appended to by the
server and by every management command, which are other processes, for as
long as the competition runs: without a bound it grows by every upload,
pass and action for weeks.  ``append`` writes one line and, when the file
has reached its size, first renames it to ``.1`` (the older ones move up one,
the oldest beyond ``keep`` is removed).  Writers and readers take a lock file
beside the log (``operations.log.lock``: ``flock``, exclusive to write,
shared to read), so no line is written into a file being renamed, and a
reader never sees a file twice or misses one while the files move up.

A line is never cut by a rotation: a line goes whole into the file it was
written to.  What rotation drops is the oldest file, whole, and the caller
says so in the first line of the new file (``on_rotate``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from referee.storage.private_files import private_opener

LOCK_SUFFIX = ".lock"


@dataclasses.dataclass(frozen=True)
class Rotated:
    """What one rotation did: the bytes moved to ``.1``, the oldest file's bytes removed."""

    rotated_bytes: int
    dropped_bytes: int  # 0: fewer than ``keep`` old files, nothing removed
    kept_files: int  # old files after the rotation


@contextlib.contextmanager
def locked(path: Path, *, exclusive: bool) -> Iterator[None]:
    """Hold the lock of the rotated file ``path`` (exclusive to write, shared to read)."""
    fd = private_opener(str(path) + LOCK_SUFFIX, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def append(
    path: Path,
    line: bytes,
    max_bytes: int,
    keep: int,
    on_rotate: Callable[[Rotated], bytes] | None = None,
) -> Rotated | None:
    """Append ``line`` to ``path``, rotating first if it would pass ``max_bytes``.

    ``on_rotate`` gives the line that starts the new file.  Raises ``OSError`` as
    ``os.write`` would (the caller decides what a full disk means).
    """
    with locked(path, exclusive=True):
        rotated = None
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            size = 0
        if max_bytes > 0 and size > 0 and size + len(line) > max_bytes:
            rotated = _rotate(path, keep)
            if on_rotate is not None:
                line = on_rotate(rotated) + line
        # One write of whole lines with O_APPEND, under the lock: never two writers in a line.
        fd = private_opener(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
        return rotated


def _rotate(path: Path, keep: int) -> Rotated:
    """``path`` becomes ``path.1``, each ``path.i`` becomes ``path.i+1``; past ``keep``, gone."""
    keep = max(1, keep)
    dropped = 0
    for old in old_files(path):
        if _number(old, path) >= keep:
            with contextlib.suppress(FileNotFoundError):
                dropped += old.stat().st_size
                old.unlink()
    for number in range(keep - 1, 0, -1):
        older = _numbered(path, number)
        if older.exists():
            older.rename(_numbered(path, number + 1))
    rotated = path.stat().st_size
    path.rename(_numbered(path, 1))
    kept = len(old_files(path))
    return Rotated(rotated, dropped, kept)


def old_files(path: Path) -> list[Path]:
    """The rotated files of ``path`` that exist, oldest first (``path.N`` ... ``path.1``)."""
    pattern = re.compile(re.escape(path.name) + r"\.([0-9]{1,4})")
    found = []
    try:
        names = os.listdir(path.parent)
    except FileNotFoundError:
        return []
    for name in names:
        if pattern.fullmatch(name):
            found.append(path.parent / name)
    return sorted(found, key=lambda old: -_number(old, path))


def read_lines(
    path: Path, last: int | None = None, counts: Callable[[str], bool] = bool
) -> list[str]:
    """The lines of ``path`` and its rotated files, oldest first, read under the lock: all,
    or enough of the newest files to hold the last ``last`` lines that ``counts``."""
    if not path.parent.is_dir():
        return []
    try:
        with locked(path, exclusive=False):
            return _lines(path, last, counts)
    except PermissionError:  # a reader that may not make the lock file (a read-only copy)
        return _lines(path, last, counts)


def _lines(path: Path, last: int | None, counts: Callable[[str], bool]) -> list[str]:
    parts: list[list[str]] = []
    counted = 0
    for part in [path, *reversed(old_files(path))]:  # the newest first
        try:
            text = part.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            continue
        lines = text.splitlines()
        parts.append(lines)
        if last is not None:
            counted += sum(1 for line in lines if counts(line))
            if counted >= last:
                break
    return [line for lines in reversed(parts) for line in lines]


def stored_bytes(path: Path) -> int:
    """The bytes of ``path`` and its rotated files."""
    total = 0
    for part in [*old_files(path), path]:
        with contextlib.suppress(FileNotFoundError):
            total += part.stat().st_size
    return total


def _numbered(path: Path, number: int) -> Path:
    return path.with_name(f"{path.name}.{number}")


def _number(old: Path, path: Path) -> int:
    return int(old.name[len(path.name) + 1 :])
