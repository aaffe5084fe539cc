"""A match's page at its first look: built in a worker thread, and counted per client.

A match's page and ``/api/matches/ID`` show its replay and its faults' evidence,
made from its log: about 50 ms for a 10-hand match the first time (rebuilding a
compact record, reading every line, making the viewer's data), nothing after, as
long as it stays in the caches (the last ``CACHED`` logs: ``views._log``,
``views._replay``, ``match_faults._evidence``).  Made in the event loop, a client
walking through more matches than the caches hold paid that every time, unlimited,
and held every other page and every result being recorded meanwhile.  Now
(``first_look``), before the handler reads the view:

* a page already made costs nothing more, and is not counted;
* a page to make counts, with the log downloads, toward the client's
  ``[server] downloads_per_minute`` (per participant, or per address for
  nobody signed in): a 429 past it, naming the limit;
* it is made in a worker thread, at most ``BUILDERS`` at once for the
  whole server, so a flood from many clients waits its turn there and
  leaves the event loop to the others.

Only the log's files are read in the thread; the database is read in the loop.
"""

from __future__ import annotations

import collections
import weakref
from pathlib import Path

import trio

from referee.server import match_faults
from referee.server.competition import Competition
from referee.server.competition_db import Participant
from referee.server.downloads import Download, client_key, limits, over_limit
from referee.server.views import build_replay, page_names

CACHED = 64  # the size of the caches the page reads (views, match_faults)
BUILDERS = 1  # pages made at once, in worker threads, for the whole server

_Key = tuple[str, float, tuple[str, ...]]
# The pages made lately, in the order of their last use: the caches' own order, as every
# page's first look comes through here.  A page the caches dropped meanwhile is made again
# by the handler, as before.
_MADE: collections.OrderedDict[_Key, None] = collections.OrderedDict()
_BUILDS: weakref.WeakKeyDictionary[Competition, trio.CapacityLimiter] = weakref.WeakKeyDictionary()


async def first_look(
    competition: Competition, match_id: str, viewer: Participant | None, address: str
) -> Download | None:
    """Make match ``match_id``'s page data in a worker thread if it is not made; a 429
    ``Download`` if the client has spent its count; None when the handler may go on."""
    store = competition.store
    found = store.match_seating(match_id)
    if found is None or store.in_play({match_id}):
        return None  # nothing of the log is shown: nothing to make
    _group, _rotation, seating, log_path = found
    if not log_path:
        return None
    path = Path(log_path)
    try:
        mtime = path.stat().st_mtime if path.is_file() else None
    except OSError:
        mtime = None
    if mtime is None:
        return None
    names = page_names(competition, seating)
    key = (str(path), mtime, tuple(names))
    if key in _MADE:
        _MADE.move_to_end(key)
        return None
    who = client_key(viewer, address)
    refused = over_limit(
        competition,
        who,
        "new match pages and log downloads",
        " (a page seen lately is not counted)",
    )
    if refused is not None:
        return refused
    limits(competition).record(who)
    async with _builders(competition):
        await trio.to_thread.run_sync(_make, competition, log_path, mtime, names)
    _MADE[key] = None
    while len(_MADE) > CACHED:
        _MADE.popitem(last=False)
    return None


def _make(competition: Competition, log_path: str, mtime: float, names: list[str]) -> None:
    # The mtime first_look keys its note with: the caches' entries are the noted ones.
    build_replay(competition, Path(log_path), mtime, names)
    match_faults.evidence_of(log_path, mtime)


def _builders(competition: Competition) -> trio.CapacityLimiter:
    found = _BUILDS.get(competition)
    if found is None:
        found = trio.CapacityLimiter(BUILDERS)
        _BUILDS[competition] = found
    return found


def forget() -> None:
    """Forget every page made (with the caches emptied: a benchmark's first looks)."""
    _MADE.clear()
