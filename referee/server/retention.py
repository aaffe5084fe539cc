"""Retention: a match's full record is kept for days, its result for ever.

A server that plays for weeks cannot keep every match's record (its log and
whatever is stored beside it): the disk fills (docs/server.md, "Retention").
The competition file's ``[retention]`` says how long (``days``, default 7).
A record older than that is pruned by a pass that runs every
``every_minutes``, unless its match is kept for ever:

* it is one of the **first groups** of a version seated in it: the first
  ``first_groups`` duplicate groups that version finished a match in (its
  debut, which its owner studies and the admission watch compares), or
* it is in ``kept_matches`` (``CompetitionStore.keep_match``, with a
  reason); no command or page adds one yet: a finals match and a challenge's
  are kept by their own rules, below.

What a pass removes is the file ``matches.log_path`` names and every file
beside it whose name is the match id and a suffix (``g12r3.*``: a stderr
file, a transcript), and only under the competition's logs directory.  The
result (the ``matches`` and ``seats`` rows, the faults) stays, so the
leaderboard, the participant's pages and the API are unchanged; the match
page says "record pruned on DATE (retention N days)" instead of a replay.
Each pass is one line of the operations log.

The same walk prunes a contest's match records (``contest_matches``, which
the ladder never reads; ``contest_records``), with rules of its own:

* a **finals** match is kept for ever (it is the evidence of the published
  ranking, and ``finals-rerun`` compares with it);
* a **challenge**'s matches were asked for by a participant: kept for ever,
  unless ``challenge_days`` says for how many days;
* a match in ``kept_matches`` is kept for ever, whatever its kind.

A pruned contest match is in ``contest_pruned`` as a ladder one is in
``pruned_records`` (whose foreign key names ``matches``), and the
challenge's page and API say "record pruned on DATE" as a match page does;
a pass that pruned one writes a second line (``what=contest-matches``).
The pass then removes the files of versions that will never play again
(``referee.server.version_files``), with a line of its own when it removed
something.

The pass walks each table in the order its matches were stored from a cursor
kept in the database, so each record is looked at once however long the
competition runs (the contest's cursor is walked again from the start when
``days`` or ``challenge_days`` changes: a challenge kept for ever may go).
The clock is injected (``clock``), for tests.
"""

from __future__ import annotations

import dataclasses
import datetime
import glob
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import trio

from referee.server.busy import written
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.contest_db import contest_finished_after
from referee.server.operations import log_operation
from referee.server.version_files import remove_unused

BATCH = 500  # matches looked at per database read
DAY = 86400.0
CURSOR = "retention_cursor"  # meta key: the last match row a pass has looked at
CONTEST_CURSOR = "retention_contest_cursor"  # the same, of contest_matches, and its rules
Offload = Callable[..., Awaitable[Any]]


@dataclasses.dataclass(frozen=True)
class PassReport:
    pruned: int  # records removed in this pass
    freed: int  # bytes they held
    kept: int  # old records kept for ever (first groups, kept_matches), looked at this pass
    stored: int  # bytes under the logs directory after the pass


@dataclasses.dataclass(frozen=True)
class Record:
    """One stored match as a pass looks at it."""

    row: int  # its rowid in its table: the cursor's unit
    match_id: str
    log_path: str | None
    finished_at: float
    days: float | None  # how long its record is kept; None: for ever (a finals match)
    kept_why: Callable[[], str | None]  # why it is kept for ever anyway; asked once it is old


@dataclasses.dataclass(frozen=True)
class Table:
    """The part of a pass that differs between ``matches`` and ``contest_matches``."""

    what: str  # for a busy database's message
    cursor: str  # meta key: "ROW" or "ROW RULES"
    rules: str  # a cursor moved under other rules is walked again from the start
    after: Callable[[int, int], list[Record]]  # (row, limit): the next records stored
    pruned_table: str  # where a pruned record is noted: pruned_records | contest_pruned


