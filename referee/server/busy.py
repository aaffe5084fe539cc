"""SQLite's ``database is locked``: the server waits and writes again; it never crashes on it.

The server is the competition database's main writer, but not its only one:
``newmarket serve add-participant``, ``pause`` and ``resume`` write from
another process (and an operator may open the file in ``sqlite3``).  A
writer that holds its transaction past the server's busy timeout (10 s)
made the server's write raise ``sqlite3.OperationalError: database is
locked``, and in a background loop that ended the whole server, with the
finished match it was recording lost.

So the loops write through ``written``: on a locked database (or a full
disk, which the operator can also fix without a restart) it logs one line,
waits (0.5 s, doubling up to 30 s) and writes again, for as long as it
takes; every write it wraps is idempotent or refused twice by the store
(a match is recorded once).  A request that meets it answers 503 with
``Retry-After`` instead (``referee.server.app``): a participant can send
again, a loop cannot.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable
from typing import TypeVar

import trio

T = TypeVar("T")

FIRST_WAIT = 0.5  # seconds before the first retry
LONGEST_WAIT = 30.0  # the backoff's bound
RETRY_AFTER = 5  # seconds, told to a client whose request met a locked database
# Seconds a running server's write waits for another process's lock before ``written``
# backs off (a loop) or the request answers 503.  SQLite waits on the trio thread, so
# the whole server, web side included, waits with it: the start-up's 10 s per attempt
# froze every page that long.  Start-up itself keeps the 10 s (``run._serve``).
SERVING_LOCK_WAIT = 1.0
BUSY_REASON = "the server's database is busy (an organiser's command holds it); try again soon"
DISK_FULL_REASON = "the server could not store this: disk full; try again later"


def is_busy(error: BaseException) -> bool:
    """True for SQLite's "another connection holds the lock" errors, and only those."""
    if not isinstance(error, sqlite3.OperationalError):
        return False
    text = str(error)
    return "database is locked" in text or "database table is locked" in text


def is_disk_full(error: BaseException) -> bool:
    """True for SQLite's SQLITE_FULL: the disk (or ``max_page_count``) has no room."""
    return isinstance(error, sqlite3.OperationalError) and "database or disk is full" in str(error)


async def written(what: str, write: Callable[[], T]) -> T:
    """``write()``, again after a bounded backoff for as long as the database is locked."""
    wait = FIRST_WAIT
    while True:
        try:
            return write()
        except sqlite3.OperationalError as error:
            if is_busy(error):
                why = "the database is locked by another process"
            elif is_disk_full(error):
                why = "the disk is full (the database cannot grow)"
            else:
                raise
        print(
            f"newmarket serve: {why} while {what}; trying again in {wait:g} s",
            file=sys.stderr,
            flush=True,
        )
        await trio.sleep(wait)
        wait = min(wait * 2, LONGEST_WAIT)
