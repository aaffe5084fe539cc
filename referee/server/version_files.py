"""The unpacked and built files of versions that will never play again, removed.

A version's directory (``DATA/versions/NNNNNN``) holds its ``upload`` (the
bytes as sent), ``files/`` (unpacked, and ``files/build`` for a compiled
language) and a marker that ``files/`` is whole.  A participant who uploads
for weeks leaves one directory a version; ``[storage] participant_mb`` caps
what one participant keeps, and an upload past it is refused.

A **withdrawn** version (the organiser's, for good) or a **rejected** one
never plays again: each retention pass removes its ``files/`` (the marker
first, so a stop between leaves nothing that looks whole) once no table uses
it: not in a ladder group still being played, not in a challenge waiting or
playing, and in no finals (their re-run plays the finalists again).  Its
``upload`` stays: it is small (``[uploads] max_kb``) and is what the
participant sent.  A version that was only superseded by a newer one keeps
its files: it plays again if the newer one is withdrawn or suspended.

Each pass that removes something writes one line of the operations log.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Iterable
from pathlib import Path

from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.quotas import tree_bytes
from referee.server.uploads import COMPLETE

NEVER_AGAIN = ("withdrawn", "rejected")
GROUPS_LOOKED_AT = 10_000  # the latest groups whose versions may still be in play


@dataclasses.dataclass(frozen=True)
class VersionsPass:
    versions: int  # versions whose files were removed
    freed: int  # their bytes


def in_use(store: CompetitionStore) -> set[int]:
    """The versions a table may still seat: in a ladder group in play, a waiting or playing
    challenge, or any finals."""
    db = store.connection
    used: set[int] = set()
    rows = db.execute(
        "SELECT g.versions FROM groups g WHERE g.id > (SELECT COALESCE(MAX(id), 0) FROM groups) "
        "- ? AND g.abandoned = 0 AND (SELECT COUNT(*) FROM matches x WHERE x.group_id = g.id) "
        "< json_array_length(g.versions)",
        (GROUPS_LOOKED_AT,),
    )
    used.update(_ids(versions for (versions,) in rows))
    rows = db.execute("SELECT versions FROM challenges WHERE status IN ('waiting', 'playing')")
    used.update(_ids(versions for (versions,) in rows))
    used.update(_ids(versions for (versions,) in db.execute("SELECT versions FROM finals")))
    return used


def _ids(lists: Iterable[str]) -> set[int]:
    return {int(version) for text in lists for version in json.loads(text)}


def unused_roots(competition: Competition) -> list[Path]:
    """The directories of versions that will never play again and no table uses (read on
    the loop: the database's connection is the loop's; their files are looked at later)."""
    store = competition.store
    used = in_use(store) | set(competition.unpacking)
    roots = []
    for status in NEVER_AGAIN:
        for version in store.versions(status=status):
            if version.id in used:
                continue
            roots.append(competition.config.uploads_dir / f"{version.id:06d}")
    return roots


def remove_files(roots: Iterable[Path], uploads: Path) -> VersionsPass:
    """Remove each root's marker and ``files/`` (only under ``uploads``); in a worker thread."""
    count = freed = 0
    top = uploads.resolve()
    for root in roots:
        if not root.resolve().is_relative_to(top):
            continue
        files = root / "files"
        if not files.exists() and not (root / COMPLETE).exists():
            continue  # removed by an earlier pass (or never unpacked)
        size = tree_bytes(files)
        (root / COMPLETE).unlink(missing_ok=True)
        shutil.rmtree(files, ignore_errors=True)
        count += 1
        freed += size - tree_bytes(files)
    return VersionsPass(count, freed)
