"""Retention: old match records pruned, kept ones kept, results kept, the page says so.

The clock is injected: the store's ``finished_at`` and the pass's "now" both
read a fake wall clock, so days pass in no time.  The last test plays the
server's real table loop with an in-process table (no bot processes) under
trio's virtual clock, on a disk with a small quota, for six virtual hours.
"""

from __future__ import annotations

import io
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from engine.rules import Rules
from referee.bots import BotSpec
from referee.match.key import MatchKey
from referee.match.result import MatchResult
from referee.server import competition_db
from referee.server.competition import Competition
from referee.server.competition_db import Group
from referee.server.play import GroupQueue, Table, table_loop
from referee.server.quotas import DiskSpace
from referee.server.retention import DAY, Retention, retention_loop, stored_bytes
from referee.server.views import match_view
from tests.server.inprocess import (
    START,
    FakeTime,
    admitted_group,
    fake_wall_clock,
    finished,
    open_competition,
    operations_said,
)


def _competition(tmp_path: Path, retention: str) -> Competition:
    return open_competition(tmp_path, sections=f"\n[retention]\n{retention}\n")


def _play(competition: Competition, group: Group, rotation: int, size: int = 1000) -> str:
    """Record one finished match of ``group`` with a log file (and a stderr file beside it)."""
    logs = competition.config.logs_dir
    logs.mkdir(parents=True, exist_ok=True)
    mid = competition_db.match_id(group.id, rotation)
    log = logs / f"{mid}.jsonl"
    log.write_bytes(b"x" * size)
    (logs / f"{mid}.stderr").write_bytes(b"e" * 10)
    seating = group.versions[rotation:] + group.versions[:rotation]
    competition.store.record(
        group, rotation, seating, finished(mid, group.seed), log, identity=group.seed
    )
    return mid


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    return fake_wall_clock(monkeypatch, competition_db)


@pytest.fixture
def said() -> Iterator[io.StringIO]:
    with operations_said() as out:
        yield out


def test_old_records_go_kept_ones_stay_and_every_result_stays(
    tmp_path: Path, clock: FakeTime, said: io.StringIO
) -> None:
    competition = _competition(tmp_path, "days = 7\nfirst_groups = 1")
    store = competition.store
    debut = admitted_group(store)  # every version's first group: kept for ever
    first = [_play(competition, debut, r) for r in range(3)]
    later = store.plan_group(6, debut.versions, "test")
    old = [_play(competition, later, r, size=5000) for r in range(3)]
    store.keep_match(old[1], "finals")
    clock.now += 3 * DAY
    recent = store.plan_group(7, debut.versions, "test")
    new = [_play(competition, recent, r) for r in range(3)]
    logs = competition.config.logs_dir
    outside = tmp_path / "organiser-notes.txt"  # a row pointing outside the logs: never deleted
    outside.write_text("mine")

    clock.now += 5 * DAY  # `old` and `first` are 8 days old, `new` 5
    retention = Retention(competition, clock=clock.time)
    report = trio.run(retention.run_pass)

    assert report.pruned == 2 and report.freed == 2 * (5000 + 10)
    assert report.kept == 4  # the debut's three and the finals match
    for mid in (old[0], old[2]):
        assert not (logs / f"{mid}.jsonl").exists() and not (logs / f"{mid}.stderr").exists()
    for mid in [*first, old[1], *new]:
        assert (logs / f"{mid}.jsonl").exists()
    assert outside.read_text() == "mine"
    assert store.match_count() == 9  # results are kept for ever
    assert report.stored == stored_bytes(logs)
    assert said.getvalue().endswith(
        f" retention pruned=2 freed_bytes=10020 kept=4 stored_bytes={report.stored} days=7\n"
    )

    # The page says what happened instead of offering a replay it cannot show.
    view = match_view(competition, old[0], None)
    assert view is not None
    assert view["record_pruned"] == "record pruned on 2026-12-06 (retention 7 days)"
    assert view["replay"] is None and view["seats"][0]["place"] == 1
    kept = match_view(competition, old[1], None)
    assert kept is not None and kept["record_pruned"] is None

    # The next pass looks only at what came since: nothing more to prune yet.
    again = trio.run(retention.run_pass)
    assert (again.pruned, again.kept) == (0, 0)
    clock.now += 3 * DAY
    assert trio.run(retention.run_pass).pruned == 3
    store.close()


def test_a_record_path_outside_the_logs_directory_is_never_deleted(
    tmp_path: Path, clock: FakeTime, said: io.StringIO
) -> None:
    competition = _competition(tmp_path, "days = 0\nfirst_groups = 0")
    store = competition.store
    group = admitted_group(store)
    mine = tmp_path / "g1r0.jsonl"  # the organiser's own file, named by a restored database
    mine.write_text("keep me")
    store.record(group, 0, group.versions, finished("g1r0", 5), mine, identity=5)
    clock.now += 1
    report = trio.run(Retention(competition, clock=clock.time).run_pass)
    assert mine.read_text() == "keep me"
    assert report.freed == 0
    store.close()


