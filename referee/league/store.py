"""A league's results in SQLite: the one durable record, written so that kill -9 loses nothing.

Only *finished* matches are ever written, each in one transaction (the match,
its seats, its faults), so the database holds every match entirely or not at
all; a match that was running when the process died simply is not there, and
resuming plays it again from scratch.  The schedule itself is not stored: it
is a pure function of the league file (``referee.league.schedule``), so
"what is left" is the schedule minus the finished match ids.  For the same
reason the bankroll format stores no state of its own: replaying its rounds
from the stored results gives the bankrolls back.

The league's identity (``LeagueConfig.identity()``) is stored when the
database is created and compared when it is opened again: a different league
is refused with the first key that differs, never merged.

WAL journaling lets ``newmarket standings --db`` read while a league writes;
``synchronous=FULL`` makes a committed match survive a power cut as well as a
killed process.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from referee.league.config import LeagueConfig
from referee.match import MatchResult

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS league (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bots (
    bot INTEGER PRIMARY KEY,      -- the bot's index in the league file
    name TEXT NOT NULL UNIQUE,
    spec TEXT NOT NULL            -- JSON: the BotSpec it was started with
);
CREATE TABLE IF NOT EXISTS matches (
    match_id TEXT PRIMARY KEY,
    ordinal INTEGER NOT NULL,     -- the match's place in the schedule: ratings follow it
    round INTEGER NOT NULL,       -- the cycle (round robin) or the round (bankroll)
    table_no INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    hands INTEGER NOT NULL,
    reason TEXT NOT NULL,
    log_path TEXT,
    result TEXT NOT NULL,         -- JSON: MatchResult.to_json()
    finished_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS seats (
    match_id TEXT NOT NULL REFERENCES matches(match_id),
    seat INTEGER NOT NULL,
    bot INTEGER NOT NULL REFERENCES bots(bot),
    start_chips INTEGER NOT NULL,
    place INTEGER NOT NULL,
    chips INTEGER NOT NULL,
    status TEXT NOT NULL,
    net_chips INTEGER NOT NULL,
    boodle_chips INTEGER NOT NULL,
    hands_won INTEGER NOT NULL,
    PRIMARY KEY (match_id, seat)
);
CREATE TABLE IF NOT EXISTS faults (
    match_id TEXT NOT NULL REFERENCES matches(match_id),
    seat INTEGER NOT NULL,
    number INTEGER NOT NULL,
    kind TEXT NOT NULL,
    hand INTEGER NOT NULL,
    detail TEXT NOT NULL,
    PRIMARY KEY (match_id, seat, number)
);
CREATE INDEX IF NOT EXISTS seats_by_bot ON seats(bot);
"""


class StoreError(Exception):
    """The database cannot be used for this league; the message says why, on one line."""


