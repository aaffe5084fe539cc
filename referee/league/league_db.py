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

The database also keeps what the league file does not say and a resume must
find again: the league's *deal key* (``referee.match.dealkey``: 256 secret bits
drawn when the database is created, or ``public`` when the file opts in to
public deals), from which every match's cards come, and the league seed drawn
for a file that gives none.  The key never leaves this file and the league
process: a table worker is sent one match's derived seed (``MatchKey.deal_seed``).
A database made before deal keys existed dealt from public seeds, and goes on
doing so when resumed (``legacy_public_deals``), so that it ends as it began.

WAL journaling lets ``newmarket standings --db`` read while a league writes;
``synchronous=FULL`` makes a committed match survive a power cut as well as a
killed process.

One writer at a time: ``create_or_resume`` takes an exclusive ``flock`` on
``<db>.lock`` beside the database and holds it until ``close``, so a second
``newmarket league`` on the same database is refused at once, in one line
naming the process that has it, and nothing is written twice.  (SQLite's own
locks would let both run, each replaying the other's matches, and fail the
second with "UNIQUE constraint failed" at its first result.)  Readers take
no lock.

A damaged database (a page overwritten, a row with a value no league wrote)
is a ``StoreError`` naming the file and what is wrong, from every read:
``PRAGMA quick_check`` when it is opened, and a check of every row as it is
read, so ``standings``, ``report`` and ``league`` print one line, never a
traceback.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from referee.league.league_file import LeagueConfig
from referee.league.schedule import draw_league_seed
from referee.match.dealkey import DealKey
from referee.match.key import MatchKey
from referee.match.packed_result import pack, unpack
from referee.match.result import MatchResult
from referee.storage.sqlite import StoreError as StoreError  # re-exported: the commands' name
from referee.storage.sqlite import connect, damaged, lock_for_writing, quick_check