async def _inline(function: Callable[..., Any], *args: Any) -> Any:
    return function(*args)


class FakeTable:
    """A table that plays in no time of the machine's: a minute of virtual time, a log."""

    def __init__(self, logs: Path, seconds: float, size: int) -> None:
        self.logs, self.seconds, self.size = logs, seconds, size

    async def play(
        self, key: MatchKey, rules: Rules, specs: Mapping[int, BotSpec], keep: Iterable[int]
    ) -> MatchResult:
        await trio.sleep(self.seconds)
        (self.logs / f"{key.match_id}.jsonl").write_bytes(b"r" * self.size)
        return finished(key.match_id, key.seed)

    async def aclose(self) -> None:
        pass


def test_storage_stays_flat_under_a_small_quota_once_retention_applies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, said: io.StringIO
) -> None:
    # A virtual minute a match, 40 KB each: 2.4 MB an hour on a disk with 3 MB to spare.
    # Without retention play would pause for room within 75 minutes; with records kept for
    # half an hour and a pass every 10 minutes, usage levels off under the quota.
    match_seconds, size, quota, keep_free = 60.0, 40_000, 4_000_000, 1_000_000
    competition = _competition(tmp_path, f"days = {0.5 / 24}\nfirst_groups = 1\nevery_minutes = 10")
    admitted_group(competition.store)  # three versions to seat
    logs = competition.config.logs_dir
    logs.mkdir(parents=True)
    competition.disk = DiskSpace((logs,), keep_free, lambda _path: quota - stored_bytes(logs))
    samples: list[tuple[float, int]] = []
    played: list[int] = []

    async def main() -> None:
        wall = types.SimpleNamespace(time=lambda: START + trio.current_time())
        monkeypatch.setattr(competition_db, "time", wall)
        # The file work inline: a thread would let the virtual clock jump while it runs.
        retention = Retention(competition, clock=wall.time, offload=_inline)
        table = FakeTable(logs, match_seconds, size)

        async def open_table(_number: int) -> Table:
            return table

        async with trio.open_nursery() as nursery:
            nursery.start_soon(table_loop, competition, GroupQueue(competition), 1, open_table)
            nursery.start_soon(retention_loop, retention)
            await trio.sleep(300)  # measured between two passes, never at one
            for _minute in range(0, 6 * 60, 10):
                await trio.sleep(600)
                samples.append((trio.current_time(), stored_bytes(logs)))
            played.append(competition.store.match_count())
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    competition.store.close()

    assert played[0] >= 6 * 60 - 5  # it never paused for room
    assert played[0] * size > 3 * (quota - keep_free)  # what it wrote would not have fitted
    settled = [used for at, used in samples if at >= 3600]
    assert max(settled) < quota - keep_free
    assert max(settled) - min(settled) < 0.15 * max(settled)  # flat: no growth with time
    first_hour = [used for at, used in samples if at >= 3600][:3]
    last_hour = [used for _at, used in samples[-3:]]
    assert sum(last_hour) <= sum(first_hour) * 1.05
    assert " retention pruned=" in said.getvalue()


def test_a_record_the_disk_cannot_remove_is_a_platform_fault_and_tried_again(
    tmp_path: Path, clock: FakeTime, said: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A read-only remount (EROFS) while the pass runs: the pass must not end the server, the
    # record it could not remove keeps its page's replay, and the next pass tries it again.
    competition = _competition(tmp_path, "days = 1\nfirst_groups = 0")
    store = competition.store
    group = admitted_group(store)
    mids = [_play(competition, group, r) for r in range(3)]
    logs = competition.config.logs_dir
    clock.now += 2 * DAY
    real_unlink = Path.unlink
    stuck = logs / f"{mids[1]}.jsonl"

    def unlink(path: Path, missing_ok: bool = False) -> None:
        if path == stuck:
            raise OSError(30, "Read-only file system", str(path))
        real_unlink(path, missing_ok)

    monkeypatch.setattr(Path, "unlink", unlink)
    retention = Retention(competition, clock=clock.time)
    report = trio.run(retention.run_pass)
    assert report.pruned == 1 and not (logs / f"{mids[0]}.jsonl").exists()
    assert stuck.exists() and (logs / f"{mids[2]}.jsonl").exists()
    view = match_view(competition, mids[1], None)
    assert view is not None and view["record_pruned"] is None
    assert store.pruned(mids[1]) is None
    assert (
        f' platform-fault where=retention match={mids[1]} what="[Errno 30] Read-only file system'
        in said.getvalue()
    )

    monkeypatch.setattr(Path, "unlink", real_unlink)  # the disk is writable again
    report = trio.run(retention.run_pass)
    assert report.pruned == 2
    assert not stuck.exists() and not (logs / f"{mids[2]}.jsonl").exists()
    assert store.pruned(mids[1]) is not None
    store.close()
