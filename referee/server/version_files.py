"""The files of versions that will not play again (uploaded, unpacked, built), removed.

A version's directory (``DATA/versions/NNNNNN``) holds its ``upload`` (the
bytes as sent), ``files/`` (unpacked, and ``files/build`` for a compiled
language) and a marker that ``files/`` is whole.  A participant who uploads
for weeks leaves one directory a version; ``[storage] participant_mb`` caps
what one participant keeps, and an upload past it is refused.

Each retention pass removes the directory (the marker first, so a stop
between leaves nothing that looks whole, then ``files/``, then ``upload``) of
every version that will not play again and that no table uses (in no
ladder group still being played, no challenge waiting or playing, no finals:
their re-run plays the finalists again):

* a **withdrawn** version (the organiser's, for good) or a **rejected** one;
* a **superseded** one: an admitted version older than its participant's two
  newest admitted ones.  The newest plays; the one before it is kept so that
  withdrawing or suspending the newest brings it back (``organiser``).  A
  version whose files were removed is in ``version_files_removed`` and is
  never seated again (``CompetitionStore.playing_versions``): the newest
  version that still has its files plays instead.

Its row stays (file name, size, SHA-256 of what was sent, status, the
check's transcript), so its page and the leaderboard's history are
unchanged; the bytes go, or a participant uploading binaries for weeks would
be refused at ``participant_mb`` by versions that will never play.  Each
pass that removes something writes one line of the operations log.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any

from referee.server.busy import written
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.contest_db import challenges
from referee.server.operations import log_operation
from referee.server.quotas import tree_bytes
from referee.server.uploads import COMPLETE, version_root

Offload = Callable[..., Awaitable[Any]]

NEVER_AGAIN = ("withdrawn", "rejected")
KEPT_ADMITTED = 2  # a participant's newest admitted versions whose files stay
GROUPS_LOOKED_AT = 10_000  # the latest groups whose versions may still be in play


@dataclasses.dataclass(frozen=True)
class VersionsPass:
    versions: int  # versions whose files were removed
    freed: int  # their bytes


def in_use(store: CompetitionStore) -> set[int]:
    """The versions a table may still seat: in a ladder group in play, a waiting or playing
    challenge, or any finals."""
    tables = store.groups_in_play_versions(GROUPS_LOOKED_AT)
    tables += [
        asked.versions for status in ("waiting", "playing") for asked in challenges(store, status)
    ]
    # Any finals: its re-run (finals-rerun) seats the finalists again.
    finals = store.connection.execute("SELECT versions FROM finals")
    tables += [tuple(json.loads(versions)) for (versions,) in finals]
    return {int(version) for table in tables for version in table}


def unused_versions(competition: Competition) -> list[int]:
    """The versions that will not play again and no table uses (read on the loop: the
    database's connection is the loop's; their files are looked at in a thread)."""
    store = competition.store
    used = in_use(store) | set(competition.unpacking)
    chosen = [v.id for status in NEVER_AGAIN for v in store.versions(status=status)]
    admitted: dict[int, list[int]] = {}
    for version in store.versions(status="admitted"):
        admitted.setdefault(version.participant, []).append(version.id)
    for ids in admitted.values():
        chosen.extend(sorted(ids)[:-KEPT_ADMITTED])
    return sorted(set(chosen) - used)


def holding(competition: Competition, versions: Sequence[int]) -> list[tuple[int, int]]:
    """Of ``versions``, those whose directory is still there, with its bytes (a thread)."""
    found = []
    for version in versions:
        root = version_root(competition, version)
        if root.exists():
            found.append((version, tree_bytes(root)))
    return found


def remove(competition: Competition, versions: Sequence[int]) -> None:
    """Remove each version's marker, its ``files/``, then the rest (only under the uploads
    directory)."""
    top = competition.config.uploads_dir.resolve()
    for version in versions:
        root = version_root(competition, version)
        if not root.resolve().is_relative_to(top):
            continue
        (root / COMPLETE).unlink(missing_ok=True)
        shutil.rmtree(root / "files", ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)


def _mark(store: CompetitionStore, found: Sequence[tuple[int, int]], at: float) -> None:
    store.connection.executemany(
        "INSERT OR IGNORE INTO version_files_removed (version, removed_at, bytes) VALUES (?, ?, ?)",
        [(version, at, size) for version, size in found],
    )


async def remove_unused(
    competition: Competition, offload: Offload, now: float | None = None
) -> VersionsPass:
    """One pass: mark the unused versions' files as removed (so none is seated again), then
    remove them; one operations line if there were any."""
    found = await offload(holding, competition, unused_versions(competition))
    if not found:
        return VersionsPass(0, 0)
    at = time.time() if now is None else now
    await written("recording removed version files", partial(_mark, competition.store, found, at))
    await offload(remove, competition, [version for version, _size in found])
    done = VersionsPass(len(found), sum(size for _version, size in found))
    log_operation("retention", what="version-files", versions=done.versions, freed_bytes=done.freed)
    return done