SCHEMA_VERSION = 1
DEAL_KEY = "deal_key"  # the league table's key for the deal key (``referee.match.dealkey``)
DRAWN_SEED = "drawn_seed"  # ... and for the league seed drawn for a file without one
LEGACY_DEALS = "legacy_deals"  # "1": made before deal keys, so its deals stay public
LEAGUE_DB = "league database"  # how errors name it (referee.storage.sqlite)
LEAGUE_ADVICE = "restore it from a copy, or use a new --db"

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
    result BLOB NOT NULL,         -- referee.match.packed_result (older rows: JSON text)
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
-- The schedule's order: the standings read only the matches after their saved tally, and
-- at 10^6 matches finding those by a scan of every row took longer than the rest.
CREATE INDEX IF NOT EXISTS matches_in_order ON matches(round, ordinal, match_id);
"""


@dataclasses.dataclass(frozen=True, slots=True)
class StoredMatch:
    key: MatchKey
    result: MatchResult


class LeagueStore:
    """An open results database. Use ``LeagueStore.create_or_resume`` or ``open_existing``."""

    def __init__(self, path: Path, connection: sqlite3.Connection, lock: int | None = None) -> None:
        self.path = path
        self._db = connection
        self._lock = lock  # the writer's lock file descriptor (None for a reader)
        # A database made before deal keys, resumed by this writer: it keeps public deals.
        self.legacy_public_deals = False

    # ------------------------------------------------------------------ opening

    @classmethod
    def create_or_resume(
        cls,
        path: Path,
        identity: Mapping[str, object],
        bots: Sequence[Mapping[str, object]],
        name: str = "league",
        drawn_seed: int | None = None,
    ) -> LeagueStore:
        """Open ``path`` for this league, creating it if new; refuse a different league.

        ``bots`` is each bot's spec as JSON, in league order (its names must
        be unique); ``name`` is the display name (not part of the identity).
        A new database draws its deal key (unless the identity asks for public
        deals) and, when the identity has no seed, keeps ``drawn_seed`` (or one
        drawn here) as the league seed.  Raises ``StoreError``.
        """
        identity_text = _canonical(identity)
        lock = lock_for_writing(path, "league process", "one league process per database")
        try:
            connection = connect(path, readonly=False, what=LEAGUE_DB)
        except BaseException:
            os.close(lock)
            raise
        store = cls(path, connection, lock)
        try:
            store._quick_check()
            store._db.executescript(_SCHEMA)
            with store._db:
                stored = store._meta("identity")
                if stored is None:
                    store._create(identity_text, identity, bots, name, drawn_seed)
                    return store
            store._resume(stored, identity_text, name)
            return store
        except sqlite3.DatabaseError as error:
            store.close()
            raise _damaged(path, error) from None
        except sqlite3.Error as error:  # a full disk, a read-only file: one line, no traceback
            store.close()
            raise StoreError(f"{path}: cannot write the league database: {error}") from None
        except BaseException:
            store.close()
            raise

    def _create(
        self,
        identity_text: str,
        identity: Mapping[str, object],
        bots: Sequence[Mapping[str, object]],
        name: str,
        drawn_seed: int | None,
    ) -> None:
        """A new database's rows, in the caller's transaction: identity, secrets, bots."""
        self._db.executemany(
            "INSERT INTO league (key, value) VALUES (?, ?)",
            [
                ("schema_version", str(SCHEMA_VERSION)),
                ("identity", identity_text),
                ("name", name),
                ("created", _now()),
                *_drawn(identity, drawn_seed),
            ],
        )
        self._db.executemany(
            "INSERT INTO bots (bot, name, spec) VALUES (?, ?, ?)",
            [(index, str(spec["name"]), _canonical(spec)) for index, spec in enumerate(bots)],
        )

    def _resume(self, stored: str, identity_text: str, name: str) -> None:
        """Resume the league stored here, or ``StoreError`` naming how the file differs."""
        self._check_version()
        if stored != identity_text:
            difference = first_difference(self.identity(), json.loads(identity_text))
            raise StoreError(
                f"{self.path} holds a different league ({difference}); "
                "use another --db, or the league file this database was made with"
            )
        with self._db:
            self._db.execute("REPLACE INTO league (key, value) VALUES ('name', ?)", (name,))
            if self._meta(DEAL_KEY) is None:  # made before deal keys: it stays public
                self._db.executemany(
                    "INSERT INTO league (key, value) VALUES (?, ?)",
                    [(DEAL_KEY, DealKey.public().to_text()), (LEGACY_DEALS, "1")],
                )
        self.legacy_public_deals = self._meta(LEGACY_DEALS) == "1"

    @classmethod
    def for_league(
        cls, path: Path, config: LeagueConfig, drawn_seed: int | None = None
    ) -> LeagueStore:
        """``create_or_resume`` for a checked league file."""
        return cls.create_or_resume(
            path,
            config.identity(),
            [spec.to_json() for spec in config.bots],
            config.name,
            drawn_seed,
        )

    @classmethod
    def open_existing(cls, path: Path) -> LeagueStore:
        """Open a league database read-only (``newmarket standings``); raises ``StoreError``."""
        if not path.is_file():
            raise StoreError(f"{path}: no such league database")
        store = cls(path, connect(path, readonly=True, what=LEAGUE_DB))
        try:
            store._quick_check()
            if not store._has_schema() or store._meta("identity") is None:
                raise StoreError(f"{path}: not a newmarket league database")
            store._check_version()
            return store
        except sqlite3.DatabaseError as error:
            store.close()
            raise _damaged(path, error) from None
        except BaseException:
            store.close()
            raise

    def close(self) -> None:
        self._db.close()
        if self._lock is not None:
            os.close(self._lock)  # releases the flock
            self._lock = None

    def __enter__(self) -> LeagueStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ reading

    def identity(self) -> dict[str, Any]:
        with self._reading("the league's identity"):
            text = self._meta("identity")
            value = json.loads(text or "")
            if not isinstance(value, dict):
                raise ValueError("not a JSON object")
            return value

    def name(self) -> str:
        with self._reading("the league's name"):
            return self._meta("name") or "league"

    def schedule_seed(self) -> int:
        """The league seed the schedule is built from: the file's, or the one drawn and kept."""
        seed = self.identity()["league"].get("seed")
        if seed is not None:
            return int(seed)
        with self._reading("the league's drawn seed"):
            return _whole(int(self._meta(DRAWN_SEED) or ""))

    def resolved_identity(self) -> dict[str, Any]:
        """The identity with the league seed filled in (drawn, when the file gives none):
        what the schedule, the standings and the bankroll rounds are computed from."""
        identity = self.identity()
        identity["league"] = {**identity["league"], "seed": self.schedule_seed()}
        return identity

    def deal_key(self) -> DealKey:
        """The key every match's cards come from (public for a league that opted in,
        or one made before deal keys).  Only the league process and its readers see it."""
        with self._reading("the league's deal key"):
            text = self._meta(DEAL_KEY)
            return DealKey.public() if text is None else DealKey.from_text(text)

    def bot_names(self) -> list[str]:
        with self._reading("the bots table"):
            rows = self._db.execute("SELECT name FROM bots ORDER BY bot").fetchall()
            return [str(row[0]) for row in rows]

    def finished_ids(self) -> set[str]:
        with self._reading("the matches table"):
            return {str(row[0]) for row in self._db.execute("SELECT match_id FROM matches")}

    def count(self) -> int:
        with self._reading("the matches table"):
            return int(self._db.execute("SELECT COUNT(*) FROM matches").fetchone()[0])

    def matches(
        self, after: tuple[int, int, str] | None = None, upto: tuple[int, int, str] | None = None
    ) -> list[StoredMatch]:
        """Every finished match, in schedule order (rounds, then tables, then rotations);
        with ``after`` (round, ordinal, match id), only those that come after it; with
        ``upto``, only those at or before it."""
        where = ["1"]
        bound: tuple[object, ...] = ()
        if after is not None:  # as SQLite compares row values: the schedule's order
            where, bound = [*where, "(m.round, m.ordinal, m.match_id) > (?, ?, ?)"], after
        if upto is not None:
            where, bound = [*where, "(m.round, m.ordinal, m.match_id) <= (?, ?, ?)"], bound + upto
        later = " AND ".join(where)
        with self._reading("the seats table"):
            seats: dict[str, list[tuple[int, int]]] = {}
            for match_id, bot, start in self._db.execute(
                "SELECT s.match_id, s.bot, s.start_chips FROM seats s JOIN matches m "
                f"USING (match_id) WHERE {later} ORDER BY m.round, m.ordinal, m.match_id, s.seat",
                bound,
            ):
                seats.setdefault(str(match_id), []).append((_whole(bot), _whole(start)))
            bots = len(self.bot_names())
        deals = self.deal_key()
        out = []
        with self._reading("the matches table"):
            rows = self._db.execute(
                "SELECT m.match_id, m.ordinal, m.round, m.table_no, m.rotation, m.seed, m.result "
                f"FROM matches m WHERE {later} ORDER BY m.round, m.ordinal, m.match_id",
                bound,
            ).fetchall()
        for row in rows:
            match_id = str(row[0])
            with self._reading(f"match {match_id}"):
                taken = seats.get(match_id, [])
                key = MatchKey(
                    match_id=match_id,
                    ordinal=_whole(row[1]),
                    round=_whole(row[2]),
                    table=_whole(row[3]),
                    rotation=_whole(row[4]),
                    seed=_whole(row[5]),
                    bots=tuple(bot for bot, _ in taken),
                    start_chips=tuple(start for _, start in taken),
                    deal_seed=deals.deal_seed(_whole(row[5])),
                )
                result = unpack(row[6])
                _check_result(key, result, bots)
            out.append(StoredMatch(key, result))
        return out

    def count_upto(self, last: tuple[int, int, str]) -> int:
        """How many finished matches come at or before ``last`` (round, ordinal, match id)."""
        with self._reading("the matches table"):
            (count,) = self._db.execute(
                "SELECT COUNT(*) FROM matches WHERE (round, ordinal, match_id) <= (?, ?, ?)", last
            ).fetchone()
        return _whole(count)

    @contextlib.contextmanager
    def _reading(self, what: str) -> Iterator[None]:
        """Turn a damaged page or a row no league wrote into one ``StoreError`` line."""
        try:
            yield
        except sqlite3.DatabaseError as error:
            raise _damaged(self.path, error) from None
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            detail = str(error) if isinstance(error, ValueError) else repr(error)
            raise StoreError(
                f"{self.path}: damaged league database: {what} holds a bad value "
                f"({' '.join(detail.split())[:160]})"
            ) from None

    # ------------------------------------------------------------------ writing

    def record(self, key: MatchKey, result: MatchResult) -> None:
        """Write one finished match, its seats and faults, in one transaction.

        Raises ``StoreError`` if the database cannot be written (a full disk, a
        file made read-only): the transaction is rolled back whole, so the
        match is simply not finished and a resumed league plays it again.
        """
        self.record_many([(key, result)])

    def record_many(self, matches: Iterable[tuple[MatchKey, MatchResult]]) -> int:
        """Write several finished matches in one transaction: the rows ``record`` writes for
        each, all or none of them; how many.

        For results made rather than played (``benchmarks/fit.py`` writes a league of
        10^6 generated matches): one commit, so one sync to disk, for the lot instead of
        one a match.  A league playing keeps ``record``, so a finished match is on disk
        before the next one starts.  Raises as ``record`` does.
        """
        rows: tuple[list[Row], list[Row], list[Row]] = ([], [], [])
        for key, result in matches:
            if len(key.bots) != len(result.seats) or len(key.start_chips) != len(result.seats):
                raise ValueError(f"{key.match_id}: {len(result.seats)} seats, {len(key.bots)} bots")
            _add_rows(rows, key, result)
        try:
            with self._db:
                self._db.executemany(_INSERT_MATCH, rows[0])
                self._db.executemany(_INSERT_SEAT, rows[1])
                self._db.executemany(_INSERT_FAULT, rows[2])
        except sqlite3.OperationalError as error:  # not IntegrityError: recording twice is a bug
            first = rows[0][0][0] if len(rows[0]) == 1 else f"{len(rows[0])} matches"
            raise StoreError(f"{self.path}: cannot record match {first}: {error}") from None
        return len(rows[0])

    # ------------------------------------------------------------------ inside

    def _quick_check(self) -> None:
        quick_check(self._db, self.path, LEAGUE_DB, LEAGUE_ADVICE)

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