@dataclasses.dataclass(frozen=True, slots=True)
class MatchKey:
    """Where a match sits in its league; ``bots[i]`` (bot indices) held seat i."""

    match_id: str
    ordinal: int
    round: int
    table: int
    rotation: int
    seed: int
    bots: tuple[int, ...]
    start_chips: tuple[int, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class StoredMatch:
    key: MatchKey
    result: MatchResult


class LeagueStore:
    """An open results database. Use ``LeagueStore.create_or_resume`` or ``open_existing``."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._db = connection

    # ------------------------------------------------------------------ opening

    @classmethod
    def create_or_resume(
        cls,
        path: Path,
        identity: Mapping[str, object],
        bots: Sequence[Mapping[str, object]],
        name: str = "league",
    ) -> LeagueStore:
        """Open ``path`` for this league, creating it if new; refuse a different league.

        ``bots`` is each bot's spec as JSON, in league order (its names must
        be unique); ``name`` is the display name (not part of the identity).
        Raises ``StoreError``.
        """
        identity_text = _canonical(identity)
        store = cls(path, _connect(path, readonly=False))
        try:
            store._db.executescript(_SCHEMA)
            with store._db:
                stored = store._meta("identity")
                if stored is None:
                    store._db.executemany(
                        "INSERT INTO league (key, value) VALUES (?, ?)",
                        [
                            ("schema_version", str(SCHEMA_VERSION)),
                            ("identity", identity_text),
                            ("name", name),
                            ("created", _now()),
                        ],
                    )
                    store._db.executemany(
                        "INSERT INTO bots (bot, name, spec) VALUES (?, ?, ?)",
                        [
                            (index, str(spec["name"]), _canonical(spec))
                            for index, spec in enumerate(bots)
                        ],
                    )
                    return store
            store._check_version()
            if stored != identity_text:
                difference = first_difference(json.loads(stored), json.loads(identity_text))
                raise StoreError(
                    f"{path} holds a different league ({difference}); "
                    "use another --db, or the league file this database was made with"
                )
            with store._db:
                store._db.execute("REPLACE INTO league (key, value) VALUES ('name', ?)", (name,))
            return store
        except sqlite3.Error as error:  # a full disk, a read-only file: one line, no traceback
            store.close()
            raise StoreError(f"{path}: cannot write the league database: {error}") from None
        except BaseException:
            store.close()
            raise

    @classmethod
    def for_league(cls, path: Path, config: LeagueConfig) -> LeagueStore:
        """``create_or_resume`` for a checked league file."""
        return cls.create_or_resume(
            path, config.identity(), [spec.to_json() for spec in config.bots], config.name
        )

    @classmethod
    def open_existing(cls, path: Path) -> LeagueStore:
        """Open a league database read-only (``newmarket standings``); raises ``StoreError``."""
        if not path.is_file():
            raise StoreError(f"{path}: no such league database")
        store = cls(path, _connect(path, readonly=True))
        try:
            if not store._has_schema() or store._meta("identity") is None:
                raise StoreError(f"{path}: not a newmarket league database")
            store._check_version()
            return store
        except BaseException:
            store.close()
            raise

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> LeagueStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ reading

    def identity(self) -> dict[str, Any]:
        text = self._meta("identity")
        assert text is not None
        value: dict[str, Any] = json.loads(text)
        return value

    def name(self) -> str:
        return self._meta("name") or "league"

    def bot_names(self) -> list[str]:
        rows = self._db.execute("SELECT name FROM bots ORDER BY bot").fetchall()
        return [str(row[0]) for row in rows]

    def finished_ids(self) -> set[str]:
        return {str(row[0]) for row in self._db.execute("SELECT match_id FROM matches")}

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM matches").fetchone()[0])

    def matches(self) -> list[StoredMatch]:
        """Every finished match, in schedule order (rounds, then tables, then rotations)."""
        seats: dict[str, list[tuple[int, int]]] = {}
        for match_id, bot, start in self._db.execute(
            "SELECT match_id, bot, start_chips FROM seats ORDER BY match_id, seat"
        ):
            seats.setdefault(match_id, []).append((int(bot), int(start)))
        out = []
        for row in self._db.execute(
            "SELECT match_id, ordinal, round, table_no, rotation, seed, result FROM matches "
            "ORDER BY round, ordinal, match_id"
        ):
            match_id = str(row[0])
            taken = seats.get(match_id, [])
            key = MatchKey(
                match_id=match_id,
                ordinal=int(row[1]),
                round=int(row[2]),
                table=int(row[3]),
                rotation=int(row[4]),
                seed=int(row[5]),
                bots=tuple(bot for bot, _ in taken),
                start_chips=tuple(start for _, start in taken),
            )
            out.append(StoredMatch(key, MatchResult.from_json(json.loads(row[6]))))
        return out

    # ------------------------------------------------------------------ writing

    def record(self, key: MatchKey, result: MatchResult) -> None:
        """Write one finished match, its seats and faults, in one transaction.

        Raises ``StoreError`` if the database cannot be written (a full disk, a
        file made read-only): the transaction is rolled back whole, so the
        match is simply not finished and a resumed league plays it again.
        """
        if len(key.bots) != len(result.seats) or len(key.start_chips) != len(result.seats):
            raise ValueError(f"{key.match_id}: {len(result.seats)} seats, {len(key.bots)} bots")
        try:
            self._insert(key, result)
        except sqlite3.OperationalError as error:  # not IntegrityError: recording twice is a bug
            raise StoreError(f"{self.path}: cannot record match {key.match_id}: {error}") from None

    def _insert(self, key: MatchKey, result: MatchResult) -> None:
        with self._db:
            self._db.execute(
                "INSERT INTO matches (match_id, ordinal, round, table_no, rotation, seed, hands, "
                "reason, log_path, result, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key.match_id,
                    key.ordinal,
                    key.round,
                    key.table,
                    key.rotation,
                    key.seed,
                    result.hands,
                    result.reason,
                    None if result.log_path is None else str(result.log_path),
                    json.dumps(result.to_json(), sort_keys=True),
                    _now(),
                ),
            )
            self._db.executemany(
                "INSERT INTO seats (match_id, seat, bot, start_chips, place, chips, status, "
                "net_chips, boodle_chips, hands_won) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        key.match_id,
                        seat.seat,
                        key.bots[seat.seat],
                        key.start_chips[seat.seat],
                        seat.place,
                        seat.chips,
                        seat.status,
                        seat.net_chips,
                        seat.boodle_chips,
                        seat.hands_won,
                    )
                    for seat in result.seats
                ],
            )
            self._db.executemany(
                "INSERT INTO faults (match_id, seat, number, kind, hand, detail) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (key.match_id, seat.seat, number, fault.kind, fault.hand, fault.detail)
                    for seat in result.seats
                    for number, fault in enumerate(seat.faults)
                ],
            )

    # ------------------------------------------------------------------ inside

    def _has_schema(self) -> bool:
        row = self._db.execute(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'league'"
        ).fetchone()
        return bool(row[0])

    def _meta(self, key: str) -> str | None:
        if not self._has_schema():
            return None
        row = self._db.execute("SELECT value FROM league WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _check_version(self) -> None:
        version = self._meta("schema_version")
        if version != str(SCHEMA_VERSION):
            raise StoreError(
                f"{self.path}: database schema {version}, this newmarket reads {SCHEMA_VERSION}"
            )


def _connect(path: Path, *, readonly: bool) -> sqlite3.Connection:
    try:
        if readonly:
            connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(path)
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = FULL")
        connection.execute("PRAGMA busy_timeout = 10000")
        connection.execute("PRAGMA foreign_keys = ON")
        # Probe: a file that is not SQLite fails here, not at the first real query.
        connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except (sqlite3.Error, OSError) as error:
        raise StoreError(f"{path}: cannot open the league database: {error}") from None
    return connection


def first_difference(old: object, new: object, where: str = "") -> str:
    """The first key at which two JSON values differ, as ``key: OLD in the database, NEW now``."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(old) + [k for k in new if k not in old]:
            inner = f"{where}.{key}" if where else str(key)
            if key not in old:
                return f"{inner}: absent in the database, {json.dumps(new[key])} now"
            if key not in new:
                return f"{inner}: {json.dumps(old[key])} in the database, absent now"
            if old[key] != new[key]:
                return first_difference(old[key], new[key], inner)
    if isinstance(old, list) and isinstance(new, list):
        for index, (a, b) in enumerate(zip(old, new, strict=False)):
            if a != b:
                return first_difference(a, b, f"{where}[{index}]")
        if len(old) != len(new):
            return f"{where}: {len(old)} entries in the database, {len(new)} now"
    return f"{where or 'league'}: {json.dumps(old)} in the database, {json.dumps(new)} now"


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
