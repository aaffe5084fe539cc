"""Days of a competition in virtual time, for the data directory's size: play and uploads.

The server's own loops run: the table loop (``play.table_loop``) with a table
that plays in no time of the machine's and writes a match record of a given
size, and the retention loop (``retention.retention_loop``), under trio's
``MockClock`` with the stores' wall clock reading the virtual one.  Uploads
come as the server makes them: a version's row, its ``upload`` and ``files/``
(unpacked and built) on the disk, an operations line; some are admitted (the
older versions are superseded), some rejected, and some the organiser
withdraws.  The operations log is the real one (rotated by size).

Used by tests/server/test_disk_bounds.py (a few virtual days, small sizes) and
benchmarks/disk_bounds.py (a week at a real pace, real record sizes).
"""

from __future__ import annotations

import dataclasses
import os
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from engine.rules import Rules
from referee.bots import BotSpec
from referee.match.key import MatchKey
from referee.match.result import MatchResult
from referee.server import competition_db, contest_db, organiser
from referee.server.competition import Competition
from referee.server.operations import log_operation, set_operations_log
from referee.server.play import GroupQueue, Table, table_loop
from referee.server.quotas import DiskSpace
from referee.server.retention import Retention, retention_loop
from referee.server.uploads import COMPLETE
from tests.server.inprocess import finished, open_competition

START = 1_795_867_200.0  # 2026-11-28 12:00:00 UTC
HOUR = 3600.0
PARTS = ("logs", "versions", "operations log", "database", "database journal", "other")


@dataclasses.dataclass(frozen=True)
class Week:
    days: float
    match_seconds: float  # virtual seconds a match takes (one table)
    records: Sequence[bytes]  # the stored records, used in turn
    participants: int = 6
    upload_hours: float = 6.0  # each participant uploads a version this often
    upload_bytes: int = 20_000  # the upload as sent
    files_bytes: int = 200_000  # its unpacked and built files
    sample_hours: float = 6.0
    retention: str = ""  # the [retention] section's lines
    operations_log_bytes: int | None = None  # the log's rotation size, below the file's 1 MiB


@dataclasses.dataclass(frozen=True)
class Sample:
    hours: float
    matches: int
    parts: Mapping[str, int]  # bytes under each of PARTS

    @property
    def total(self) -> int:
        return sum(self.parts.values())


def sizes(data: Path) -> dict[str, int]:
    """The bytes under ``data``, by part (every file, as ``du --apparent-size`` counts)."""
    parts = dict.fromkeys(PARTS, 0)
    for directory, _dirs, files in os.walk(data):
        for name in files:
            path = Path(directory, name)
            try:
                size = path.lstat().st_size
            except OSError:
                continue
            top = path.relative_to(data).parts[0]
            if top in ("logs", "versions"):
                parts[top] += size
            elif top.startswith("operations.log"):
                parts["operations log"] += size
            elif top == "competition.sqlite":
                parts["database"] += size
            elif top.startswith("competition.sqlite-"):  # the WAL: checkpointed as it grows
                parts["database journal"] += size
            else:
                parts["other"] += size
    return parts


class RecordTable:
    """A table that plays a match in ``seconds`` of virtual time and stores a record."""

    def __init__(self, logs: Path, seconds: float, records: Sequence[bytes]) -> None:
        self.logs, self.seconds, self.records = logs, seconds, records
        self.played = 0

    async def play(
        self, key: MatchKey, rules: Rules, specs: Mapping[int, BotSpec], keep: Iterable[int]
    ) -> MatchResult:
        await trio.sleep(self.seconds)
        path = self.logs / f"{key.match_id}.nmr"
        path.write_bytes(self.records[self.played % len(self.records)])
        self.played += 1
        result = finished(key.match_id, key.seed, len(key.bots))
        result.log_path = path
        return result

    async def aclose(self) -> None:
        pass


