"""A contest's own rows in the competition database: moved dates, linked accounts, finals,
challenges and their matches.

Their tables are made with the rest of the schema (``competition_db._CONTEST_SCHEMA``);
this module is their one reader and writer, so the ladder's code never meets them.
Finals' and challenges' matches live in ``contest_matches``, not ``matches``: the
leaderboard reads ``matches`` only, so neither can ever move the ladder.  A finals or
challenge record holds its own fresh deal key (``referee.match.dealkey``): the cards
were nobody's to know before they were dealt, and the record is all it takes to deal
them again (``referee.server.finals``, re-run).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from referee.match.packed_result import pack
from referee.match.result import MatchResult
from referee.server.competition_db import MAX_ROW_ID, CompetitionStore, PlayedMatch


@dataclasses.dataclass(frozen=True)
class FinalsRecord:
    id: int
    versions: tuple[int, ...]
    groups: int
    seed: int
    deal_key: str
    tables: tuple[tuple[int, ...], ...]
    started_at: float
    finished_at: float | None
    ranking: dict[str, Any] | None


@dataclasses.dataclass(frozen=True)
class Challenge:
    id: int
    requester: int
    versions: tuple[int, ...]  # the requester's version first, then the opponents'
    seed: int
    deal_key: str
    status: str  # waiting | playing | finished | failed
    detail: str
    requested_at: float
    finished_at: float | None


# ------------------------------------------------------------------ dates


def moved_phases(store: CompetitionStore) -> dict[str, datetime]:
    """The dates the organiser moved (``newmarket serve move-phase``), by phase."""
    rows = store.connection.execute("SELECT phase, at FROM phase_moves").fetchall()
    return {str(phase): datetime.fromisoformat(str(at)) for phase, at in rows}


def move_phase(store: CompetitionStore, phase: str, at: datetime) -> None:
    store.connection.execute(
        "INSERT OR REPLACE INTO phase_moves (phase, at, moved_at) VALUES (?, ?, ?)",
        (phase, at.isoformat(), time.time()),
    )


# ------------------------------------------------------------------ linked accounts


def link_accounts(store: CompetitionStore, first: int, second: int) -> bool:
    """Keep two participants apart from now on; False if they were linked already."""
    low, high = sorted((first, second))
    cursor = store.connection.execute(
        "INSERT OR IGNORE INTO account_links (low, high, linked_at) VALUES (?, ?, ?)",
        (low, high, time.time()),
    )
    return cursor.rowcount > 0


def account_links(store: CompetitionStore) -> list[tuple[int, int]]:
    rows = store.connection.execute("SELECT low, high FROM account_links ORDER BY low, high")
    return [(int(low), int(high)) for low, high in rows]


def households(store: CompetitionStore) -> dict[int, int]:
    """Each linked participant's household: the smallest id of the accounts linked to it,
    through any chain of links (a team of three is linked by two pairs).  A participant
    linked to nobody is its own household and is not in the map."""
    parent: dict[int, int] = {}

    def root(x: int) -> int:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    for low, high in account_links(store):
        a, b = root(low), root(high)
        if a != b:
            parent[max(a, b)] = min(a, b)
        parent.setdefault(low, low)
        parent.setdefault(high, high)
    return {x: root(x) for x in parent}


# ------------------------------------------------------------------ finals


def _finals(row: Sequence[Any]) -> FinalsRecord:
    return FinalsRecord(
        id=int(row[0]),
        versions=tuple(json.loads(row[1])),
        groups=int(row[2]),
        seed=int(row[3]),
        deal_key=str(row[4]),
        tables=tuple(tuple(table) for table in json.loads(row[5])),
        started_at=float(row[6]),
        finished_at=None if row[7] is None else float(row[7]),
        ranking=None if row[8] is None else json.loads(row[8]),
    )


_FINALS = (
    "SELECT id, versions, groups, seed, deal_key, tables, started_at, finished_at, ranking "
    "FROM finals"
)


def start_finals(
    store: CompetitionStore,
    versions: Sequence[int],
    seed: int,
    deal_key: str,
    tables: Sequence[Sequence[int]],
) -> FinalsRecord:
    cursor = store.connection.execute(
        "INSERT INTO finals (versions, groups, seed, deal_key, tables, started_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (
            json.dumps(list(versions)),
            len(tables),
            seed,
            deal_key,
            json.dumps([list(t) for t in tables]),
            time.time(),
        ),
    )
    assert cursor.lastrowid is not None
    found = finals_record(store, cursor.lastrowid)
    assert found is not None
    return found


def finals_record(store: CompetitionStore, finals_id: int | None = None) -> FinalsRecord | None:
    """The finals ``finals_id``, or the latest (None: no finals yet)."""
    if finals_id is None:
        row = store.connection.execute(_FINALS + " ORDER BY id DESC LIMIT 1").fetchone()
    else:
        row = store.connection.execute(_FINALS + " WHERE id = ?", (finals_id,)).fetchone()
    return None if row is None else _finals(row)


def finish_finals(store: CompetitionStore, finals_id: int, ranking: dict[str, Any]) -> None:
    store.connection.execute(
        "UPDATE finals SET finished_at = ?, ranking = ? WHERE id = ?",
        (time.time(), json.dumps(ranking), finals_id),
    )


# ------------------------------------------------------------------ challenges


def _challenge(row: Sequence[Any]) -> Challenge:
    return Challenge(
        int(row[0]),
        int(row[1]),
        tuple(json.loads(row[2])),
        int(row[3]),
        str(row[4]),
        str(row[5]),
        str(row[6]),
        float(row[7]),
        None if row[8] is None else float(row[8]),
    )


_CHALLENGES = (
    "SELECT id, requester, versions, seed, deal_key, status, detail, requested_at, "
    "finished_at FROM challenges"
)


def add_challenge(
    store: CompetitionStore,
    requester: int,
    versions: Sequence[int],
    seed: int,
    deal_key: str,
    requested_at: float,
) -> Challenge:
    cursor = store.connection.execute(
        "INSERT INTO challenges (requester, versions, seed, deal_key, status, requested_at) "
        "VALUES (?, ?, ?, ?, 'waiting', ?)",
        (requester, json.dumps(list(versions)), seed, deal_key, requested_at),
    )
    assert cursor.lastrowid is not None
    found = challenge(store, cursor.lastrowid)
    assert found is not None
    return found


def challenge(store: CompetitionStore, challenge_id: int) -> Challenge | None:
    if not 0 < challenge_id <= MAX_ROW_ID:  # SQLite cannot even be asked: OverflowError, a 500
        return None
    row = store.connection.execute(_CHALLENGES + " WHERE id = ?", (challenge_id,)).fetchone()
    return None if row is None else _challenge(row)


def challenges(store: CompetitionStore, status: str | None = None) -> list[Challenge]:
    if status is None:
        rows = store.connection.execute(_CHALLENGES + " ORDER BY id").fetchall()
    else:
        rows = store.connection.execute(
            _CHALLENGES + " WHERE status = ? ORDER BY id", (status,)
        ).fetchall()
    return [_challenge(row) for row in rows]


def challenges_since(store: CompetitionStore, requester: int, since: float) -> int:
    (count,) = store.connection.execute(
        "SELECT COUNT(*) FROM challenges WHERE requester = ? AND requested_at >= ?",
        (requester, since),
    ).fetchone()
    return int(count)


def set_challenge(
    store: CompetitionStore, challenge_id: int, status: str, detail: str = ""
) -> None:
    finished = time.time() if status in ("finished", "failed") else None
    store.connection.execute(
        "UPDATE challenges SET status = ?, detail = ?, finished_at = ? WHERE id = ?",
        (status, detail, finished, challenge_id),
    )


# ------------------------------------------------------------------ their matches


def record_contest_match(
    store: CompetitionStore,
    match_id: str,
    kind: str,
    owner: int,
    group_index: int,
    rotation: int,
    identity: int,
    versions: Sequence[int],
    result: MatchResult,
    log_path: str | None,
) -> bool:
    """One finals or challenge match, in one row; False if it was stored already."""
    seats = sorted(result.seats, key=lambda seat: seat.seat)
    cursor = store.connection.execute(
        "INSERT OR IGNORE INTO contest_matches (match_id, kind, owner, group_index, rotation, "
        "seed, versions, hands, net_chips, disqualified, result, log_path, keep, finished_at) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            match_id,
            kind,
            owner,
            group_index,
            rotation,
            identity,
            json.dumps(list(versions)),
            result.hands,
            json.dumps([seat.net_chips for seat in seats]),
            json.dumps([seat.status == "disqualified" for seat in seats]),
            pack(result),  # as the ladder's results: referee.match.packed_result
            log_path,
            1 if kind == "finals" else 0,
            time.time(),
        ),
    )
    return cursor.rowcount > 0


def contest_played(store: CompetitionStore, kind: str, owner: int) -> list[PlayedMatch]:
    """The finished matches of a finals or a challenge, as the scoring reads them, in the
    order of their place (group, rotation): a re-run sums them in the same order."""
    rows = store.connection.execute(
        "SELECT group_index, rotation, seed, versions, net_chips, hands, disqualified "
        "FROM contest_matches WHERE kind = ? AND owner = ? ORDER BY group_index, rotation",
        (kind, owner),
    ).fetchall()
    return [
        PlayedMatch(
            int(group),
            int(rotation),
            int(seed),
            tuple(json.loads(versions)),
            tuple(json.loads(nets)),
            int(hands),
            tuple(json.loads(disqualified)),
        )
        for group, rotation, seed, versions, nets, hands, disqualified in rows
    ]


def contest_match_ids(store: CompetitionStore, kind: str, owner: int) -> list[str]:
    rows = store.connection.execute(
        "SELECT match_id FROM contest_matches WHERE kind = ? AND owner = ? "
        "ORDER BY group_index, rotation",
        (kind, owner),
    )
    return [str(mid) for (mid,) in rows]


def contest_finished_after(
    store: CompetitionStore, rowid: int, limit: int
) -> list[tuple[int, str, bool, str | None, float]]:
    """Up to ``limit`` contest matches stored after row ``rowid`` whose record was not
    pruned, in the order stored: (row, match id, kept for ever as a finals match, log path,
    finished at).  Retention walks them again when its rules change, and must not count a
    pruned record twice."""
    rows = store.connection.execute(
        "SELECT rowid, match_id, keep, log_path, finished_at FROM contest_matches "
        "WHERE rowid > ? AND match_id NOT IN (SELECT match_id FROM contest_pruned) "
        "ORDER BY rowid LIMIT ?",
        (rowid, limit),
    ).fetchall()
    return [
        (int(row), str(mid), bool(keep), None if log is None else str(log), float(at))
        for row, mid, keep, log, at in rows
    ]


def contest_pruned(store: CompetitionStore, match_id: str) -> tuple[float, float] | None:
    """When a contest match's record was pruned and the retention in days then, or None
    (``referee.server.retention`` notes it)."""
    row = store.connection.execute(
        "SELECT pruned_at, days FROM contest_pruned WHERE match_id = ?", (match_id,)
    ).fetchone()
    return None if row is None else (float(row[0]), float(row[1]))


@dataclasses.dataclass(frozen=True)
class ContestMatch:
    """A finals or challenge match's row, as a download reads it."""

    match_id: str
    kind: str  # finals | challenge
    owner: int  # the finals' or the challenge's id
    versions: tuple[int, ...]  # the seating: version of seat 0, 1, ...
    log_path: str | None


def contest_match(store: CompetitionStore, match_id: str) -> ContestMatch | None:
    row = store.connection.execute(
        "SELECT kind, owner, versions, log_path FROM contest_matches WHERE match_id = ?",
        (match_id,),
    ).fetchone()
    if row is None:
        return None
    kind, owner, versions, log_path = row
    return ContestMatch(
        match_id,
        str(kind),
        int(owner),
        tuple(json.loads(versions)),
        None if log_path is None else str(log_path),
    )
