"""Before a league starts: can it write its database and its logs?

A league runs for hours; finding out at the first finished match that its
database sits under a file, on a read-only mount or on a full disk wastes
the night.  ``check_writable`` tries, for each place the league writes, what
the league will do there (make the directory, write and sync a file of a
realistic size, remove it), so the answer is the file system's, not a guess
from permission bits (which do not stop root, and say nothing of a full or
read-only disk).  Every problem is one line naming what and where.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from referee.private_files import private_dir

PROBE_BYTES = 256 * 1024  # a few matches' logs and database pages: room to start at all


class PreflightError(Exception):
    """The league cannot write somewhere it must; the message is one line naming what and where."""


def check_writable(what: str, directory: Path) -> None:
    """Make ``directory`` if needed and write, sync and remove a probe file in it."""
    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        raise PreflightError(f"{what} {directory}: {existing} is a file, not a directory")
    try:
        private_dir(directory)
    except OSError as error:
        raise PreflightError(
            f"{what} {directory}: cannot create the directory: {_reason(error)}"
        ) from None
    probe: str | None = None
    try:
        handle, probe = tempfile.mkstemp(prefix=".newmarket-probe-", dir=directory)
        with os.fdopen(handle, "wb") as file:
            file.write(b"\0" * PROBE_BYTES)
            file.flush()
            os.fsync(file.fileno())
    except OSError as error:
        raise PreflightError(f"{what} {directory}: cannot write there: {_reason(error)}") from None
    finally:
        if probe is not None:
            Path(probe).unlink(missing_ok=True)


def check_league_paths(db: Path, logs: Path | None) -> None:
    """The database's directory and the log directory (None: no logs) are writable."""
    check_writable("database directory", db.absolute().parent)
    if db.exists() and not db.is_file():
        raise PreflightError(f"database {db}: is not a file")
    if logs is not None:
        check_writable("log directory", logs.absolute())


def _reason(error: OSError) -> str:
    return error.strerror or str(error)
