"""The speed rounds' shortcuts change no byte a user sees, and leave trio's promises whole.

A connection over file descriptors writes and reads them directly, and over
any other stream goes through trio's ``Stream`` (``referee.transport.connection``); a
match without a log file builds no log records at all (``_Referee.logging``).
The same match, with the same fake bots on a virtual clock, is played over
memory streams and over socket pairs, with and without a log file: every
seat's wire, the log file and the result must come out the same.  And a reply
already read skips trio's scheduler most of the time (``BotSession.receive_line``):
other tasks must still run, and a cancellation still be seen, at every reply.
A match alone in its trio run first waits for a reply by blocking the run
briefly (``BRIEF_WAIT``), spinning first (``SPIN_WAIT``): only when it is
alone, and never past a deadline.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import trio

import referee.transport.connection
from engine import preset
from referee.bots import BotSpec
from referee.match.referee import BRIEF_WAIT, SPIN_WAIT, play_match, spin_wait
from referee.match.result import MatchResult, result_json
from referee.transport.connection import Connection, ConnectionClosedError, _Contention
from referee.transport.session import SCHEDULE_EVERY, BotLostError, BotSession
from referee.transport.timecontrol import TimeControl
from tests.referee.fakes import fake_table, pipe_pair, randomly

CONTROL = TimeControl(move_time=1.0, time_bank=5.0)


async def play(log: Path | None, *, sockets: bool) -> tuple[MatchResult, list[list[str]]]:
    policies = [randomly(seed) for seed in range(4)]
    async with fake_table(policies, CONTROL, sockets=sockets) as (sessions, wires):
        if sockets:  # the road under test is the descriptors' one
            for session in sessions:
                assert session.connection is not None
                assert isinstance(session.connection.stream, trio.SocketStream)
        result = await play_match(
            sessions,
            dataclasses.replace(preset("boodle"), hand_limit=6),
            7,
            time_control=CONTROL,
            match_id="fast-paths",
            log_path=log,
        )
    return result, [wire.transcript for wire in wires]


def scored(result: MatchResult) -> dict[str, object]:
    """The result as a league records it, where its log went left out."""
    record = result_json(result)
    record.pop("log_path")
    return record


def log_lines(path: Path) -> tuple[list[str], list[str]]:
    """The log's lines, the header's wall-clock start time and the result's own path
    left out: the game, in order, and then the match's end, sorted.

    Each seat is told the end by its own task, all at once (``finish_all``), in an
    order of trio's choosing (it reverses a batch of tasks at random), with or
    without the shortcuts; so those records are compared as a set.
    """
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header.pop("started", None)
    lines[0] = json.dumps(header)
    lines = [line.replace(str(path), "LOG") for line in lines]
    end = next(i for i, line in enumerate(lines) if '"type":"match_end"' in line)
    return lines[:end], sorted(lines[end:])


async def test_the_log_and_the_wire_are_the_same_over_descriptors_and_streams(
    autojump_clock: object, tmp_path: Path
) -> None:
    streams, streams_wire = await play(tmp_path / "streams.jsonl", sockets=False)
    fds, fds_wire = await play(tmp_path / "fds.jsonl", sockets=True)
    assert streams.hands == 6
    assert fds_wire == streams_wire
    assert log_lines(tmp_path / "fds.jsonl") == log_lines(tmp_path / "streams.jsonl")
    assert scored(fds) == scored(streams)


async def test_a_match_without_a_log_file_plays_and_scores_the_same(
    autojump_clock: object, tmp_path: Path
) -> None:
    logged, logged_wire = await play(tmp_path / "logged.jsonl", sockets=True)
    unlogged, unlogged_wire = await play(None, sockets=True)
    assert unlogged_wire == logged_wire
    assert scored(unlogged) == scored(logged)


def _session_over_a_pipe() -> tuple[BotSession, Connection]:
    """A session whose connection reads a pipe, and the connection that writes to it."""
    session = BotSession(BotSpec("piped", (), transport="tcp"), CONTROL)
    session.connection, bot = pipe_pair()
    return session, bot


async def test_replies_always_already_there_still_let_other_tasks_run_and_be_cancelled() -> None:
    # A reply already read passes the scheduler only every SCHEDULE_EVERY times in a
    # row (session.receive_line): a bot always quicker than the referee must not keep
    # the other tasks (a hand-end write, the process watcher, stderr) from running,
    # and cancellation must still be seen at every reply, without losing the line.
    session, bot = _session_over_a_pipe()
    await bot.send(b"".join(b"line %d\n" % n for n in range(3 * SCHEDULE_EVERY)))
    ran_at: list[int] = []
    taken = 0

    async def other_task() -> None:
        ran_at.append(taken)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(other_task)
        for _ in range(2 * SCHEDULE_EVERY):
            assert await session.receive_line(trio.current_time() + 10) == b"line %d" % taken
            taken += 1
    # The other task is in the batch of the first scheduler pass (after SCHEDULE_EVERY
    # replies), but trio runs a batch in a random order, so the receiving task may go
    # first and take the next SCHEDULE_EVERY replies before the other task's turn in
    # that same batch: either way it runs before the second pass is over.
    assert ran_at and ran_at[0] < 2 * SCHEDULE_EVERY, f"other task ran only after {ran_at} replies"
    with trio.CancelScope() as scope:
        scope.cancel()
        await session.receive_line(trio.current_time() + 10)
    assert scope.cancelled_caught
    assert await session.receive_line(trio.current_time() + 10) == b"line %d" % taken
    await session.connection.aclose()  # type: ignore[union-attr]
    await bot.aclose()


async def test_a_brief_wait_reads_a_reply_that_comes_and_a_deadline_ends_a_silent_bot() -> None:
    session, bot = _session_over_a_pipe()
    # A reply written by another thread while the referee blocks in its brief wait (or,
    # if the thread is slower than that, while it waits the trio way): read either way.

    writer = written_from_a_thread(bot, b"late\n", after=lambda: time.sleep(0.0002))
    with trio.fail_after(10):  # generous: a real pipe and a real thread
        assert await session.receive_line(trio.current_time() + 5, 0.5) == b"late"
    writer.join()
    # Nothing comes: the brief wait gives up and the deadline ends the wait, as without it.
    started = time.monotonic()
    assert await session.receive_line(trio.current_time() + 0.05, 0.01) is None
    assert time.monotonic() - started < 5
    # A deadline nearer than the brief wait: no blocking past it.
    assert await session.receive_line(trio.current_time() + 0.01, 10.0) is None
    # The bot's end while the referee blocks: lost, named as at any other wait.
    await bot.aclose()
    with pytest.raises(BotLostError) as lost:
        await session.receive_line(trio.current_time() + 5, 0.5)
    assert lost.value.kind.value == "eof"
    await session.connection.aclose()  # type: ignore[union-attr]


async def test_only_a_match_alone_in_its_trio_run_waits_briefly(
    autojump_clock: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Blocking the run would hold up every other table of a process that plays
    # several at once (a pool of remote bots, sprt --concurrency): those wait the
    # trio way, and a table left alone takes the brief wait again.
    playing = [0]
    seen: list[tuple[tuple[float, float], int]] = []  # ((brief wait, spin), matches in play)
    real_receive_line = BotSession.receive_line

    async def spy(
        self: BotSession, deadline: float, brief_wait: float = 0.0, spin: float = 0.0
    ) -> bytes | None:
        seen.append(((brief_wait, spin), playing[0]))
        return await real_receive_line(self, deadline, brief_wait, spin)

    monkeypatch.setattr(BotSession, "receive_line", spy)

    async def one_match(hands: int) -> None:
        policies = [randomly(seed) for seed in range(4)]
        async with fake_table(policies, CONTROL, sockets=True) as (sessions, _):
            playing[0] += 1
            try:
                await play_match(
                    sessions,
                    dataclasses.replace(preset("boodle"), hand_limit=hands),
                    hands,
                    time_control=CONTROL,
                    match_id=f"alone-{hands}",
                )
            finally:
                playing[0] -= 1

    alone = (BRIEF_WAIT, SPIN_WAIT)
    await one_match(2)
    assert seen and all(wait == alone for wait, _ in seen)
    seen.clear()
    async with trio.open_nursery() as nursery:  # a short match and a long one at once
        nursery.start_soon(one_match, 1)
        nursery.start_soon(one_match, 6)
    together = [wait for wait, in_play in seen if in_play == 2]
    alone_after = [wait for wait, in_play in seen if in_play == 1]
    assert together and set(together) == {(0.0, 0.0)}
    assert alone_after and set(alone_after) == {alone}


def written_from_a_thread(
    bot: Connection, line: bytes, *, after: Callable[[], object]
) -> threading.Thread:
    """A started thread that writes ``line`` to the bot's end once ``after()`` returns."""

    def write() -> None:
        after()
        bot.send_now(line)

    writer = threading.Thread(target=write)
    writer.start()
    return writer


