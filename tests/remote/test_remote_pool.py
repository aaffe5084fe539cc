"""The order a league with remote bots plays its tables in, on trio's virtual clock.

The matches themselves are replaced by a recorder (``_play_one``), so what is
tested is the scheduling: tables whose remote bots are connected go first, a
table with an absent bot waits until the bot connects or its wait is over,
and never longer.
"""

from __future__ import annotations

import pytest
import trio
import trio.testing

from engine import preset
from engine.rules import Rules
from referee.bots import BotSpec
from referee.league.remote_pool import RemotePool
from referee.league.runner import TableJob
from referee.league.store import MatchKey
from referee.match import MatchResult
from referee.remote import RemoteLobby
from referee.session import BotSession
from referee.timecontrol import TimeControl

BOTS = [
    BotSpec("here", (), transport="tcp"),
    BotSpec("late", (), transport="tcp"),
    BotSpec("ghost", (), transport="tcp"),
    BotSpec("local", ("true",)),
]
CONTROL = TimeControl()
WAIT = 100.0


def job(match_id: str, *bots: int) -> TableJob:
    key = MatchKey(match_id, 0, 0, 0, 0, 1, bots, (40,) * len(bots), 1)
    rules: Rules = preset("boodle")
    return TableJob(key, rules)


def connected(bot: int) -> BotSession:
    session = BotSession(BOTS[bot], CONTROL)
    session.handshaken = True
    return session


async def play_in_order(
    jobs: list[TableJob], connect_late_at: float | None
) -> list[tuple[str, float, list[str]]]:
    """(match id, virtual time, absent bots) of every table, in the order played."""
    lobby = RemoteLobby(BOTS, {0: "a", 1: "b", 2: "c"}, CONTROL, wait=WAIT)
    lobby.start_clock()
    lobby.seat(0, connected(0))
    played: list[tuple[str, float, list[str]]] = []
    pool = RemotePool(BOTS, CONTROL, lobby, None, lambda _job, _result: None, None, print)  # type: ignore[arg-type]

    async def record(table: TableJob) -> MatchResult:
        absent = [BOTS[bot].name for bot in pool._absent(table)]
        played.append((table.key.match_id, trio.current_time(), absent))
        return None  # type: ignore[return-value]

    pool._play_one = record  # type: ignore[method-assign,assignment]

    async def arrive() -> None:
        assert connect_late_at is not None
        await trio.sleep_until(connect_late_at)
        lobby.seat(1, connected(1))

    async with trio.open_nursery() as nursery:
        if connect_late_at is not None:
            nursery.start_soon(arrive)
        await pool.play(jobs)
    return played


@pytest.fixture
def autojump_clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0)


async def test_present_tables_first_then_a_late_bot_as_soon_as_it_connects(
    autojump_clock: trio.testing.MockClock,
) -> None:
    jobs = [job("with-late", 0, 1, 3), job("with-ghost", 0, 2, 3), job("present", 0, 3)]
    played = await play_in_order(jobs, connect_late_at=30.0)
    start = played[0][1]
    assert [(name, absent) for name, _, absent in played] == [
        ("present", []),
        ("with-late", []),
        ("with-ghost", ["ghost"]),
    ]
    assert played[1][1] - start == pytest.approx(30.0)  # not a moment longer than needed
    assert played[2][1] - start == pytest.approx(WAIT)  # the no-show is waited for, then not


async def test_nobody_waits_past_the_deadline_for_a_bot_that_never_comes(
    autojump_clock: trio.testing.MockClock,
) -> None:
    played = await play_in_order([job("a", 0, 1, 3), job("b", 0, 2, 3)], connect_late_at=None)
    assert [absent for _, _, absent in played] == [["late"], ["ghost"]]
    assert played[0][1] == pytest.approx(played[1][1])
