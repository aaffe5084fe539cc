"""The order a league with remote bots plays its tables in, on trio's virtual clock.

The matches themselves are replaced by a recorder (``_play_one``), so what is
tested is the scheduling: tables whose remote bots are connected go first, a
table with an absent bot waits until the bot connects or its wait is over,
and never longer; a bot that keeps the tables waiting is benched, and then
not waited for.
"""

from __future__ import annotations

import math

import pytest
import trio
import trio.testing

from engine import preset
from engine.rules import Rules
from protocol.faults import FaultKind
from protocol.messages import PROTOCOL_VERSION, Ready, encode
from referee.bots import BotSpec
from referee.match.key import MatchKey
from referee.match.result import MatchResult
from referee.tables.job import TableJob
from referee.tables.remote_pool import RemotePool
from referee.transport.lobby import BENCH_FIRST, WAIT_BUDGET, WAIT_WINDOW, Bench, RemoteLobby
from referee.transport.session import BotSession
from referee.transport.timecontrol import TimeControl

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
    ready = Ready(name=BOTS[bot].name, protocol=PROTOCOL_VERSION)
    session.conversation.receive_ready(encode(ready))  # handshaken, as the lobby seats it
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


async def play_with_a_bot_that_drops(
    jobs: list[TableJob], back_after: float
) -> tuple[list[tuple[str, float, str]], list[str]]:
    """Every table seats "late" (bot 1), whose connection drops in each match it plays and
    comes back ``back_after`` seconds later: (match id, time, how bot 1 sat) and the notes."""
    notes: list[str] = []
    lobby = RemoteLobby(BOTS, {0: "a", 1: "b", 2: "c"}, CONTROL, wait=WAIT, note=notes.append)
    lobby.start_clock()
    lobby.seat(0, connected(0))
    lobby.seat(1, connected(1))
    played: list[tuple[str, float, str]] = []
    pool = RemotePool(BOTS, CONTROL, lobby, None, lambda _job, _result: None, None, print)  # type: ignore[arg-type]

    async def record(table: TableJob) -> MatchResult:
        session = lobby.live(1)
        if session is None:
            death = lobby.absent_session(1).death
            assert death is not None
            played.append((table.key.match_id, trio.current_time(), death.detail))
        else:
            played.append((table.key.match_id, trio.current_time(), "connected"))
        await trio.sleep(10)  # the match, at whose end its connection drops
        if session is not None:
            session.lose(FaultKind.EOF, "it closed the connection")  # as the match notices
            nursery.start_soon(come_back)
        return None  # type: ignore[return-value]

    async def come_back() -> None:
        await trio.sleep(back_after)
        if lobby.bench.left(1) is None:  # a benched bot's connection is refused
            lobby.seat(1, connected(1))

    pool._play_one = record  # type: ignore[method-assign,assignment]
    async with trio.open_nursery() as nursery:
        await pool.play(jobs)
        nursery.cancel_scope.cancel()
    return played, [note for note in notes if note.startswith("lobby:")]


async def test_a_bot_that_keeps_the_table_waiting_is_benched_and_not_waited_for(
    autojump_clock: trio.testing.MockClock,
) -> None:
    jobs = [job(f"m{number}", 0, 1, 3) for number in range(6)]
    played, notes = await play_with_a_bot_that_drops(jobs, back_after=40.0)
    start = played[0][1]
    times = [at - start for _, at, _ in played]
    # Each match 10 s, then the table waits 40 s for it.  In its second absence the
    # tables' waits for it pass WAIT_BUDGET (60 s), and it is benched: from then on its
    # tables are played at once, its seat by the default policy, the fault saying why.
    assert times == pytest.approx([0, 50, 80, 90, 100, 110])
    assert [how for _, _, how in played[:2]] == ["connected"] * 2
    assert all(how.startswith("benched: late is benched for ") for _, _, how in played[2:])
    assert notes == [
        f"lobby: late benched for {BENCH_FIRST:g} s: the tables waited {WAIT_BUDGET:.0f} s "
        f"for it in 2 absences within {WAIT_WINDOW:g} s after its connection dropped "
        "(each next bench is twice as long)"
    ]


async def test_a_bot_that_costs_the_tables_little_or_is_away_once_is_never_benched(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # A bot that restarts between matches and is back in two seconds: 14 s in all.
    jobs = [job(f"m{number}", 0, 1, 3) for number in range(8)]
    played, notes = await play_with_a_bot_that_drops(jobs, back_after=2.0)
    assert [how for _, _, how in played] == ["connected"] * 8
    assert notes == []
    # Away once for 90 s: waited for, as ``wait`` says, and no bench for one absence.
    played, notes = await play_with_a_bot_that_drops(jobs[:2], back_after=90.0)
    assert [how for _, _, how in played] == ["connected"] * 2
    assert played[1][1] - played[0][1] == pytest.approx(100)
    assert notes == []


async def test_a_bot_back_quickly_every_time_is_benched_once_its_waits_add_up(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Back 9 s after each drop: no single wait is long, but at tables this quick they
    # are most of the table's time.  The seventh wait passes the budget (6 * 9 + 6 s).
    jobs = [job(f"m{number}", 0, 1, 3) for number in range(10)]
    played, notes = await play_with_a_bot_that_drops(jobs, back_after=9.0)
    assert [how for _, _, how in played[:7]] == ["connected"] * 7
    assert all(how.startswith("benched: ") for _, _, how in played[7:])
    assert played[7][1] - played[6][1] == pytest.approx(10 + 6)
    assert len(notes) == 1 and "waited 60 s for it in 7 absences" in notes[0]


async def test_benches_double_and_are_forgiven_after_a_quiet_while(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bench = Bench(budget=30, window=100, first=10, longest=80)
    now = trio.current_time()
    bench.waited(7, now - 90, now - 20, absence=now - 90)  # one absence, however long,
    assert bench.left_of(7, now - 90, now)[0] == math.inf  # leaves the budget whole
    await trio.sleep(100)  # out of the window
    lengths = []
    for _round in range(6):
        now = trio.current_time()
        bench.waited(7, now - 40, now - 20, absence=now - 40)
        # A second absence, whose wait starts now: the budget left is what the first left.
        left, total, absences = bench.left_of(7, now - 15, now)
        assert (left, total, absences) == (10, 20, 2)
        await trio.sleep(left)
        assert bench.left_of(7, now - 15, now)[0] <= 0
        lengths.append(bench.bench(7))
        assert bench.left(7) == lengths[-1]
        await trio.sleep(lengths[-1])
        assert bench.left(7) is None
    assert lengths == [10, 20, 40, 80, 80, 80]  # doubling, at most the longest
    await trio.sleep(80 + 40)  # no wait for the longest bench after the last: forgiven
    now = trio.current_time()
    bench.waited(7, now - 40, now - 20, absence=now - 40)
    bench.waited(7, now - 15, now - 5, absence=now - 15)
    assert bench.left_of(7, now - 15, now)[0] <= 0 and bench.bench(7) == 10
    assert bench.left(8) is None and bench.left_of(8, now, now)[0] == math.inf  # its own
