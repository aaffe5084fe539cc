"""A table worker starts the next rotation's bot processes while the current match plays.

With fair deals each seat rotation needs processes that have not seen its
deal, and waiting for them (process start and handshake) before every
match left the table's core idle.  ``TableSessions.start_ahead`` starts them
during the match before; these tests drive it directly, without timing: the
look-ahead asks during rotation 0, and rotation 1 must take exactly those
processes (fresh ones, none started twice), and a bot that cannot start is
still a fault of the match that takes its process, warned about then.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio

from engine import preset
from referee.bots import BotSpec
from referee.league.store import MatchKey
from referee.league.worker import TableSessions
from referee.timecontrol import TimeControl

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")

REPO = Path(__file__).resolve().parents[2]
MEMORY = BotSpec("memory", (sys.executable, "-m", "tests.league.remembers_deals"), cwd=REPO)
CONTROL = TimeControl(move_time=30.0, startup_time=60.0)
RULES = preset("boodle").with_options({"hand_limit": 1})


def rotation(number: int, bots: tuple[int, ...]) -> MatchKey:
    """Rotation ``number`` of one deal (seed 5), seats turned by ``number``."""
    seated = bots[number:] + bots[:number]
    return MatchKey(f"r{number}", number, 0, 0, number, 5, seated, (20,) * len(bots))


async def test_the_next_rotation_plays_with_the_processes_started_during_this_one() -> None:
    warnings: list[str] = []
    async with trio.open_nursery() as nursery:
        table = TableSessions(nursery, [MEMORY] * 3, CONTROL, None, 1, warnings.append)
        first, second = rotation(0, (0, 1, 2)), rotation(1, (0, 1, 2))

        async def look_ahead() -> None:
            table.start_ahead(second)

        await table.play(first, RULES, look_ahead)
        assert table.started == 3  # the ones started ahead are not counted until taken
        for event in list(table.starting.values()):
            await event.wait()
        ahead = {bot: [p for p in table.processes[bot] if p.ahead] for bot in range(3)}
        assert all(len(processes) == 1 for processes in ahead.values())
        assert all(processes[0].session.handshaken for processes in ahead.values())

        await table.play(second, RULES)
        assert table.started == 6 and table.fresh_starts == 3  # and not one more start
        for bot in range(3):
            taken = ahead[bot][0]
            assert not taken.ahead and taken.dealt == {5}  # rotation 1 played with it
            assert taken in table.processes[bot]
        for processes in table.processes.values():  # rotation 0's processes: one deal each
            assert all(process.dealt == {5} for process in processes)
        assert warnings == []
        nursery.cancel_scope.cancel()


async def test_a_bot_that_cannot_start_ahead_is_the_fault_of_the_match_that_takes_it(
    tmp_path: Path,
) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import sys\nsys.exit(1)\n")
    fails = BotSpec("fails", (sys.executable, str(broken)))
    warnings: list[str] = []
    async with trio.open_nursery() as nursery:
        table = TableSessions(nursery, [MEMORY, MEMORY, fails], CONTROL, None, 1, warnings.append)
        first, second = rotation(0, (0, 1, 2)), rotation(1, (0, 1, 2))

        async def look_ahead() -> None:
            table.start_ahead(second)

        played_first = await table.play(first, RULES, look_ahead)
        for event in list(table.starting.values()):
            await event.wait()
        # Its own failed start-up is told; the one started ahead (and failed) not yet.
        assert len(warnings) == 1 and warnings[0].startswith("fails could not start"), warnings
        assert table.failed_starts == {2: 1}
        played_second = await table.play(second, RULES)
        assert len(warnings) == 2 and warnings[1].startswith("fails could not start"), warnings
        assert table.failed_starts == {2: 2}  # two attempts, as without the start ahead
        for result in (played_first, played_second):
            seat = next(seat for seat in result.seats if seat.name == "fails")
            assert seat.faults, result  # each match that took a broken process records it
        nursery.cancel_scope.cancel()