class _SpinStarted(_Contention):
    """A calm machine's gate that says when a spin starts (``may_spin`` is asked only
    once a first look found nothing)."""

    def __init__(self, path: str) -> None:
        super().__init__(path, cores=2)
        self.started = threading.Event()

    def may_spin(self) -> bool:
        self.started.set()
        return super().may_spin()


def calm_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> _SpinStarted:
    """A machine with a core to spare, whatever the one running the tests is doing."""
    loadavg = tmp_path / "loadavg"
    loadavg.write_text("0.10 0.10 0.10 1/100 1\n")
    contention = _SpinStarted(str(loadavg))
    monkeypatch.setattr(referee.transport.connection, "_CONTENTION", contention)
    return contention


async def test_a_spin_takes_a_reply_that_comes_and_gives_way_to_a_sleep_within_the_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    contention = calm_machine(tmp_path, monkeypatch)
    reader, bot = pipe_pair()
    # A reply written by another thread once the reader spins: taken by the spin (1 s
    # long; a loaded machine could still be slower, and then the sleep after it takes
    # the reply, which is the same to the caller).
    writer = written_from_a_thread(bot, b"quick\n", after=contention.started.wait)
    started = time.monotonic()
    assert reader.read_soon(5.0, spin=1.0)
    assert reader.take_line() == b"quick"
    assert 0.0 < reader.spun <= time.monotonic() - started
    writer.join()
    # Nothing comes: a spin of up to 20 ms (cut short if another process takes the core
    # meanwhile, as on a busy test machine), then a sleep for the rest of the 50 ms.  (The
    # writer thread's turn may have counted as another process's: a calm machine again.)
    calm_machine(tmp_path, monkeypatch)
    spun, started = reader.spun, time.monotonic()
    assert not reader.read_soon(0.05, spin=0.02)
    waited = time.monotonic() - started
    assert 0.0 < reader.spun - spun <= min(waited, 0.03)
    assert 0.05 <= waited < 5  # generous above: a real pipe on a shared machine
    # A spin longer than the wait is cut to it.
    started = time.monotonic()
    assert not reader.read_soon(0.01, spin=10.0)
    assert time.monotonic() - started < 5
    # The bot's end during a spin ends the read as any other read does.
    await bot.aclose()
    with pytest.raises(ConnectionClosedError):
        reader.read_soon(5.0, spin=1.0)
    await reader.aclose()