Row = tuple[object, ...]
_INSERT_MATCH = (
    "INSERT INTO matches (match_id, ordinal, round, table_no, rotation, seed, hands, "
    "reason, log_path, result, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_SEAT = (
    "INSERT INTO seats (match_id, seat, bot, start_chips, place, chips, status, "
    "net_chips, boodle_chips, hands_won) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_FAULT = (
    "INSERT INTO faults (match_id, seat, number, kind, hand, detail) VALUES (?, ?, ?, ?, ?, ?)"
)


def _add_rows(
    rows: tuple[list[Row], list[Row], list[Row]], key: MatchKey, result: MatchResult
) -> None:
    """Append one finished match's rows (the match, its seats, its faults) to ``rows``."""
    rows[0].append(
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
            pack(result),  # about 170 bytes, not 1.2 KB of JSON: a league may keep 10^6
            _now(),
        )
    )
    rows[1].extend(
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
    )
    rows[2].extend(
        (key.match_id, seat.seat, number, fault.kind, fault.hand, fault.detail)
        for seat in result.seats
        for number, fault in enumerate(seat.faults)
    )


def _drawn(identity: Mapping[str, object], drawn_seed: int | None) -> list[tuple[str, str]]:
    """The secrets a new database draws: its deal key and, if the file has none, its seed."""
    league = identity.get("league")
    league = league if isinstance(league, dict) else {}
    key = DealKey.public() if league.get("public_deals") else DealKey.generate()
    rows = [(DEAL_KEY, key.to_text())]
    if league.get("seed") is None:
        seed = drawn_seed if drawn_seed is not None else draw_league_seed()
        rows.append((DRAWN_SEED, str(seed)))
    return rows


