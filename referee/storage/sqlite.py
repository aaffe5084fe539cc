"""How every newmarket database is opened, locked and checked: the league's and the server's.

Both keep their one durable record in SQLite and want the same from it: WAL
journaling (readers never block the writer), ``synchronous=FULL`` (a committed
result survives a power cut), one writer process at a time (an ``flock`` on a
lock file beside the database, since SQLite's own locks would let two run),
and a damaged file found when it is opened, not at the first bad row.  Each
failure is one ``StoreError`` line naming the file; ``what`` and ``advice``
let each caller name its own database and say what to do.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from pathlib import Path

from referee.storage.private_files import create_private, private_dir, private_opener

__all__ = ["StoreError", "connect", "damaged", "lock_for_writing", "quick_check"]


class StoreError(Exception):
    """A database cannot be used; the message says why, on one line."""


def connect(
    path: Path,
    *,
    readonly: bool,
    what: str,
    autocommit: bool = False,
    any_thread: bool = False,
) -> sqlite3.Connection:
    """A connection set up as every newmarket database wants it; ``StoreError`` if it cannot.

    A writer's connection is in WAL mode (readers never block it, nor it them)
    with ``synchronous=FULL`` (a committed match survives a power cut); ``what``
    names the database in the error.  ``autocommit`` leaves transactions to the
    caller (``BEGIN IMMEDIATE``); ``any_thread`` lets a trio program use it from
    its worker threads.
    """
    try:
        if readonly:
            uri = f"{path.resolve().as_uri()}?mode=ro"
            connection = sqlite3.connect(uri, uri=True, check_same_thread=not any_thread)
        else:
            private_dir(path.parent)
            create_private(path)  # SQLite gives its -wal and -shm files the database's mode
            connection = sqlite3.connect(path, check_same_thread=not any_thread)
        if autocommit:
            connection.isolation_level = None
        # The timeout first: switching to WAL needs a moment's lock, and a reader
        # (`standings`, `report --watch`) mid-read must make it wait, not fail.
        connection.execute("PRAGMA busy_timeout = 10000")
        if not readonly:
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = FULL")
        connection.execute("PRAGMA foreign_keys = ON")
        # Probe: a file that is not SQLite fails here, not at the first real query.
        connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except (sqlite3.Error, OSError) as error:
        raise StoreError(f"{path}: cannot open the {what}: {error}") from None
    return connection


def lock_for_writing(path: Path, holder_is: str, rule: str) -> int:
    """An exclusive lock on ``<db>.lock`` (its descriptor), or ``StoreError`` naming who has it.

    The lock file holds the holder's pid, so the refusal names the process:
    ``already in use by <holder_is> <pid> (lock <file>); <rule>``.  The kernel
    drops the lock with the process, so a ``kill -9`` never leaves a stale one.
    """
    lock_path = path.with_name(path.name + ".lock")
    try:
        private_dir(path.parent)
        descriptor = private_opener(lock_path, os.O_RDWR | os.O_CREAT)
    except OSError as error:
        raise StoreError(f"{lock_path}: cannot open the lock file: {error.strerror}") from None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(descriptor, 32, 0).decode("ascii", "replace").strip() or "another"
        os.close(descriptor)
        raise StoreError(
            f"{path}: already in use by {holder_is} {holder} (lock {lock_path.name}); {rule}"
        ) from None
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)
    return descriptor


def quick_check(connection: sqlite3.Connection, path: Path, what: str, advice: str) -> None:
    """``StoreError`` if SQLite finds the file damaged (pages, indexes, free lists)."""
    try:
        rows = connection.execute("PRAGMA quick_check(3)").fetchall()
    except sqlite3.DatabaseError as error:
        raise damaged(path, error, what, advice) from None
    problems = [" ".join(str(row[0]).split()) for row in rows]  # a row may hold newlines
    if problems != ["ok"]:
        raise StoreError(f"{path}: damaged {what}: {'; '.join(problems)[:200]} ({advice})")


def damaged(path: Path, error: sqlite3.Error | str, what: str, advice: str) -> StoreError:
    """The one line for a damaged database: ``FILE: damaged WHAT: PROBLEM (ADVICE)``."""
    return StoreError(f"{path}: damaged {what}: {error} ({advice})")