def test_the_spin_is_set_in_microseconds_and_never_on_one_core() -> None:
    assert spin_wait(None, cores=2) == 0.0005  # the default: 500 µs
    assert spin_wait("", cores=2) == 0.0005
    assert spin_wait("250", cores=8) == 0.00025
    assert spin_wait("0", cores=2) == 0.0  # a machine shared with other work
    assert spin_wait("1000", cores=1) == 0.0  # one core: looking only takes turns with bots
    for bad in ("abc", "-1", "1001", "0.5"):
        with pytest.raises(ValueError, match=r"NEWMARKET_SPIN: expected microseconds"):
            spin_wait(bad, cores=2)


def test_no_spin_starts_while_every_core_has_another_runnable_process(tmp_path: Path) -> None:
    loadavg = tmp_path / "loadavg"
    contention = _Contention(str(loadavg), cores=2)
    loadavg.write_text("0.52 0.58 0.59 2/341 12345\n")  # this process and the bot it asked
    assert contention.may_spin()
    loadavg.write_text("3.91 3.50 2.80 4/341 12345\n")  # and two CPU-bound others
    assert not contention.may_spin()
    loadavg.write_text("0.52 0.58 0.59 1/341 12345\n")
    assert contention.may_spin()
    loadavg.write_text("garbage\n")  # nothing known: no spin
    assert not contention.may_spin()
    assert not _Contention(str(tmp_path / "missing"), cores=8).may_spin()


def test_spins_cut_short_by_other_processes_back_off_and_clean_ones_return(
    tmp_path: Path,
) -> None:
    loadavg = tmp_path / "loadavg"
    loadavg.write_text("0.00 0.00 0.00 1/100 1\n")
    contention = _Contention(str(loadavg), cores=2)

    def sleeps_before_the_next_spin() -> int:
        count = 0
        while not contention.may_spin():
            count += 1
        return count

    backoffs = []
    for _ in range(12):  # every spin meets another process: 1, 2, 4, ... waits asleep
        contention.spun(contended=True)
        backoffs.append(sleeps_before_the_next_spin())
    assert backoffs == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 1024]
    contention.spun(contended=False)  # a clean spin halves the count
    contention.spun(contended=True)
    assert sleeps_before_the_next_spin() == 1024
    for _ in range(11):
        contention.spun(contended=False)
    assert contention.may_spin()
    contention.spun(contended=True)
    assert sleeps_before_the_next_spin() == 1
