"""The competition's one durable record (SQLite): participants, versions, groups, results.

Written by the server process alone (the CLI's ``add-participant``, ``pause``,
``resume`` and ``unsuspend`` write small rows from another process; WAL makes
that safe).
As in the league store (``referee.league.league_db``, whose ideas this follows; both are
opened, locked and checked by ``referee.storage.sqlite``):

* a finished match is written in one transaction (match, seats, faults) the
  moment its worker reports it, with ``synchronous=FULL``: a ``kill -9`` or a
  power cut loses at most the matches in progress;
* a match id is its place (``g<group>r<rotation>``) and is the primary key, so
  a match can never be recorded twice, and what is left of a group after a
  restart is its rotations minus the stored ones;
* a duplicate rotation group is written *before* it is played, so a restart
  finishes the groups it began instead of leaving half-played seeds behind.

Tokens are stored as SHA-256 hashes: the database alone signs nobody in.

The deal key (``referee.match.dealkey``; meta ``deal_key``, apart from the
session-signing ``secret``) is drawn when the database is made; every group's
cards come from it and the group's public seed, so this file is what the
organiser must keep secret for the cards to be.  A database made before deal
keys keeps dealing its earlier groups from their public seeds
(``secret_deals_from``), so that no group's rotations are dealt two ways.
While a group still has matches to play, its cards are dealt again at its
other seats: ``in_play`` tells the views which matches must show nothing of
their cards yet.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import json
import os
import secrets
import sqlite3
import time
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from referee.match.dealkey import DealKey
from referee.match.packed_result import pack, unpack
from referee.match.result import MatchResult
from referee.server.names import (
    NameRefusedError,
    check_script,
    looks_like,
    normal_name,
    reserved,
)
from referee.storage.sqlite import StoreError as StoreError  # re-exported: the server's name
from referee.storage.sqlite import connect, damaged, lock_for_writing, quick_check

SCHEMA_VERSION = 1
# A group (``g``) with matches still to play and not given up: ``in_play``.
_IN_PLAY = (
    "(g.abandoned = 0 AND (SELECT COUNT(*) FROM matches x WHERE x.group_id = g.id) "
    "< json_array_length(g.versions))"
)
# A match (``m``) the organiser has not left out of the fit: its group not re-run, and no
# version at it excluded (``referee.server.organiser``).
_COUNTED = (
    "m.group_id NOT IN (SELECT target FROM fit_exclusions WHERE kind = 'group') "
    "AND NOT EXISTS (SELECT 1 FROM seats x WHERE x.match_id = m.match_id AND x.version IN "
    "(SELECT target FROM fit_exclusions WHERE kind = 'version'))"
)
MAX_ROW_ID = 2**63 - 1  # SQLite's largest integer: a larger id names no row
DATABASE = "competition database"
ADVICE = "restore it from a copy, or start the competition with another data directory"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS participants (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL UNIQUE,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS versions (
    id INTEGER PRIMARY KEY,
    participant INTEGER NOT NULL REFERENCES participants(id),
    number INTEGER NOT NULL,          -- 1, 2, ... per participant
    runtime TEXT NOT NULL,
    filename TEXT NOT NULL,           -- as uploaded (shown escaped, never used as a path)
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    status TEXT NOT NULL,             -- pending | admitted | rejected | suspended | withdrawn
    detail TEXT NOT NULL DEFAULT '',  -- one line: why rejected, or what the check said
    transcript TEXT NOT NULL DEFAULT '', -- the failed step's transcript (owner only)
    spec TEXT,                        -- JSON BotSpec once built
    created_at REAL NOT NULL,
    decided_at REAL,
    UNIQUE (participant, number)
);
CREATE TABLE IF NOT EXISTS groups (
    id INTEGER PRIMARY KEY,
    seed INTEGER NOT NULL,
    versions TEXT NOT NULL,           -- JSON list: the table before rotation
    why TEXT NOT NULL,                -- the scheduler's reason, shown on the status page
    planned_at REAL NOT NULL,
    abandoned INTEGER NOT NULL DEFAULT 0  -- its table worker died twice: not resumed
);
CREATE TABLE IF NOT EXISTS matches (
    match_id TEXT PRIMARY KEY,
    group_id INTEGER NOT NULL REFERENCES groups(id),
    rotation INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    versions TEXT NOT NULL,           -- JSON list: version id at each seat
    hands INTEGER NOT NULL,
    reason TEXT NOT NULL,
    log_path TEXT,
    result BLOB NOT NULL,             -- referee.match.packed_result (older rows: JSON text)
    finished_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS seats (
    match_id TEXT NOT NULL REFERENCES matches(match_id),
    seat INTEGER NOT NULL,
    version INTEGER NOT NULL REFERENCES versions(id),
    place INTEGER NOT NULL,
    chips INTEGER NOT NULL,
    net_chips INTEGER NOT NULL,
    status TEXT NOT NULL,
    faults INTEGER NOT NULL,
    PRIMARY KEY (match_id, seat)
);
CREATE TABLE IF NOT EXISTS faults (
    match_id TEXT NOT NULL REFERENCES matches(match_id),
    seat INTEGER NOT NULL,
    number INTEGER NOT NULL,
    version INTEGER NOT NULL,
    kind TEXT NOT NULL,
    hand INTEGER NOT NULL,
    detail TEXT NOT NULL,
    PRIMARY KEY (match_id, seat, number)
);
CREATE TABLE IF NOT EXISTS suspensions (
    id INTEGER PRIMARY KEY,
    version INTEGER NOT NULL REFERENCES versions(id),
    why TEXT NOT NULL,                -- one line, shown on the version's page
    evidence TEXT NOT NULL,           -- JSON list: {"match": id, "what": one line}
    suspended_at REAL NOT NULL,
    lifted_at REAL,                   -- by `newmarket serve unsuspend`
    lifted_by TEXT
);
CREATE TABLE IF NOT EXISTS check_play (
    version INTEGER PRIMARY KEY REFERENCES versions(id),
    matches TEXT NOT NULL,            -- JSON list: {"match": id, "faults": n} of its check
    checked_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS flags (
    version INTEGER PRIMARY KEY REFERENCES versions(id),
    detail TEXT NOT NULL,             -- one line for the organiser
    evidence TEXT NOT NULL,           -- JSON list: {"match": id, "faults": n} in play
    flagged_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS suspensions_by_version ON suspensions(version);
CREATE INDEX IF NOT EXISTS seats_by_version ON seats(version);
CREATE INDEX IF NOT EXISTS matches_by_group ON matches(group_id);
CREATE INDEX IF NOT EXISTS faults_by_version ON faults(version);
"""