def _damaged(path: Path, error: sqlite3.Error) -> StoreError:
    return damaged(path, error, LEAGUE_DB, LEAGUE_ADVICE)


def _whole(value: object) -> int:
    """An integer column's value; a text or real a league never wrote is a ``ValueError``."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"expected a whole number, got {value!r}"[:80])
    return value


def _check_result(key: MatchKey, result: MatchResult, bots: int) -> None:
    """What standings and the report rely on in a stored result; ``ValueError`` if not so."""
    seats = len(result.seats)
    if seats != len(key.bots) or not seats:
        raise ValueError(f"{seats} seats in the result, {len(key.bots)} in the seats table")
    for seat in result.seats:
        for name in ("seat", "place", "chips", "net_chips", "boodle_chips", "hands_won"):
            _whole(getattr(seat, name))
        if not 1 <= seat.place <= seats or not 0 <= seat.seat < seats:
            raise ValueError(f"seat {seat.seat} has place {seat.place} of {seats}")
        if not isinstance(seat.status, str) or not isinstance(seat.faults, list):
            raise ValueError(f"seat {seat.seat} has status {seat.status!r}")
    if not all(0 <= bot < bots for bot in key.bots):
        raise ValueError(f"bots {list(key.bots)} are not all among the league's {bots}")


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
