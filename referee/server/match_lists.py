"""A participant's matches, a page at a time, filtered: the page ``/p/NAME/matches`` and the API.

The order is the order the matches were stored (newest first), which never
changes once a match is stored, so a page is a keyset cursor (``cursor``: the
last row's place) and not an offset: a match finished while a participant
reads page 3 does not push a row from page 3 onto page 4.  Filters are query
parameters (``version``, ``opponent``, ``faults``, ``since``, ``until``,
``limit``, ``cursor``); an unknown or bad one is a ``FilterError`` naming it,
answered 400 in one line.  What a row shows of a match whose group is still
being played is what the participant page shows (``referee.server.views``):
who sat where and the faults counted, not how it went.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from referee.server.competition import Competition
from referee.server.competition_db import Participant

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
PARAMETERS = ("version", "opponent", "faults", "since", "until", "limit", "cursor")


class FilterError(ValueError):
    """A query parameter that cannot be used: ``PARAMETER: why``, one line."""


@dataclasses.dataclass(frozen=True)
class MatchFilter:
    version: int | None = None
    opponent: Participant | None = None
    faults_only: bool = False
    since: float | None = None  # inclusive, seconds since the epoch
    until: float | None = None  # exclusive
    limit: int = DEFAULT_LIMIT
    cursor: int | None = None  # rows stored before this one

    def query(self, cursor: int | None) -> dict[str, str]:
        """These filters as query parameters, with ``cursor`` (the next page's link)."""
        params: dict[str, str] = {}
        if self.version is not None:
            params["version"] = str(self.version)
        if self.opponent is not None:
            params["opponent"] = self.opponent.name
        if self.faults_only:
            params["faults"] = "only"
        for name in ("since", "until"):
            value = getattr(self, name)
            if value is not None:
                params[name] = _iso(value)
        if self.limit != DEFAULT_LIMIT:
            params["limit"] = str(self.limit)
        if cursor is not None:
            params["cursor"] = str(cursor)
        return params


def parse_filter(
    competition: Competition, participant: Participant, query: Mapping[str, str]
) -> MatchFilter:
    """The filters of a request's query; ``FilterError`` for the first bad parameter."""
    for name in query:
        if name not in PARAMETERS:
            raise FilterError(f"{name}: not a filter (use {', '.join(PARAMETERS)})")
    store = competition.store
    version = None
    if query.get("version"):
        version = _whole(query["version"], "version", low=1)
        found = store.version(version)
        if found is None or found.participant != participant.id:
            raise FilterError(f"version: {version} is not one of {participant.name}'s versions")
    opponent = None
    if query.get("opponent"):
        opponent = store.participant_by_name(query["opponent"])
        if opponent is None:
            raise FilterError(f"opponent: no participant named {query['opponent'][:40]!r}")
    faults = query.get("faults", "").lower()
    if faults not in ("", "0", "1", "only", "true", "false"):
        raise FilterError("faults: use faults=only (or 1) for matches with a fault of theirs")
    since = _moment(query["since"], "since") if query.get("since") else None
    until = _moment(query["until"], "until") if query.get("until") else None
    if since is not None and until is not None and until <= since:
        raise FilterError("until: must be later than since")
    limit = _whole(query["limit"], "limit", 1, MAX_LIMIT) if query.get("limit") else DEFAULT_LIMIT
    cursor = _whole(query["cursor"], "cursor", low=1) if query.get("cursor") else None
    return MatchFilter(
        version, opponent, faults in ("1", "only", "true"), since, until, limit, cursor
    )


def _whole(text: str, name: str, low: int, high: int = 2**63 - 1) -> int:
    try:
        value = int(text)
    except ValueError:
        raise FilterError(f"{name}: {text[:40]!r} is not a whole number") from None
    if not low <= value <= high:
        raise FilterError(f"{name}: must be from {low} to {high}")
    return value


def _moment(text: str, name: str) -> float:
    """A date (``2026-11-28``, midnight UTC) or a time (``2026-11-28T14:05:00Z``)."""
    try:
        moment = datetime.datetime.fromisoformat(text)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=datetime.UTC)
        _iso(moment.timestamp())  # it must print again (the next page's link)
        return moment.timestamp()
    except (ValueError, OverflowError):  # before year 1 or after 9999 in UTC
        raise FilterError(
            f"{name}: {text[:40]!r} is not a date (2026-11-28) or time (2026-11-28T14:05Z)"
        ) from None


def _iso(moment: float) -> str:
    return datetime.datetime.fromtimestamp(moment, datetime.UTC).isoformat(timespec="seconds")


def match_page(
    competition: Competition, participant: Participant, wanted: MatchFilter
) -> dict[str, Any]:
    """One page of ``participant``'s matches under ``wanted``: rows and the next page's query."""
    store = competition.store
    where = ["s.version IN (SELECT id FROM versions WHERE participant = ?)"]
    args: list[object] = [participant.id]
    if wanted.version is not None:
        where.append("s.version = ?")
        args.append(wanted.version)
    if wanted.opponent is not None:
        where.append(
            "EXISTS (SELECT 1 FROM seats o JOIN versions ov ON ov.id = o.version "
            "WHERE o.match_id = m.match_id AND ov.participant = ? AND ov.participant != ?)"
        )
        args += [wanted.opponent.id, participant.id]
    if wanted.since is not None:
        where.append("m.finished_at >= ?")
        args.append(wanted.since)
    if wanted.until is not None:
        where.append("m.finished_at < ?")
        args.append(wanted.until)
    if wanted.cursor is not None:
        where.append("m.rowid < ?")
        args.append(wanted.cursor)
    having = "HAVING SUM(s.faults) > 0" if wanted.faults_only else ""
    rows = store.connection.execute(
        "SELECT m.rowid, m.match_id, m.versions, m.hands, m.reason, m.finished_at, "
        "SUM(s.faults) FROM matches m JOIN seats s ON s.match_id = m.match_id "
        f"WHERE {' AND '.join(where)} GROUP BY m.rowid {having} ORDER BY m.rowid DESC LIMIT ?",
        [*args, wanted.limit + 1],
    ).fetchall()
    more = len(rows) > wanted.limit
    rows = rows[: wanted.limit]
    in_play = store.in_play(str(row[1]) for row in rows)
    labels = {v.id: v for v in store.versions()}
    matches = []
    for _rowid, match_id, versions, hands, reason, finished_at, faults in rows:
        public = match_id not in in_play
        seating = [int(v) for v in json.loads(versions)]
        matches.append(
            {
                "match_id": match_id,
                "finished_at": finished_at,
                "finished": _iso(finished_at),
                "cards_public": public,
                "hands": hands if public else None,
                "reason": reason if public else None,
                "faults": int(faults),
                "seats": [
                    {
                        "version": v,
                        "label": labels[v].label if v in labels else f"v{v}",
                        "participant": labels[v].participant_name if v in labels else None,
                        "mine": v in labels and labels[v].participant == participant.id,
                    }
                    for v in seating
                ],
            }
        )
    next_cursor = int(rows[-1][0]) if more else None
    return {
        "participant": participant.name,
        "filters": wanted.query(None),
        "matches": matches,
        "next": None if next_cursor is None else urlencode(wanted.query(next_cursor)),
        "cursor": next_cursor,
    }
