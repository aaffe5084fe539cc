"""Seating one hostile protocol bot (a real process) at a table and checking what must always hold.

Whatever the bot does, ``play_hostile`` checks the promises every test of
``test_protocol_bots`` and ``test_tcp_bots`` shares: the match finished, its
result is saved (the log's last record is the result, and the log replays),
no process of any bot's tree is left, and the referee's memory stayed
bounded (tracemalloc's peak of the referee's own allocations during the
match).  The test then asserts the verdict, which is each behaviour's own.

Limits are generous real seconds: the machine may be loaded, and none of
these verdicts is a close call.
"""

from __future__ import annotations

import dataclasses
import sys
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from engine import preset
from referee.bots import BotSpec, Transport
from referee.match.log import read_log
from referee.match.referee import play_match
from referee.match.result import MatchResult
from referee.tools.replay import verify_log
from referee.transport.process import group_members
from referee.transport.timecontrol import TimeControl
from tests.tables import open_table

REPO = Path(__file__).resolve().parents[2]
RULES = preset("boodle").with_options({"hand_limit": 2})
CONTROL = TimeControl(move_time=2.0, time_bank=0.0, startup_time=20.0, margin=0.5)
MEMORY_BOUND = 16 << 20
"""The referee's peak traced allocations during one match; a hostile bot must not move it far.

A three-seat match needs a few MiB; buffering a 300 MiB line, or a flood of
lines, would need far more than this.
"""


def proto_bot(
    script: str,
    *args: str,
    name: str | None = None,
    transport: Transport = "stdio",
    env: dict[str, str] | None = None,
) -> BotSpec:
    command = (sys.executable, "-m", f"tests.hostile.proto_bots.{script}", *args)
    return BotSpec(name or script, command, cwd=REPO, env=env or {}, transport=transport)


def table_mates(count: int = 2, transport: Transport = "stdio") -> list[BotSpec]:
    return [
        proto_bot("good", name=f"good{i}", transport=transport, env={"HOSTILE_SEED": str(i)})
        for i in range(count)
    ]


@dataclasses.dataclass
class Hostile:
    """One match with a hostile bot in seat 0, after the shared checks passed."""

    result: MatchResult
    records: list[dict[str, Any]]
    peak_bytes: int
    stderr: str  # seat 0's
    began: float  # when the hostile bot's start began (trio's clock)

    def faults(self, seat: int = 0) -> list[tuple[str, str]]:
        return [(fault.kind, fault.detail) for fault in self.result.seats[seat].faults]

    def kinds(self, seat: int = 0) -> list[str]:
        return [kind for kind, _ in self.faults(seat)]

    def of_type(self, kind: str, seat: int | None = 0) -> list[dict[str, Any]]:
        return [
            r for r in self.records if r["type"] == kind and (seat is None or r.get("seat") == seat)
        ]

    @property
    def status(self) -> list[str]:
        return [seat.status for seat in self.result.seats]


async def play_hostile(
    specs: Sequence[BotSpec],
    tmp_path: Path,
    *,
    control: TimeControl = CONTROL,
    hostile_startup: float | None = None,
    seed: int = 5,
) -> Hostile:
    """One match of ``specs`` (the hostile bot first); checks the promises every bot must keep.

    ``hostile_startup``: the hostile bot's own start-up limit, timed alone
    (``tests.tables.open_table``)."""
    log = tmp_path / "match.jsonl"
    began: list[float] = []
    tracemalloc.start()
    try:
        async with open_table(
            specs, control, first_startup=hostile_startup, began=began
        ) as sessions:
            groups = [s.pgid for s in sessions if s.pgid is not None]
            result = await play_match(
                sessions, RULES, seed, time_control=control, match_id="hostile", log_path=log
            )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    stderr = sessions[0].stderr_text()
    # The match finished: every hand played or the table emptied, and places for all.
    assert result.reason in ("hand_limit", "players_left")
    assert len(result.places) == len(specs) and all(1 <= p <= len(specs) for p in result.places)
    # The result is saved: the log ends with it and replays.
    records = [record for _, record in read_log(log)]
    assert records[-1]["type"] == "result"
    assert records[-1]["seats"] == msgspec.to_builtins(result.seats)
    verify_log(log)
    assert_gone(groups)
    assert peak < MEMORY_BOUND, f"the referee's peak allocations were {peak} bytes"
    return Hostile(result, records, peak, stderr, began[0])


def assert_gone(groups: Sequence[int]) -> None:
    """No process of any of these process groups (each bot's tree) is still running."""
    assert groups, "no process group to check"
    for pgid in groups:
        assert group_members(pgid) == [], f"processes of group {pgid} outlived the session"