@dataclasses.dataclass(frozen=True)
class Walked:
    pruned: int
    freed: int
    kept: int


class Retention:
    """The retention passes of one competition, and what the last one found."""

    def __init__(
        self,
        competition: Competition,
        clock: Callable[[], float] = time.time,
        offload: Offload = trio.to_thread.run_sync,
    ) -> None:
        self.competition = competition
        self.offload = offload  # runs the file work off the loop (a test runs it inline)
        self.settings = competition.config.retention
        self.logs = competition.config.logs_dir
        self.clock = clock
        self.last: PassReport | None = None
        # version -> its first groups, once it has played all of them (they never change then)
        self._firsts: dict[int, frozenset[int]] = {}

    def kept_for_ever(self, match_id: str, group: int, versions: Sequence[int]) -> str | None:
        """Why ``match_id``'s record is kept for ever, or None if it may be pruned."""
        store = self.competition.store
        why = store.kept_why(match_id)
        if why is not None:
            return why
        for version in versions:
            if group in self._first_groups(version):
                return f"first groups of version {version}"
        return None

    def _first_groups(self, version: int) -> frozenset[int]:
        wanted = self.settings.first_groups
        known = self._firsts.get(version)
        if known is not None:
            return known
        found = frozenset(self.competition.store.first_groups(version, wanted))
        if len(found) >= wanted:
            self._firsts[version] = found
        return found

    def ladder_records(self) -> Table:
        """The ladder's ``matches``: kept ``days``, or for ever as ``kept_for_ever`` says."""
        store = self.competition.store
        days = self.settings.days

        def after(row: int, limit: int) -> list[Record]:
            return [
                Record(
                    found, mid, log_path, at, days, partial(self.kept_for_ever, mid, gid, versions)
                )
                for found, mid, gid, versions, log_path, at in store.finished_after(row, limit)
            ]

        return Table("match records", CURSOR, "", after, "pruned_records")

    async def run_pass(self) -> PassReport:
        """Prune every record older than its retention that is not kept; a log line each for
        the ladder's, the contest's (if any went) and the versions' files (if any went)."""
        now = self.clock()
        days = self.settings.days
        ladder = await self._walk(self.ladder_records(), now)
        contest = await self._walk(contest_records(self.competition), now)
        await remove_unused(self.competition, self.offload, now)
        stored = await self.offload(stored_bytes, self.logs)
        self.last = PassReport(ladder.pruned, ladder.freed, ladder.kept, stored)
        log_operation(
            "retention",
            pruned=ladder.pruned,
            freed_bytes=ladder.freed,
            kept=ladder.kept,
            stored_bytes=stored,
            days=days,
        )
        if contest.pruned:
            log_operation(
                "retention",
                what="contest-matches",
                pruned=contest.pruned,
                freed_bytes=contest.freed,
                kept=contest.kept,
                challenge_days=self.settings.challenge_days,
            )
        return self.last

    async def _walk(self, table: Table, now: float) -> Walked:
        """Remove ``table``'s records past their time from its cursor on, in batches."""
        store = self.competition.store
        saved, _, rules = (store.meta(table.cursor) or "0").partition(" ")
        cursor = int(saved) if rules == table.rules else 0
        pruned = freed = kept = 0
        while True:
            batch = table.after(cursor, BATCH)
            done = len(batch) < BATCH
            doomed: list[tuple[int, str, str]] = []
            days_of: dict[str, float] = {}
            for record in batch:
                if record.days is not None and record.finished_at >= now - record.days * DAY:
                    done = True  # this one and every later one wait for a later pass
                    break
                cursor = record.row
                if record.log_path is None:
                    continue
                if record.days is None or record.kept_why() is not None:
                    kept += 1
                    continue
                doomed.append((record.row, record.match_id, record.log_path))
                days_of[record.match_id] = record.days
            sizes, failed = await self.offload(self._remove, doomed)
            if failed is not None:
                # The platform's fault (a read-only or failing disk): the record stays as it
                # was, and the next pass starts from it.
                row, match, error = failed
                cursor, done = row - 1, True
                log_operation("platform-fault", where="retention", match=match, what=error)
            pruned += len(sizes)
            freed += sum(size for _mid, size in sizes)
            moved = f"{cursor} {table.rules}".rstrip()
            marked = partial(_mark, store, table, sizes, days_of, now, moved)
            await written(f"recording pruned {table.what}", marked)
            if done:
                return Walked(pruned, freed, kept)

    def _remove(
        self, doomed: Sequence[tuple[int, str, str]]
    ) -> tuple[list[tuple[str, int]], tuple[int, str, str] | None]:
        """Remove each (row, match id, log path)'s record files (only under the logs
        directory): each removed match with its bytes, and the first that could not be
        (row, match id, the error), after which nothing more is tried."""
        logs = self.logs.resolve()
        removed: list[tuple[str, int]] = []
        for row, match_id, log_path in doomed:
            size = 0
            try:
                for path in record_files(Path(log_path), match_id):
                    # A database restored from elsewhere must not make the server delete there.
                    if not path.resolve().is_relative_to(logs):
                        continue
                    try:
                        size += path.lstat().st_size
                        path.unlink()
                    except FileNotFoundError:
                        pass
            except OSError as error:
                return removed, (row, match_id, str(error))
            removed.append((match_id, size))
        return removed, None


