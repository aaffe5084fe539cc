"""Retention: a match's full record is kept for days, its result for ever.

A server that plays for weeks cannot keep every match's record (its log and
whatever is stored beside it): the disk fills (docs/server.md, "Retention").
The competition file's ``[retention]`` says how long (``days``, default 7).
A record older than that is pruned by a pass that runs every
``every_minutes``, unless its match is kept for ever:

* it is one of the **first groups** of a version seated in it: the first
  ``first_groups`` duplicate groups that version finished a match in (its
  debut, which its owner studies and the admission watch compares), or
* it is in ``kept_matches``: a finals match, or one somebody asked for
  (``CompetitionStore.keep_match``, which the finals and the organiser's
  tools call with a reason).

What a pass removes is the file ``matches.log_path`` names and every file
beside it whose name is the match id and a suffix (``g12r3.*``: a stderr
file, a transcript), and only under the competition's logs directory.  The
result (the ``matches`` and ``seats`` rows, the faults) stays, so the
leaderboard, the participant's pages and the API are unchanged; the match
page says "record pruned on DATE (retention N days)" instead of a replay.
Each pass is one line of the operations log.  The same pass prunes a
contest's match records (``referee.server.contest_retention``: a finals
match kept for ever, a challenge's for ``challenge_days``) and removes the
files of versions that will never play again
(``referee.server.version_files``), each with a line of its own when it
removed something.

The pass walks the matches in the order they were stored from a cursor kept
in the database, so each record is looked at once however long the
competition runs.  The clock is injected (``clock``), for tests.
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
from referee.server.contest_retention import prune_contest
from referee.server.operations import log_operation
from referee.server.version_files import remove_unused

BATCH = 500  # matches looked at per database read
DAY = 86400.0
CURSOR = "retention_cursor"  # meta key: the last match row a pass has looked at
Offload = Callable[..., Awaitable[Any]]


@dataclasses.dataclass(frozen=True)
class PassReport:
    pruned: int  # records removed in this pass
    freed: int  # bytes they held
    kept: int  # old records kept for ever (first groups, kept_matches), looked at this pass
    stored: int  # bytes under the logs directory after the pass


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
        self.last_at: float | None = None
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

    async def run_pass(self) -> PassReport:
        """Prune every record older than the retention that is not kept; one log line."""
        store = self.competition.store
        now = self.clock()
        days = self.settings.days
        before = now - days * DAY
        cursor = int(store.meta(CURSOR) or 0)
        pruned = freed = kept = 0
        while True:
            batch = store.finished_after(cursor, BATCH)
            doomed: list[tuple[str, str]] = []
            done = len(batch) < BATCH
            for row, match_id, group, versions, log_path, finished_at in batch:
                if finished_at >= before:
                    done = True
                    break
                cursor = row
                if log_path is None:
                    continue
                if self.kept_for_ever(match_id, group, versions) is not None:
                    kept += 1
                    continue
                doomed.append((match_id, log_path))
            sizes = await self.offload(self._remove, doomed)
            pruned += len(sizes)
            freed += sum(size for _mid, size in sizes)
            marked = partial(_mark, store, sizes, now, days, cursor)
            await written("recording pruned match records", marked)
            if done:
                break
        contest = await prune_contest(self.competition, now, partial(self.offload, self._remove))
        await remove_unused(self.competition, self.offload, now)
        stored = await self.offload(stored_bytes, self.logs)
        self.last = PassReport(pruned, freed, kept, stored)
        self.last_at = now
        log_operation(
            "retention",
            pruned=pruned,
            freed_bytes=freed,
            kept=kept,
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

    def _remove(self, doomed: Sequence[tuple[str, str]]) -> list[tuple[str, int]]:
        """Remove each match's record files (only under the logs directory); their bytes."""
        logs = self.logs.resolve()
        removed = []
        for match_id, log_path in doomed:
            size = 0
            for path in record_files(Path(log_path), match_id):
                # A database restored from elsewhere must not make the server delete there.
                if not path.resolve().is_relative_to(logs):
                    continue
                try:
                    size += path.lstat().st_size
                    path.unlink()
                except FileNotFoundError:
                    pass
            removed.append((match_id, size))
        return removed


def record_files(log_path: Path, match_id: str) -> list[Path]:
    """The files of one match's record: its log, and ``MATCH_ID.*`` beside it."""
    beside = glob.glob(glob.escape(str(log_path.parent / match_id)) + ".*")
    return sorted({log_path, *(Path(name) for name in beside)})


def _mark(
    store: CompetitionStore, sizes: Sequence[tuple[str, int]], now: float, days: float, cursor: int
) -> None:
    """Record the pruned and move the cursor; both may be written again (a crash between)."""
    store.mark_pruned(sizes, now, days)
    store.set_meta(CURSOR, str(cursor))


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
