"""Each fault of a match in words, with its evidence, for its page and the API.

The wording is ``newmarket check``'s (``referee.text.faults``), read from the
match's log: which request, what came back, the time it took, what the
referee did instead.  Public once the match's group has finished, as the
log is (``referee.server.downloads``); nothing before, since a request names
the cards a seat could play.  A log no longer kept gives no evidence; the
result's own fault lines stay on the page.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from referee.server.competition import Competition
from referee.server.downloads import stored_log_lines
from referee.server.views import hide_paths, server_places
from referee.text.faults import fault_evidence, without_stderr


@functools.lru_cache(maxsize=64)
def _evidence(path: str, mtime: float) -> tuple[dict[str, Any], ...]:
    # mtime is part of the key: a log written again after a restart is read afresh.
    lines = stored_log_lines(Path(path)) or []
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    # Public: a crash's detail loses the bot's last stderr line it quotes (its owner's).
    return tuple(
        {**found.to_json(), "line": without_stderr(found.line)} for found in fault_evidence(records)
    )


def evidence_of(log_path: str, mtime: float) -> None:
    """Make, and cache, the evidence of the log at ``log_path`` (the path as the database
    spells it); no database, so a worker thread may run it (``match_builds``)."""
    _evidence(log_path, mtime)


def match_faults(competition: Competition, match_id: str) -> list[dict[str, Any]] | None:
    """The match's faults with their evidence, each naming its seat's version; None while
    its group plays or without a log."""
    store = competition.store
    found = store.match_seating(match_id)
    if found is None or store.in_play({match_id}):
        return None
    _group, _rotation, seating, log_path = found
    if not log_path:
        return None
    try:
        mtime = Path(log_path).stat().st_mtime
    except OSError:
        return None
    labels = {v.id: v.label for v in store.versions()}
    rows = []
    for evidence in _evidence(log_path, mtime):
        seat = evidence["seat"]
        version = seating[seat] if 0 <= seat < len(seating) else None
        label = labels.get(version, f"seat {seat}") if version is not None else f"seat {seat}"
        rows.append({**evidence, "label": label})
    shown: list[dict[str, Any]] = hide_paths(rows, server_places(competition))
    return shown