def _version(competition: Competition, participant: int, week: Week, status: str) -> int:
    """A version as an upload leaves it: its row, ``upload`` and ``files/``, decided."""
    store = competition.store
    version = store.add_version(participant, "python3", "main.py", "", week.upload_bytes)
    root = competition.config.uploads_dir / f"{version.id:06d}"
    (root / "files" / "build").mkdir(parents=True)
    (root / "upload").write_bytes(b"u" * week.upload_bytes)
    (root / "files" / "build" / "bot").write_bytes(b"b" * week.files_bytes)
    (root / COMPLETE).touch()
    spec = BotSpec(f"p{participant}", ("x",)).to_json() if status == "admitted" else None
    store.decide(version.id, status, "ok" if spec else "check: illegal move", "", spec)
    size = week.upload_bytes
    log_operation("upload", participant=f"p{participant}", version=version.id, bytes=size)
    log_operation("admission" if spec else "rejection", version=version.id)
    return version.id


async def _uploads(competition: Competition, week: Week, participants: list[int]) -> None:
    """Every ``upload_hours`` each participant uploads; one in three of them is rejected,
    and every fourth admitted one the organiser withdraws the version before it."""
    count = 0
    gap = week.upload_hours * HOUR / len(participants)
    while True:
        await trio.sleep(gap)
        participant = participants[count % len(participants)]
        count += 1
        before = [v.id for v in competition.store.versions(participant, status="admitted")]
        status = "rejected" if count % 3 == 0 else "admitted"
        _version(competition, participant, week, status)
        if status == "admitted" and count % 4 == 1 and before:
            organiser.withdraw(competition.store, organiser.SHELL, str(before[-1]), "keep")
        competition.notify()


async def _inline(function: Callable[..., Any], *args: Any) -> Any:
    return function(*args)


def simulate(folder: Path, week: Week) -> list[Sample]:
    """Play ``week`` in a competition made in ``folder``; the data directory's size, sampled
    every ``sample_hours`` of virtual time (between two retention passes)."""
    sections = f"[storage]\nmin_free_mb = 0\n[retention]\n{week.retention}\n"
    competition = open_competition(folder, sections=sections)
    config, store = competition.config, competition.store
    competition.disk = DiskSpace((config.data,), 0, lambda _path: 1 << 50)
    participants = []
    for number in range(week.participants):
        participant, _token = store.add_participant(f"p{number}")
        participants.append(participant.id)
    samples: list[Sample] = []
    wall = types.SimpleNamespace(time=lambda: START + trio.current_time())
    patch = pytest.MonkeyPatch()  # the stores stamp their rows with the virtual wall clock
    patch.setattr(competition_db, "time", wall)
    patch.setattr(contest_db, "time", wall)
    log = config.operations_log(stream=None)
    log.clock = wall.time
    if week.operations_log_bytes is not None:
        log.max_bytes = week.operations_log_bytes
    previous = set_operations_log(log)

    async def main() -> None:
        for participant in participants:
            _version(competition, participant, week, "admitted")
        # The file work inline: a thread would let the virtual clock jump while it runs.
        retention = Retention(competition, clock=wall.time, offload=_inline)
        table = RecordTable(config.logs_dir, week.match_seconds, week.records)

        async def open_table(_number: int) -> Table:
            return table

        async with trio.open_nursery() as nursery:
            nursery.start_soon(table_loop, competition, GroupQueue(competition), 1, open_table)
            nursery.start_soon(retention_loop, retention)
            nursery.start_soon(_uploads, competition, week, participants)
            await trio.sleep(HOUR / 4)  # sampled between two passes, never at one
            while trio.current_time() < week.days * 24 * HOUR:
                await trio.sleep(week.sample_hours * HOUR)
                hours = trio.current_time() / HOUR
                samples.append(Sample(hours, store.match_count(), sizes(config.data)))
            nursery.cancel_scope.cancel()

    try:
        trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    finally:
        patch.undo()
        set_operations_log(previous)
        competition.close()
        store.close()
    return samples