def record_files(log_path: Path, match_id: str) -> list[Path]:
    """The files of one match's record: its log, and ``MATCH_ID.*`` beside it."""
    beside = glob.glob(glob.escape(str(log_path.parent / match_id)) + ".*")
    return sorted({log_path, *(Path(name) for name in beside)})


def contest_records(competition: Competition) -> Table:
    """A contest's ``contest_matches``: a finals match kept for ever, a challenge's for
    ``challenge_days`` (absent: for ever), and either if it is in ``kept_matches``."""
    store = competition.store
    settings = competition.config.retention

    def after(row: int, limit: int) -> list[Record]:
        return [
            Record(
                found,
                mid,
                log_path,
                at,
                None if finals else settings.challenge_days,
                partial(store.kept_why, mid),
            )
            for found, mid, finals, log_path, at in contest_finished_after(store, row, limit)
        ]

    # A challenge looked at while kept for ever is looked at again once challenge_days is set.
    rules = f"{settings.days:g}/{settings.challenge_days}"
    return Table("contest match records", CONTEST_CURSOR, rules, after, "contest_pruned")


def _mark(
    store: CompetitionStore,
    table: Table,
    sizes: Sequence[tuple[str, int]],
    days_of: dict[str, float],
    now: float,
    cursor: str,
) -> None:
    """Note the pruned (each with its retention) and move the cursor, in one transaction."""
    with store.connection:
        store.connection.execute("BEGIN IMMEDIATE")
        store.connection.executemany(
            f"INSERT OR IGNORE INTO {table.pruned_table} (match_id, pruned_at, days, bytes) "
            "VALUES (?, ?, ?, ?)",
            [(mid, now, days_of[mid], size) for mid, size in sizes],
        )
        store.set_meta(table.cursor, cursor)


def stored_bytes(logs: Path) -> int:
    """The bytes of every file under ``logs`` (the match records and what is beside them)."""
    total = 0
    stack = [logs]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
            except OSError:
                continue
    return total


def pruned_line(pruned: tuple[float, float]) -> str:
    """The match page's words for a pruned record: when, and the retention then."""
    at, days = pruned
    date = datetime.datetime.fromtimestamp(at, tz=datetime.UTC).strftime("%Y-%m-%d")
    return f"record pruned on {date} (retention {days:g} days)"


async def retention_loop(retention: Retention) -> None:
    """A pass at the start, then one every ``every_minutes``."""
    while True:
        await retention.run_pass()
        await trio.sleep(retention.settings.every_minutes * 60)