# Accounts: the server side of a signed-in browser, and the organiser's mark on house bots.
# Tables of their own, so a database made before them gains them at its next start.
_ACCOUNTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    token_hash TEXT PRIMARY KEY,      -- SHA-256 of the cookie's value: the file signs nobody in
    participant INTEGER NOT NULL REFERENCES participants(id),
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_by_participant ON sessions(participant);
CREATE TABLE IF NOT EXISTS house_participants (
    participant INTEGER PRIMARY KEY REFERENCES participants(id)  -- set from house_bots only
);
"""

# The organiser's control (``referee.server.organiser``): who is out, what the fit leaves out,
# which groups were played again, the organiser's own sign-in, and the audit log of it all.
_ORGANISER_SCHEMA = """
CREATE TABLE IF NOT EXISTS participant_standing (
    participant INTEGER PRIMARY KEY REFERENCES participants(id),
    state TEXT NOT NULL,              -- disabled | banned: none of its versions is seated
    since REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS fit_exclusions (
    kind TEXT NOT NULL,               -- version (every match it sat in) | group (all of it)
    target INTEGER NOT NULL,
    why TEXT NOT NULL,                -- the action that left it out: ban | withdraw | rerun
    at REAL NOT NULL,
    PRIMARY KEY (kind, target)
);
CREATE TABLE IF NOT EXISTS reruns (
    group_id INTEGER PRIMARY KEY REFERENCES groups(id),  -- played again, left out of the fit
    replacement INTEGER NOT NULL REFERENCES groups(id),  -- the same table, new cards
    at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS organiser_sessions (
    token_hash TEXT PRIMARY KEY,      -- SHA-256 of the cookie's value, as participants' sessions
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS audit_log (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    who TEXT NOT NULL,                -- organiser (the page or the API) | shell (the command)
    via TEXT NOT NULL,                -- page | api | cli
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    detail TEXT NOT NULL
);
"""

# Retention (``referee.server.retention``): the matches whose full record is kept for ever
# (a finals match, one somebody asked for), and the records pruned (the result stays).
_RETENTION_SCHEMA = """
CREATE TABLE IF NOT EXISTS kept_matches (
    match_id TEXT PRIMARY KEY,        -- may be named before it is played (a finals match)
    why TEXT NOT NULL,                -- one line: "finals", "asked for by alice", ...
    kept_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS version_files_removed (  -- referee.server.version_files
    version INTEGER PRIMARY KEY REFERENCES versions(id),
    removed_at REAL NOT NULL,
    bytes INTEGER NOT NULL            -- what its files/ held
);
CREATE TABLE IF NOT EXISTS pruned_records (
    match_id TEXT PRIMARY KEY REFERENCES matches(match_id),
    pruned_at REAL NOT NULL,
    days REAL NOT NULL,               -- the retention then, for the match page's line
    bytes INTEGER NOT NULL            -- what its files held
);
"""

# A contest's dates, finals, challenges and linked accounts (``referee.server.contest_db``).
# Finals' and challenges' matches are kept apart from ``matches``: the ladder never reads them.
_CONTEST_SCHEMA = """
CREATE TABLE IF NOT EXISTS phase_moves (
    phase TEXT PRIMARY KEY,           -- opens | freeze | finals | ends
    at TEXT NOT NULL,                 -- ISO 8601 with its zone: the organiser's new date
    moved_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS account_links (
    low INTEGER NOT NULL REFERENCES participants(id),   -- the smaller participant id
    high INTEGER NOT NULL REFERENCES participants(id),
    linked_at REAL NOT NULL,
    PRIMARY KEY (low, high)
);
CREATE TABLE IF NOT EXISTS finals (
    id INTEGER PRIMARY KEY,
    versions TEXT NOT NULL,           -- JSON list: the finalists' versions
    groups INTEGER NOT NULL,          -- duplicate groups to play
    seed INTEGER NOT NULL,            -- the public seed of its schedule and groups
    deal_key TEXT NOT NULL,           -- a fresh secret key: the finals' cards (dealkey)
    tables TEXT NOT NULL,             -- JSON list of lists: each group's table
    started_at REAL NOT NULL,
    finished_at REAL,
    ranking TEXT                      -- JSON: the published ranking, once every group is in
);
CREATE TABLE IF NOT EXISTS challenges (
    id INTEGER PRIMARY KEY,
    requester INTEGER NOT NULL REFERENCES participants(id),
    versions TEXT NOT NULL,           -- JSON list: the requester's version first
    seed INTEGER NOT NULL,
    deal_key TEXT NOT NULL,           -- fresh cards for this challenge alone
    status TEXT NOT NULL,             -- waiting | playing | finished | failed
    detail TEXT NOT NULL DEFAULT '',
    requested_at REAL NOT NULL,
    finished_at REAL
);
CREATE TABLE IF NOT EXISTS contest_matches (
    match_id TEXT PRIMARY KEY,        -- f<finals>g<group>r<rotation> | c<challenge>r<rotation>
    kind TEXT NOT NULL,               -- finals | challenge
    owner INTEGER NOT NULL,           -- the finals' or the challenge's id
    group_index INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    seed INTEGER NOT NULL,            -- the public identity, never the cards' seed
    versions TEXT NOT NULL,           -- JSON list: version at each seat
    hands INTEGER NOT NULL,
    net_chips TEXT NOT NULL,          -- JSON list per seat
    disqualified TEXT NOT NULL,       -- JSON list of bools per seat
    result BLOB NOT NULL,             -- referee.match.packed_result (older rows: JSON text)
    log_path TEXT,
    keep INTEGER NOT NULL DEFAULT 0,  -- 1: a finals match, whose log retention must keep
    finished_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS contest_matches_by_owner ON contest_matches(kind, owner);
CREATE TABLE IF NOT EXISTS contest_pruned (  -- as pruned_records, for contest_matches
    match_id TEXT PRIMARY KEY REFERENCES contest_matches(match_id),
    pruned_at REAL NOT NULL,
    days REAL NOT NULL,
    bytes INTEGER NOT NULL
);
"""


# What happened, for the participants' Atom feeds and the organiser's webhook: one row per
# event (``referee.server.events``), the webhook's outbox too (``delivered``).
_EVENTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    participant INTEGER REFERENCES participants(id),  -- NULL: everyone's (a phase change)
    kind TEXT NOT NULL,               -- admitted | rejected | crash | timeout | phase | ...
    title TEXT NOT NULL,              -- one line, public
    link TEXT NOT NULL,               -- the page it is about, a path (/matches/g3r1)
    detail TEXT NOT NULL DEFAULT '',  -- public text (a rejection's failing step)
    once TEXT UNIQUE,                 -- a key published at most once (first crash of v3)
    at REAL NOT NULL,
    delivered INTEGER NOT NULL DEFAULT 0,  -- 1: the webhook took it (or there is none)
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS events_by_participant ON events(participant, id);
CREATE INDEX IF NOT EXISTS events_to_deliver ON events(delivered, next_attempt);
"""

# Every table, in the order they are made (a later block may refer to an earlier one's).
_ALL_SCHEMAS = (
    _SCHEMA
    + _ACCOUNTS_SCHEMA
    + _ORGANISER_SCHEMA
    + _RETENTION_SCHEMA
    + _CONTEST_SCHEMA
    + _EVENTS_SCHEMA
)


def lock_for_serving(path: Path) -> int:
    """An exclusive ``flock`` on ``<database>.lock`` for one server's life (its descriptor).

    Two servers on one data directory both admitted the same pending versions
    (unpacking one directory at once) and both planned and played groups;
    SQLite's own locks let them.  So a second is refused at once with
    ``StoreError`` naming the first's pid.  The management commands take no
    lock: they write while the server runs.  The kernel drops the lock with
    the process, so a ``kill -9`` never leaves a stale one behind.
    """
    check_place(path)
    return lock_for_writing(path, "the server process", "one server per competition")


def _locked(path: Path, busy_timeout: float) -> str:
    """Why a store could not be opened: another process held it for writing too long."""
    return (
        f"{path}: locked by another process for {busy_timeout:g} s "
        "(a management command, or sqlite3 with a transaction open?); try again"
    )


# The tables every competition database has had since schema 1: one of them missing is a
# damaged file, not an old one (a newer table missing is made, CREATE TABLE IF NOT EXISTS).
FIRST_TABLES = ("meta", "participants", "versions", "groups", "matches", "seats", "faults")


def _expected_columns() -> dict[str, set[str]]:
    """Each table of the schema and its columns, read from the schema itself."""
    scratch = sqlite3.connect(":memory:")
    try:
        scratch.executescript(_ALL_SCHEMAS)
        return _columns(scratch)
    finally:
        scratch.close()


def _columns(connection: sqlite3.Connection) -> dict[str, set[str]]:
    tables = [
        str(name)
        for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    return {
        table: {str(row[1]) for row in connection.execute(f"PRAGMA table_info({table!r})")}
        for table in tables
    }


def check_place(path: Path) -> None:
    """``StoreError`` if ``path`` cannot hold the database: its directory is a file, it is a
    directory, it cannot be read and written, or its write-ahead log is there without it."""
    folder = path.parent
    if folder.exists() and not folder.is_dir():
        raise StoreError(f"{folder}: not a directory, so it cannot hold the {DATABASE}")
    if path.is_dir():
        raise StoreError(f"{path}: a directory where the {DATABASE} file should be")
    wal = path.with_name(path.name + "-wal")
    if not path.exists() and wal.exists():
        # SQLite would start an empty database beside it and overwrite the log.
        raise StoreError(
            f"{path}: missing, but its write-ahead log {wal.name} is there: the database "
            f"was moved or deleted without it; put it back beside the log, or move "
            f"{wal.name} away to start an empty competition"
        )
    for place in (path, folder) if path.exists() else (folder,):
        if not place.exists() or os.access(place, os.R_OK | os.W_OK):
            continue
        if os.statvfs(place).f_flag & os.ST_RDONLY:
            raise StoreError(f"{path}: on a read-only file system; the server writes here")
        what = "it" if place == path else f"its directory {folder}"
        raise StoreError(f"{path}: no permission to read and write {what}")


def check_tables(connection: sqlite3.Connection, path: Path) -> None:
    """``StoreError`` if the file holds another program's tables, lacks a table every
    competition database has, or has one of another shape; before anything is written."""
    found = _columns(connection)
    if not found:
        return  # a new file
    expected = _expected_columns()
    ours = (
        "meta" in found
        and connection.execute("SELECT 1 FROM meta WHERE key = 'schema_version'").fetchone()
    )
    if not ours:
        strangers = sorted(set(found) - set(expected))
        if strangers:  # else a first start cut short before its schema version: finished now
            raise StoreError(
                f"{path}: not a {DATABASE}: it holds other tables ({', '.join(strangers[:5])}); "
                "name another data directory in the competition file"
            )
    version = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if version is not None and str(version[0]) != str(SCHEMA_VERSION):
        raise StoreError(f"{path}: schema {version[0]}; this server reads {SCHEMA_VERSION}")
    if ours:
        missing = [table for table in FIRST_TABLES if table not in found]
        if missing:
            raise StoreError(
                f"{path}: damaged {DATABASE}: table {', '.join(missing)} is missing ({ADVICE})"
            )
    for table, columns in expected.items():
        lacking = sorted(columns - found.get(table, columns))
        if lacking:
            raise StoreError(
                f"{path}: damaged {DATABASE}: table {table} has no column "
                f"{', '.join(lacking)} ({ADVICE})"
            )


def _plainer(message: str, path: Path) -> str:
    """SQLite's words for a file it cannot open, with what usually causes them."""
    if message.endswith("unable to open database file"):
        return f"{message} (its directory cannot be written, or the file system is full?)"
    if "readonly database" in message or "Read-only file system" in message:
        return f"{message} (the file or its file system is read-only)"
    return message


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def match_id(group: int, rotation: int) -> str:
    return f"g{group}r{rotation}"


@dataclasses.dataclass(frozen=True)
class Participant:
    id: int
    name: str
    created_at: float


@dataclasses.dataclass(frozen=True)
class Version:
    id: int
    participant: int
    participant_name: str
    number: int
    runtime: str
    filename: str
    sha256: str
    size: int
    status: str
    detail: str
    transcript: str
    spec: dict[str, Any] | None
    created_at: float
    decided_at: float | None

    @property
    def label(self) -> str:
        """How the leaderboard names a version: ``alice v3``."""
        return f"{self.participant_name} v{self.number}"


@dataclasses.dataclass(frozen=True)
class Group:
    id: int
    seed: int
    versions: tuple[int, ...]
    why: str


# A finished match as ``record_many`` takes it: ``record``'s arguments (``identity`` last).
Finished = tuple[Group, int, Sequence[int], MatchResult, Path | None, int]


@dataclasses.dataclass(frozen=True)
class GroupDeals:
    """The competition's deal key, and the first group dealt from it (``group_deals``)."""

    key: DealKey
    secret_from: int  # groups planned before deal keys existed deal their public seeds

    def deal_seed(self, group: int, identity: int) -> int:
        """The engine's seed for a match of ``group`` whose public seed is ``identity``."""
        if group < self.secret_from:
            return identity
        return self.key.deal_seed(identity)


@dataclasses.dataclass(frozen=True)
class PlayedMatch:
    """One finished match as the leaderboard's fit reads it: who sat where, and what they won."""

    group_id: int
    rotation: int
    seed: int  # the group's deal seed, or the rotation's own at the remote table
    versions: tuple[int, ...]  # the version at each seat
    net_chips: tuple[int, ...]  # each seat's chips won (or lost, negative)
    hands: int
    disqualified: tuple[bool, ...] = ()  # per seat, when known (the chips score caps them)


@dataclasses.dataclass(frozen=True)
class FaultRow:
    match_id: str
    seat: int
    version: int
    kind: str
    hand: int
    detail: str


def _connect_checked(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """A writer's connection to a file that is whole and holds this server's tables (or none)."""
    try:  # set up as the league's database is (WAL, synchronous=FULL), and checked
        connection = connect(path, readonly=False, what=DATABASE, autocommit=True, any_thread=True)
        connection.execute(f"PRAGMA busy_timeout = {round(busy_timeout * 1000)}")
        quick_check(connection, path, DATABASE, ADVICE)
    except StoreError as error:
        raise StoreError(_plainer(str(error), path)) from None
    try:
        check_tables(connection, path)
    except StoreError:
        connection.close()
        raise
    except sqlite3.DatabaseError as error:
        connection.close()
        raise damaged(path, error, DATABASE, ADVICE) from None
    return connection


def _make_schema(connection: sqlite3.Connection, path: Path, busy_timeout: float) -> None:
    """The tables a newer schema added, made if missing; closes the connection if it cannot."""
    try:
        # executescript commits whatever is open before it runs, so the script
        # is its own transaction: the whole schema, or none of it.
        connection.executescript("BEGIN IMMEDIATE;" + _ALL_SCHEMAS + "COMMIT;")
    except sqlite3.DatabaseError as error:
        connection.close()
        if "database is locked" in str(error):
            raise StoreError(_locked(path, busy_timeout)) from None
        raise StoreError(f"{path}: not a usable {DATABASE}: {error}") from None


def _first_meta(connection: sqlite3.Connection, path: Path, busy_timeout: float) -> None:
    """The schema version and the secrets, each written once, in the database's first start.

    Both in one transaction, each only if missing: written one after the other, a
    kill -9 between them left no secret, and every later start signed sessions and
    tokens with the empty key.  OR IGNORE also heals such a database, and keeps the
    first secret when the server and a management command create the file at once.
    """
    try:
        with connection:
            connection.execute("BEGIN IMMEDIATE")
            for key, value in (
                ("schema_version", str(SCHEMA_VERSION)),
                ("secret", secrets.token_hex(32)),
                ("deal_key", DealKey.generate().to_text()),
            ):
                connection.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (key, value)
                )
            # Set once: 1 for a new database, after the last group for an older one.
            connection.execute(
                "INSERT OR IGNORE INTO meta (key, value) SELECT 'secret_deals_from', "
                "CAST(COALESCE(MAX(id), 0) + 1 AS TEXT) FROM groups"
            )
    except sqlite3.DatabaseError as error:
        connection.close()
        if "database is locked" in str(error):
            raise StoreError(_locked(path, busy_timeout)) from None
        raise StoreError(f"{path}: cannot write the {DATABASE}: {error}") from None


class CompetitionStore:
    """An open competition database (``CompetitionStore.open``)."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._db = connection

    @classmethod
    def open(cls, path: Path, busy_timeout: float = 10.0) -> CompetitionStore:
        """``busy_timeout``: seconds a write waits for another process's lock before it
        raises ``database is locked`` (``referee.server.busy`` retries it in the server).

        A file that cannot be this server's database is ``StoreError``, one line naming
        it and what is wrong (``check_place``, ``check_tables``): nothing is written to it.
        """
        check_place(path)
        connection = _connect_checked(path, busy_timeout)
        _make_schema(connection, path, busy_timeout)
        _first_meta(connection, path, busy_timeout)
        return cls(path, connection)

    def wait_for_locks(self, seconds: float) -> None:
        """From now on, each write waits this long for another process's lock before it
        raises ``database is locked`` (``open``'s ``busy_timeout``)."""
        self._db.execute(f"PRAGMA busy_timeout = {round(seconds * 1000)}")

    @classmethod
    def reader(cls, path: Path) -> CompetitionStore:
        """A second connection for reading in worker threads (WAL: it never blocks the writer);
        one thread at a time."""
        connection = connect(path, readonly=True, what=DATABASE, autocommit=True, any_thread=True)
        return cls(path, connection)

    def close(self) -> None:
        self._db.close()

    @property
    def connection(self) -> sqlite3.Connection:
        """For the modules that keep tables of their own here (``organiser``, ``contest_db``,
        ``events``)."""
        return self._db

    # ------------------------------------------------------------------ meta

    def meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    @property
    def secret(self) -> bytes:
        return bytes.fromhex(self.meta("secret") or "")

    def group_deals(self, public: bool) -> GroupDeals:
        """Where each group's cards come from; ``public`` is the file's ``public_deals``.

        The choice is the competition's first start's, kept in ``meta``: a group
        planned under one and resumed under the other would deal its rotations
        two ways, so a file that changes it is a ``StoreError``.
        """
        wanted = "1" if public else "0"
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('public_deals', ?)", (wanted,)
            )
        if self.meta("public_deals") != wanted:
            first = "public" if wanted == "0" else "secret"
            raise StoreError(
                f"{self.path}: competition.public_deals: this competition has dealt {first} "
                "cards since its first start and keeps them (use another data directory)"
            )
        key_text = self.meta("deal_key")
        if key_text is None:
            raise StoreError(f"{self.path}: damaged {DATABASE}: no deal key ({ADVICE})")
        try:
            key = DealKey.public() if public else DealKey.from_text(key_text)
            secret_from = int(self.meta("secret_deals_from") or "1")
        except ValueError:
            damaged = f"{self.path}: damaged {DATABASE}: a bad deal key ({ADVICE})"
            raise StoreError(damaged) from None
        return GroupDeals(key, secret_from)

    @property
    def paused(self) -> bool:
        return self.meta("paused") == "1"

    def set_paused(self, paused: bool) -> None:
        self.set_meta("paused", "1" if paused else "0")

    # ------------------------------------------------------------------ participants

    def add_participant(self, name: str, *, house: bool = False) -> tuple[Participant, str]:
        """A new participant and its token (shown once; only its hash is kept).

        The name is put in its normal form and refused (``StoreError``) when it
        breaks ``referee.server.names``' rule or looks like a name already here.
        ``house``: one of the organiser's house bots, named ``house:BOT`` by the
        server itself (``Competition.ensure_house_bots``) and marked as such.
        """
        if house:
            name = name.strip()
        else:
            try:
                name = normal_name(name)
            except NameRefusedError as error:
                raise StoreError(str(error)) from None
            word = reserved(name)
            if word is not None:
                raise StoreError(f"participant name {name!r} is reserved (it looks like {word!r})")
        token = secrets.token_urlsafe(24)
        now = time.time()
        # One transaction from the look at the names to the new row: a registration on the
        # web and an organiser's add-participant at once cannot both take one look-alike.
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            for (existing,) in self._db.execute("SELECT name FROM participants"):
                if existing == name:
                    raise StoreError(f"participant name {name!r} is taken")
                if not house and looks_like(name, str(existing)):
                    raise StoreError(
                        f"participant name {name!r} is taken: it looks like {existing!r}"
                    )
            if not house:
                try:
                    check_script(name)
                except NameRefusedError as error:
                    raise StoreError(str(error)) from None
            cursor = self._db.execute(
                "INSERT INTO participants (name, token_hash, created_at) VALUES (?, ?, ?)",
                (name, hash_token(token), now),
            )
            assert cursor.lastrowid is not None
            if house:
                self._db.execute(
                    "INSERT INTO house_participants (participant) VALUES (?)", (cursor.lastrowid,)
                )
        return Participant(cursor.lastrowid, name, now), token

    def mark_house(self, participant: int) -> None:
        """Make ``participant`` one of the organiser's house bots (``add_participant``'s mark)."""
        self._db.execute(
            "INSERT OR IGNORE INTO house_participants (participant) VALUES (?)", (participant,)
        )

    def house_participants(self) -> set[int]:
        """The participants the organiser's competition file made house bots."""
        return {int(p) for (p,) in self._db.execute("SELECT participant FROM house_participants")}

    # ------------------------------------------------------------------ sessions

    def open_session(self, participant: int, seconds: float) -> str:
        """A new signed-in session for ``participant``: the cookie's value (only its hash is
        kept), good for ``seconds`` unless ended first.  Expired sessions are cleared."""
        token = secrets.token_urlsafe(32)
        now = time.time()
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("DELETE FROM sessions WHERE expires_at < ?", (now,))
            self._db.execute(
                "INSERT INTO sessions (token_hash, participant, created_at, expires_at) "
                "VALUES (?, ?, ?, ?)",
                (hash_token(token), participant, now, now + seconds),
            )
        return token

    def session_participant(self, token: str) -> Participant | None:
        """The participant of a live session, or None (unknown, ended or expired)."""
        row = self._db.execute(
            "SELECT p.id, p.name, p.created_at FROM sessions s JOIN participants p "
            "ON p.id = s.participant WHERE s.token_hash = ? AND s.expires_at >= ?",
            (hash_token(token), time.time()),
        ).fetchone()
        return None if row is None else Participant(*row)

    def end_session(self, token: str) -> None:
        self._db.execute("DELETE FROM sessions WHERE token_hash = ?", (hash_token(token),))

    def end_sessions(self, participant: int) -> int:
        """End every session of ``participant`` (signed out everywhere); how many there were."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            (live,) = self._db.execute(
                "SELECT COUNT(*) FROM sessions WHERE participant = ? AND expires_at >= ?",
                (participant, time.time()),
            ).fetchone()
            self._db.execute("DELETE FROM sessions WHERE participant = ?", (participant,))
        return int(live)

    def participant_by_token(self, token: str) -> Participant | None:
        row = self._db.execute(
            "SELECT id, name, created_at FROM participants WHERE token_hash = ?",
            (hash_token(token),),
        ).fetchone()
        return None if row is None else Participant(*row)

    def participant(self, participant_id: int) -> Participant | None:
        if not 0 < participant_id <= MAX_ROW_ID:
            return None
        row = self._db.execute(
            "SELECT id, name, created_at FROM participants WHERE id = ?", (participant_id,)
        ).fetchone()
        return None if row is None else Participant(*row)

    def participant_by_name(self, name: str) -> Participant | None:
        row = self._db.execute(  # names are kept in NFKC (referee.server.names)
            "SELECT id, name, created_at FROM participants WHERE name IN (?, ?)",
            (name, unicodedata.normalize("NFKC", name)),
        ).fetchone()
        return None if row is None else Participant(*row)

    def participants(self) -> list[Participant]:
        rows = self._db.execute("SELECT id, name, created_at FROM participants ORDER BY id")
        return [Participant(*row) for row in rows]

    # ------------------------------------------------------------------ versions

    _VERSION_COLUMNS = (
        "v.id, v.participant, p.name, v.number, v.runtime, v.filename, v.sha256, v.size, "
        "v.status, v.detail, v.transcript, v.spec, v.created_at, v.decided_at"
    )

    def _version(self, row: Sequence[Any]) -> Version:
        values = list(row)
        with self._reading(f"version {values[0]}"):
            values[11] = None if values[11] is None else json.loads(values[11])
        return Version(*values)

    @contextlib.contextmanager
    def _reading(self, what: str) -> Iterator[None]:
        """A row no server wrote (a value of another type, JSON cut short) as one line."""
        try:
            yield
        except (ValueError, KeyError, TypeError, AttributeError, IndexError) as error:
            detail = str(error) if isinstance(error, ValueError) else repr(error)
            raise StoreError(
                f"{self.path}: damaged {DATABASE}: {what} holds a bad value "
                f"({' '.join(detail.split())[:160]}; {ADVICE})"
            ) from None

    def add_version(
        self, participant: int, runtime: str, filename: str, sha256: str, size: int
    ) -> Version:
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            (number,) = self._db.execute(
                "SELECT COALESCE(MAX(number), 0) + 1 FROM versions WHERE participant = ?",
                (participant,),
            ).fetchone()
            cursor = self._db.execute(
                "INSERT INTO versions (participant, number, runtime, filename, sha256, size, "
                "status, created_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)",
                (participant, number, runtime, filename, sha256, size, time.time()),
            )
        assert cursor.lastrowid is not None
        version = self.version(cursor.lastrowid)
        assert version is not None
        return version

    def forget_version(self, version: int) -> None:
        """Remove a pending version that was never stored whole (the server's disk was full).

        Nothing refers to a pending version yet (it is in no group), and its
        participant's next upload takes its number again.
        """
        self._db.execute("DELETE FROM versions WHERE id = ? AND status = 'pending'", (version,))

    def decide(
        self,
        version: int,
        status: str,
        detail: str,
        transcript: str = "",
        spec: dict[str, Any] | None = None,
    ) -> None:
        self._db.execute(
            "UPDATE versions SET status = ?, detail = ?, transcript = ?, spec = ?, decided_at = ? "
            "WHERE id = ?",
            (
                status,
                detail,
                transcript,
                None if spec is None else json.dumps(spec),
                time.time(),
                version,
            ),
        )

    def version(self, version_id: int) -> Version | None:
        if not 0 < version_id <= MAX_ROW_ID:  # SQLite's integers end here: above, no such row
            return None
        row = self._db.execute(
            f"SELECT {self._VERSION_COLUMNS} FROM versions v JOIN participants p "
            "ON p.id = v.participant WHERE v.id = ?",
            (version_id,),
        ).fetchone()
        return None if row is None else self._version(row)

    def versions(self, participant: int | None = None, status: str | None = None) -> list[Version]:
        where: list[str] = []
        args: list[object] = []
        if participant is not None:
            where.append("v.participant = ?")
            args.append(participant)
        if status is not None:
            where.append("v.status = ?")
            args.append(status)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows = self._db.execute(
            f"SELECT {self._VERSION_COLUMNS} FROM versions v JOIN participants p "
            f"ON p.id = v.participant {clause} ORDER BY v.id",
            args,
        )
        return [self._version(row) for row in rows]

    def playing_versions(self) -> list[Version]:
        """Each participant's newest admitted version: the ones the scheduler seats (none of
        a participant the organiser disabled or banned)."""
        newest: dict[int, Version] = {}
        # A superseded version whose files retention removed never plays again
        # (``referee.server.version_files``): the newest one with its files does.
        gone = self.versions_without_files()
        for version in self.ranked_versions():
            if version.id not in gone:
                newest[version.participant] = version
        return sorted(newest.values(), key=lambda v: v.id)

    def versions_without_files(self) -> set[int]:
        """The versions whose files retention removed (``referee.server.version_files``):
        no table can start them again."""
        rows = self._db.execute("SELECT version FROM version_files_removed")
        return {int(version) for (version,) in rows}

    def ranked_versions(self) -> list[Version]:
        """The admitted versions the leaderboard ranks: not those of a participant the
        organiser disabled or banned (``referee.server.organiser``)."""
        out = {int(p) for (p,) in self._db.execute("SELECT participant FROM participant_standing")}
        return [v for v in self.versions(status="admitted") if v.participant not in out]

    def uploads_since(self, participant: int, since: float) -> int:
        (count,) = self._db.execute(
            "SELECT COUNT(*) FROM versions WHERE participant = ? AND created_at >= ?",
            (participant, since),
        ).fetchone()
        return int(count)

    # ------------------------------------------------------------------ groups and matches

    def plan_group(self, seed: int, versions: Sequence[int], why: str) -> Group:
        cursor = self._db.execute(
            "INSERT INTO groups (seed, versions, why, planned_at) VALUES (?, ?, ?, ?)",
            (seed, json.dumps(list(versions)), why, time.time()),
        )
        assert cursor.lastrowid is not None
        return Group(cursor.lastrowid, seed, tuple(versions), why)

    def group_count(self) -> int:
        (count,) = self._db.execute("SELECT COUNT(*) FROM groups").fetchone()
        return int(count)

    def unfinished_groups(self) -> list[tuple[Group, set[int]]]:
        """Groups with rotations still to play, and the rotations already stored."""
        found = []
        for gid, seed, versions, why in self._db.execute(
            "SELECT id, seed, versions, why FROM groups WHERE abandoned = 0 ORDER BY id"
        ).fetchall():
            with self._reading(f"group {gid}"):
                table = tuple(int(v) for v in json.loads(versions))
            done = self.rotations_done(gid)
            if len(done) < len(table):
                found.append((Group(gid, seed, table, why), done))
        return found

    def record(
        self,
        group: Group,
        rotation: int,
        versions: Sequence[int],
        result: MatchResult,
        log_path: Path | None,
        *,
        identity: int,
    ) -> bool:
        """Store one finished match in one transaction; False if it was already stored.

        ``identity`` is the match's public seed (``MatchKey.seed``): the ``seed``
        column keeps it, never the secret one the cards came from (``result.seed``).
        """
        return self.record_many([(group, rotation, versions, result, log_path, identity)]) == 1

    def record_many(self, matches: Iterable[Finished]) -> int:
        """Store several finished matches in one transaction (one already stored is
        skipped); how many were new.  ``record`` is this with one match.

        For results made rather than played (``benchmarks/fit.py``'s competition of
        10^6 generated matches): one commit, so one sync to disk, for the lot.  The
        server keeps ``record``, so each result is on disk the moment it is reported.
        """
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            return sum(self._insert(match) for match in matches)

    def _insert(self, match: Finished) -> bool:
        """One finished match's rows, in the caller's transaction; False if already stored."""
        group, rotation, versions, result, log_path, identity = match
        mid = match_id(group.id, rotation)
        stored = self._db.execute("SELECT 1 FROM matches WHERE match_id = ?", (mid,)).fetchone()
        if stored is not None:
            return False  # already stored: a match is never counted twice
        self._db.execute(
            "INSERT INTO matches (match_id, group_id, rotation, seed, versions, hands, "
            "reason, log_path, result, finished_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (
                mid,
                group.id,
                rotation,
                identity,  # the group's, or the rotation's own with a remote bot
                json.dumps(list(versions)),
                result.hands,
                result.reason,
                None if log_path is None else str(log_path),
                pack(result),  # about 170 bytes, not 1.2 KB of JSON: results are kept for ever
                time.time(),
            ),
        )
        for seat in result.seats:
            version = versions[seat.seat]
            self._db.execute(
                "INSERT INTO seats (match_id, seat, version, place, chips, net_chips, "
                "status, faults) VALUES (?,?,?,?,?,?,?,?)",
                (
                    mid,
                    seat.seat,
                    version,
                    seat.place,
                    seat.chips,
                    seat.net_chips,
                    seat.status,
                    len(seat.faults),
                ),
            )
            for number, fault in enumerate(seat.faults):
                self._db.execute(
                    "INSERT INTO faults (match_id, seat, number, version, kind, hand, "
                    "detail) VALUES (?,?,?,?,?,?,?)",
                    (mid, seat.seat, number, version, fault.kind, fault.hand, fault.detail),
                )
        return True

    def abandon_group(self, group: int) -> None:
        self._db.execute("UPDATE groups SET abandoned = 1 WHERE id = ?", (group,))

    def rotations_done(self, group: int) -> set[int]:
        rows = self._db.execute("SELECT rotation FROM matches WHERE group_id = ?", (group,))
        return {int(r) for (r,) in rows}

    def recent_group_participants(self, groups: int) -> list[int]:
        """The participant of every seat of the last ``groups`` groups planned, oldest first."""
        seats: list[int] = []
        rows = self._db.execute(
            "SELECT versions FROM groups ORDER BY id DESC LIMIT ?", (groups,)
        ).fetchall()
        for (versions,) in reversed(rows):
            with self._reading("a group"):
                table = [int(v) for v in json.loads(versions)]
            for version in table:
                row = self._db.execute(
                    "SELECT participant FROM versions WHERE id = ?", (version,)
                ).fetchone()
                if row is not None:
                    seats.append(int(row[0]))
        return seats

    def match_count(self) -> int:
        (count,) = self._db.execute("SELECT COUNT(*) FROM matches").fetchone()
        return int(count)

    def played_matches(self) -> list[PlayedMatch]:
        """Every finished match, by group then rotation (the leaderboard's input)."""
        nets: dict[str, dict[int, tuple[int, bool]]] = {}
        for match_id, seat, net, status in self._db.execute(
            "SELECT match_id, seat, net_chips, status FROM seats"
        ):
            nets.setdefault(match_id, {})[int(seat)] = (int(net), status == "disqualified")
        played = []
        for match_id, group_id, rotation, seed, versions, hands in self._db.execute(
            "SELECT match_id, group_id, rotation, seed, versions, hands FROM matches "
            "ORDER BY group_id, rotation"
        ):
            with self._reading(f"match {match_id}"):
                seats = tuple(int(v) for v in json.loads(versions))
            by_seat = nets.get(match_id, {})
            if len(by_seat) != len(seats):
                continue  # not possible through record_match's one transaction; never guessed
            net = tuple(by_seat[seat][0] for seat in range(len(seats)))
            out = tuple(by_seat[seat][1] for seat in range(len(seats)))
            played.append(
                PlayedMatch(int(group_id), int(rotation), int(seed), seats, net, int(hands), out)
            )
        return played

    def played_since(self, after: int = 0) -> tuple[int, list[PlayedMatch]]:
        """The finished matches stored after row ``after`` (0: all) in the order they were
        stored, and the row of the last (the leaderboard's fit reads only what is new).

        One statement, so one snapshot: a match and its seats are written in one
        transaction, and either both are seen or neither.
        """
        played: list[PlayedMatch] = []
        last = after
        # Without exclusions (the common case) the fit reads every match, at no extra cost.
        excluding = self._db.execute("SELECT 1 FROM fit_exclusions LIMIT 1").fetchone()
        rows = self._db.execute(
            "SELECT m.rowid, m.group_id, m.rotation, m.seed, m.hands, m.versions, "
            "s.seat, s.net_chips, s.status FROM matches m JOIN seats s USING (match_id) "
            f"WHERE m.rowid > ? {f'AND {_COUNTED}' if excluding else ''} "
            "ORDER BY m.rowid, s.seat",
            (after,),
        )
        for rowid, grouped in itertools.groupby(rows, key=lambda row: row[0]):
            seats = list(grouped)
            _, group_id, rotation, seed, hands, held = seats[0][:6]
            holders = tuple(int(v) for v in json.loads(held))
            last = int(rowid)
            if [int(row[6]) for row in seats] != list(range(len(holders))):
                continue  # not possible through record's one transaction; never guessed
            played.append(
                PlayedMatch(
                    int(group_id),
                    int(rotation),
                    int(seed),
                    holders,
                    tuple(int(row[7]) for row in seats),
                    int(hands),
                    tuple(row[8] == "disqualified" for row in seats),
                )
            )
        return last, played

    def net_chips_history(self, version: int) -> list[tuple[int, float]]:
        """A version's net chips and finishing time in each of its matches, in order;
        without the matches still ``in_play`` (one match's chips are its deal's)."""
        rows = self._db.execute(
            "SELECT s.net_chips, m.finished_at FROM seats s JOIN matches m USING (match_id) "
            f"JOIN groups g ON g.id = m.group_id WHERE s.version = ? AND NOT {_IN_PLAY} "
            "ORDER BY m.finished_at, s.match_id",
            (version,),
        )
        return [(int(net), float(at)) for net, at in rows]

    def in_play(self, match_ids: Iterable[str]) -> set[str]:
        """Of ``match_ids``, the finished matches whose group still has matches to play.

        A group's rotations are dealt the same cards (a remote group deals each
        rotation its own, but is held back alike), so until the last of them
        finishes, a finished one's cards, seed, chips and fault details stay
        unpublished: a bot still to play them could read the web.  A group
        given up (``abandoned``) is never dealt again, and so is not in play.
        """
        wanted = sorted(set(match_ids))
        found: set[str] = set()
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                "SELECT m.match_id FROM matches m JOIN groups g ON g.id = m.group_id "
                f"WHERE m.match_id IN ({marks}) AND {_IN_PLAY}",
                chunk,
            )
            found.update(str(mid) for (mid,) in rows)
        return found

    def group_progress(self, group: int) -> tuple[int, int]:
        """How many of a group's matches have finished, and how many it has."""
        row = self._db.execute(
            "SELECT (SELECT COUNT(*) FROM matches WHERE group_id = g.id), "
            "json_array_length(g.versions) FROM groups g WHERE g.id = ?",
            (group,),
        ).fetchone()
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    def match(self, mid: str) -> tuple[Group, int, list[int], MatchResult, str | None] | None:
        found = self.match_seating(mid)
        if found is None:
            return None
        group, rotation, seating, log_path = found
        (result,) = self._db.execute(
            "SELECT result FROM matches WHERE match_id = ?", (mid,)
        ).fetchone()
        with self._reading(f"match {mid}"):
            return group, rotation, seating, unpack(result), log_path

    def match_seating(self, mid: str) -> tuple[Group, int, list[int], str | None] | None:
        """``match`` without its result: for a log's download, a page's first look and its
        faults, which read the log, so that they neither unpack a result they do not show
        nor fail on one that does not unpack."""
        row = self._db.execute(
            "SELECT group_id, rotation, versions, log_path FROM matches WHERE match_id = ?",
            (mid,),
        ).fetchone()
        if row is None:
            return None
        gid, rotation, versions, log_path = row
        grow = self._db.execute(
            "SELECT id, seed, versions, why FROM groups WHERE id = ?", (gid,)
        ).fetchone()
        with self._reading(f"match {mid}"):
            group = Group(grow[0], grow[1], tuple(json.loads(grow[2])), grow[3])
            return group, rotation, json.loads(versions), log_path

    def recent_matches(self, limit: int = 30, version: int | None = None) -> list[dict[str, Any]]:
        if version is None:
            rows = self._db.execute(
                "SELECT match_id, versions, hands, reason, finished_at FROM matches "
                "ORDER BY finished_at DESC LIMIT ?",
                (limit,),
            ).fetchall()
        else:
            rows = self._db.execute(
                "SELECT m.match_id, m.versions, m.hands, m.reason, m.finished_at FROM matches m "
                "JOIN seats s USING (match_id) WHERE s.version = ? "
                "ORDER BY m.finished_at DESC LIMIT ?",
                (version, limit),
            ).fetchall()
        with self._reading("the matches table"):
            return [
                {
                    "match_id": mid,
                    "versions": json.loads(versions),
                    "hands": hands,
                    "reason": reason,
                    "finished_at": finished,
                }
                for mid, versions, hands, reason, finished in rows
            ]

    def faults(self, version: int, limit: int = 50) -> list[FaultRow]:
        rows = self._db.execute(
            "SELECT match_id, seat, version, kind, hand, detail FROM faults WHERE version = ? "
            "ORDER BY rowid DESC LIMIT ?",
            (version, limit),
        )
        return [FaultRow(*row) for row in rows]

    def last_group_id(self) -> int:
        (last,) = self._db.execute("SELECT COALESCE(MAX(id), 0) FROM groups").fetchone()
        return int(last)

    def recent_seat_faults(self, version: int, limit: int) -> list[tuple[str, int]]:
        """``(match id, faults)`` of the version's seats in its last ``limit`` matches,
        newest first (a version sits once per match).

        In the order they were recorded (rowid): read backwards along ``seats_by_version``,
        so the cost is ``limit`` rows however many matches the version has played.
        """
        rows = self._db.execute(
            "SELECT match_id, faults FROM seats WHERE version = ? ORDER BY rowid DESC LIMIT ?",
            (version, limit),
        )
        return [(str(mid), int(faults)) for mid, faults in rows]

    # ------------------------------------------------------------------ suspensions

    def suspend(self, version: int, why: str, evidence: Sequence[dict[str, Any]]) -> None:
        """Suspend an admitted version, with the matches and failures that are why."""
        now = time.time()
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "UPDATE versions SET status = 'suspended', detail = ?, decided_at = ? "
                "WHERE id = ? AND status = 'admitted'",
                (why, now, version),
            )
            self._db.execute(
                "INSERT INTO suspensions (version, why, evidence, suspended_at) "
                "VALUES (?, ?, ?, ?)",
                (version, why, json.dumps(list(evidence)), now),
            )

    def unsuspend(self, version: int, by: str) -> bool:
        """Admit a suspended version again; False if it is not suspended."""
        now = time.time()
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            changed = self._db.execute(
                "UPDATE versions SET status = 'admitted', detail = ?, decided_at = ? "
                "WHERE id = ? AND status = 'suspended'",
                (f"admitted again by the organiser ({by})", now, version),
            ).rowcount
            self._db.execute(
                "UPDATE suspensions SET lifted_at = ?, lifted_by = ? "
                "WHERE version = ? AND lifted_at IS NULL",
                (now, by, version),
            )
        return bool(changed)

    def suspensions(self, version: int) -> list[dict[str, Any]]:
        """Every suspension of a version, newest first: why, evidence, when, lifted when."""
        rows = self._db.execute(
            "SELECT why, evidence, suspended_at, lifted_at, lifted_by FROM suspensions "
            "WHERE version = ? ORDER BY id DESC",
            (version,),
        )
        return [
            {
                "why": why,
                "evidence": json.loads(evidence),
                "suspended_at": at,
                "lifted_at": lifted,
                "lifted_by": by,
            }
            for why, evidence, at, lifted, by in rows
        ]

    # ------------------------------------------------------------------ the check and flags

    def record_check_play(self, version: int, matches: Sequence[dict[str, Any]]) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO check_play (version, matches, checked_at) VALUES (?, ?, ?)",
            (version, json.dumps(list(matches)), time.time()),
        )

    def check_play(self, version: int) -> list[dict[str, Any]] | None:
        """The matches a version's check played as a table would, or None (none recorded)."""
        row = self._db.execute(
            "SELECT matches FROM check_play WHERE version = ?", (version,)
        ).fetchone()
        return None if row is None else list(json.loads(row[0]))

    def flag(self, version: int, detail: str, evidence: Sequence[dict[str, Any]]) -> bool:
        """Flag a version for the organiser, once; False if it already was."""
        cursor = self._db.execute(
            "INSERT OR IGNORE INTO flags (version, detail, evidence, flagged_at) "
            "VALUES (?, ?, ?, ?)",
            (version, detail, json.dumps(list(evidence)), time.time()),
        )
        return bool(cursor.rowcount)

    def flagged(self, version: int) -> bool:
        row = self._db.execute("SELECT 1 FROM flags WHERE version = ?", (version,)).fetchone()
        return row is not None

    def flags(self) -> list[dict[str, Any]]:
        rows = self._db.execute(
            "SELECT version, detail, evidence, flagged_at FROM flags ORDER BY flagged_at"
        )
        return [
            {"version": v, "detail": d, "evidence": json.loads(e), "flagged_at": at}
            for v, d, e, at in rows
        ]

    # ------------------------------------------------------------------ retention

    def keep_match(self, mid: str, why: str) -> None:
        """Keep ``mid``'s full record for ever (``referee.server.retention``); ``why`` is shown."""
        self._db.execute(
            "INSERT OR REPLACE INTO kept_matches (match_id, why, kept_at) VALUES (?, ?, ?)",
            (mid, why, time.time()),
        )

    def kept_why(self, mid: str) -> str | None:
        row = self._db.execute("SELECT why FROM kept_matches WHERE match_id = ?", (mid,)).fetchone()
        return None if row is None else str(row[0])

    def finished_after(
        self, rowid: int, limit: int
    ) -> list[tuple[int, str, int, tuple[int, ...], str | None, float]]:
        """Up to ``limit`` matches stored after row ``rowid``, in the order they were stored:
        (row, match id, group, versions, log path, finished at)."""
        rows = self._db.execute(
            "SELECT rowid, match_id, group_id, versions, log_path, finished_at FROM matches "
            "WHERE rowid > ? ORDER BY rowid LIMIT ?",
            (rowid, limit),
        ).fetchall()
        found = []
        for row, mid, gid, versions, log_path, at in rows:
            with self._reading(f"match {mid}"):
                seats = tuple(int(v) for v in json.loads(versions))
            found.append((int(row), str(mid), int(gid), seats, log_path, float(at)))
        return found

    def first_groups(self, version: int, count: int) -> list[int]:
        """The first ``count`` groups ``version`` finished a match in (fewer if it has not)."""
        found: list[int] = []
        if count <= 0:
            return found
        # Read in the order stored (the index on seats.version keeps it), stopping early.
        rows = self._db.execute(
            "SELECT m.group_id FROM seats s JOIN matches m USING (match_id) "
            "WHERE s.version = ? ORDER BY s.rowid",
            (version,),
        )
        for (gid,) in rows:
            if int(gid) not in found:
                found.append(int(gid))
                if len(found) == count:
                    break
        return found

    def mark_pruned(self, pruned: Sequence[tuple[str, int]], at: float, days: float) -> None:
        """Say that each (match id, bytes) record was pruned; its result stays."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(
                "INSERT OR IGNORE INTO pruned_records (match_id, pruned_at, days, bytes) "
                "VALUES (?, ?, ?, ?)",
                [(mid, at, days, size) for mid, size in pruned],
            )

    def pruned(self, mid: str) -> tuple[float, float] | None:
        """When ``mid``'s record was pruned and the retention in days then, or None."""
        row = self._db.execute(
            "SELECT pruned_at, days FROM pruned_records WHERE match_id = ?", (mid,)
        ).fetchone()
        return None if row is None else (float(row[0]), float(row[1]))

    # ------------------------------------------------------------------ status and metrics

    def finished_since(self, at: float, window: int = 50_000) -> int:
        """Matches finished after ``at`` among the last ``window`` stored (no full scan)."""
        (count,) = self._db.execute(
            "SELECT COUNT(*) FROM matches WHERE rowid > "
            "(SELECT COALESCE(MAX(rowid), 0) FROM matches) - ? AND finished_at > ?",
            (window, at),
        ).fetchone()
        return int(count)

    def groups_in_play(self, window: int = 1000) -> int:
        """Groups planned and not finished nor given up, among the last ``window`` planned."""
        (count,) = self._db.execute(
            "SELECT COUNT(*) FROM groups g WHERE g.id > "
            f"(SELECT COALESCE(MAX(id), 0) FROM groups) - ? AND {_IN_PLAY}",
            (window,),
        ).fetchone()
        return int(count)

    def groups_in_play_versions(self, window: int) -> list[tuple[int, ...]]:
        """The tables of the groups in play (as ``groups_in_play`` counts them) among the
        last ``window`` planned: their versions may still be seated."""
        rows = self._db.execute(
            "SELECT g.versions FROM groups g WHERE g.id > "
            f"(SELECT COALESCE(MAX(id), 0) FROM groups) - ? AND {_IN_PLAY}",
            (window,),
        )
        return [tuple(int(v) for v in json.loads(versions)) for (versions,) in rows]

    def pruned_count(self) -> int:
        """Records pruned by retention: the ladder's and a contest's (finals, challenges)."""
        (count,) = self._db.execute(
            "SELECT (SELECT COUNT(*) FROM pruned_records) + (SELECT COUNT(*) FROM contest_pruned)"
        ).fetchone()
        return int(count)
