"""The league's table worker with a roster that grows, as the server drives it.

One real worker process (``WorkerTable``): a match seats versions 1, 2 and 3,
the next 1, 2 and 4 with 3 no longer kept.  The worker learns 4 from the play
message, and ends 3's process (a superseded version must not linger).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import trio

from engine import preset
from referee.bots import resolve_bot
from referee.match.key import MatchKey
from referee.sandbox import Limits, setting_to_env
from referee.server.worker_table import WorkerTable
from referee.transport.timecontrol import TimeControl

NAMES = {1: "random", 2: "lowest", 3: "tracker", 4: "boodle"}


def key(number: int, bots: tuple[int, ...]) -> MatchKey:
    return MatchKey(f"m{number}", number, number, 1, 0, number, bots, (20, 20, 20), number)


def bot_processes(worker: int) -> list[str]:
    listed = subprocess.run(
        ["ps", "-o", "args=", "--ppid", str(worker)], capture_output=True, text=True, check=False
    ).stdout
    return [line for line in listed.splitlines() if "bots.starters." in line]


async def test_a_worker_learns_new_versions_and_ends_the_ones_not_kept(tmp_path: Path) -> None:
    specs = {number: resolve_bot(name, f"v{number}") for number, name in NAMES.items()}
    rules = preset("newmarket").with_options({"hand_limit": 2})
    control = TimeControl(move_time=10.0, startup_time=30.0)
    sandbox = setting_to_env("none", Limits())
    with trio.fail_after(120):
        table = await WorkerTable.start(control, tmp_path, 1, sandbox)
        try:
            first = await table.play(
                key(1, (1, 2, 3)), rules, {v: specs[v] for v in (1, 2, 3)}, (1, 2, 3)
            )
            assert [seat.name for seat in first.seats] == ["v1", "v2", "v3"]
            running = bot_processes(table.process.pid)
            assert any("bots.starters.tracker" in line for line in running)
            second = await table.play(
                key(2, (1, 2, 4)), rules, {v: specs[v] for v in (1, 2, 4)}, (1, 2, 4)
            )
            assert [seat.name for seat in second.seats] == ["v1", "v2", "v4"]
            running = bot_processes(table.process.pid)
            assert not any("bots.starters.tracker" in line for line in running), running
            assert any("bots.starters.boodle" in line for line in running), running
        finally:
            await table.aclose()
