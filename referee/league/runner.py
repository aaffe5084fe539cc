"""Playing a league: parallel tables, bot processes reused across matches, a clean stop.

The shape follows from three promises of the issue:

* **Parallel tables, one bot process per bot per table.**  ``--jobs N`` starts
  N *table workers* (``referee.league.worker``), each a process that referees
  one table at a time and keeps a session of every bot it has met for the
  next match (start-up is paid once).  Workers are processes, not tasks,
  because refereeing costs about as much CPU as the bots themselves: in one
  process it would be the bottleneck of every league on a multi-core machine.
  This module hands out matches, one at a time, to whichever worker is free.
* **Crash safety.**  Only this process writes the database: each result is
  recorded (one transaction) the moment its worker reports it.  Nothing else
  is state: what to play next is the schedule minus the stored match ids.
* **A clean stop.**  SIGINT and SIGTERM cancel the league: every worker's
  stdin is closed, which makes it drop its match in progress and end its
  bots' process trees, and ``run_league`` returns with ``stopped`` set.
  Workers ignore the terminal's Ctrl-C themselves and leave the decision to
  this process.  If this process is killed outright, the workers see their
  stdin end and do the same.

The runner knows nothing of the two formats beyond "a list of tables to
play": round robin hands it the whole schedule at once, bankroll one round
at a time (a round's seating depends on the previous round's results).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import trio

from engine.rules import Rules
from referee.bots import BotSpec
from referee.league import bankroll
from referee.league.config import LeagueConfig
from referee.league.schedule import ScheduledMatch, build_schedule
from referee.league.store import LeagueStore, MatchKey
from referee.league.worker import JsonLines, one_line, play_message, setup_message
from referee.match import MatchResult
from referee.timecontrol import TimeControl

if TYPE_CHECKING:
    from referee.league.cluster import ClusterPool


class LeagueError(Exception):
    """The referee side of a league failed (not a bot): a worker could not write its log."""


@dataclasses.dataclass(frozen=True)
class TableJob:
    """A match to play: where it sits in the league, and its rules."""

    key: MatchKey
    rules: Rules


class Reporter(Protocol):
    """What the runner tells the person watching (``RichReporter``) or a test."""

    def begin(self, total: int | None, done: int, description: str) -> None: ...

    def describe(self, description: str, total: int | None = None) -> None: ...

    def finished(self, job: TableJob, result: MatchResult) -> None: ...

    def warn(self, text: str) -> None: ...

    def note(self, text: str) -> None:
        """Something the person watching wants to know that is not a problem."""

    def end(self) -> None: ...


class SilentReporter:
    """A reporter that keeps the warnings and results in lists (tests, benchmarks)."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.notes: list[str] = []
        self.results: list[MatchResult] = []

    def begin(self, total: int | None, done: int, description: str) -> None:
        pass

    def describe(self, description: str, total: int | None = None) -> None:
        pass

    def finished(self, job: TableJob, result: MatchResult) -> None:
        self.results.append(result)

    def warn(self, text: str) -> None:
        self.warnings.append(text)

    def note(self, text: str) -> None:
        self.notes.append(text)

    def end(self) -> None:
        pass


@dataclasses.dataclass
class LeagueRun:
    """How a call of ``run_league`` ended."""

    played: int  # matches finished by this call
    done: int  # matches finished in the database
    total: int | None  # matches of the whole league, when known
    stopped: bool  # by a signal: run the same command again to resume
    seconds: float


def round_robin_jobs(config: LeagueConfig) -> list[TableJob]:
    """Every match of a round-robin league, in schedule order."""
    settings = config.schedule
    schedule = build_schedule(
        len(config.bots),
        config.table_size,
        config.seed,
        kind=settings.kind,
        duplicate=settings.duplicate,
        cycles=settings.cycles,
        meetings=settings.meetings,
        round_robin_limit=settings.round_robin_limit,
        candidates=settings.candidates,
    )
    start = config.rules.starting_chips
    return [TableJob(_key(match, start), config.rules) for match in schedule]


def _key(match: ScheduledMatch, start: int) -> MatchKey:
    return MatchKey(
        match_id=match.match_id,
        ordinal=match.index,
        round=match.cycle,
        table=match.table,
        rotation=match.rotation,
        seed=match.seed,
        bots=match.bots,
        start_chips=(start,) * len(match.bots),
    )


def bankroll_params(config: LeagueConfig) -> bankroll.BankrollParams:
    return bankroll.BankrollParams(
        bots=len(config.bots),
        table_size=config.table_size,
        seed=config.seed,
        rules=config.rules,
        max_rounds=config.bankroll.max_rounds,
    )


async def run_league(
    config: LeagueConfig,
    store: LeagueStore,
    *,
    jobs: int,
    reporter: Reporter,
    logs: Path | None = None,
    handle_signals: bool = True,
    cluster: str | None = None,
) -> LeagueRun:
    """Play what is left of the league; returns when it is complete or stopped.

    Match logs go to ``logs`` (None: no logs); see ``LeagueConfig.log_dir``.
    ``cluster`` (a Dask scheduler's address or ``local:N``) plays the tables
    on a Dask cluster instead of ``jobs`` local table workers.
    """
    started = time.monotonic()
    played = 0
    total: int | None = None

    def record(job: TableJob, result: MatchResult) -> None:
        nonlocal played
        store.record(job.key, result)
        played += 1
        reporter.finished(job, result)
        for warning in result_warnings(config.bots, job, result):
            reporter.warn(warning)

    stop_requested = trio.Event()
    async with trio.open_nursery() as outer:
        with trio.CancelScope() as league_scope:
            if handle_signals:
                # In the outer nursery: signals that come during the clean-up are still caught.
                outer.start_soon(_watch_signals, league_scope, stop_requested)
            async with _league_pool(config, jobs, record, logs, reporter, cluster) as pool:
                if config.format == "bankroll":
                    await _play_bankroll(config, store, pool, reporter)
                else:
                    all_jobs = round_robin_jobs(config)
                    total = len(all_jobs)
                    finished = store.finished_ids()
                    pending = [job for job in all_jobs if job.key.match_id not in finished]
                    reporter.begin(total, total - len(pending), f"{config.name}: round robin")
                    await pool.play(pending)
        outer.cancel_scope.cancel()
    reporter.end()
    return LeagueRun(
        played, store.count(), total, stop_requested.is_set(), time.monotonic() - started
    )


async def _play_bankroll(
    config: LeagueConfig, store: LeagueStore, pool: MatchPool, reporter: Reporter
) -> None:
    params = bankroll_params(config)
    reporter.begin(None, store.count(), f"{config.name}: bankroll")
    played_round: int | None = None
    while True:
        state = bankroll.replay(params, store.matches())
        if played_round is not None:
            gone = [
                config.bots[bot].name
                for bot, out in enumerate(state.out_round)
                if out == played_round
            ]
            if gone:
                reporter.warn(f"round {played_round}: out of the league: {', '.join(gone)}")
        if state.finished:
            return
        played_round = state.next_round[0].key.round
        reporter.describe(
            f"{config.name}: round {played_round}, {len(state.survivors)} bots "
            f"at {len(state.next_round)} tables"
        )
        finished = store.finished_ids()
        pending = [
            TableJob(table.key, table.rules)
            for table in state.next_round
            if table.key.match_id not in finished
        ]
        await pool.play(pending)


def result_warnings(bots: Sequence[BotSpec], job: TableJob, result: MatchResult) -> list[str]:
    """One line per disqualified seat, naming the fault that settled it."""
    out = []
    for seat in result.seats:
        if seat.status != "disqualified":
            continue
        fault = seat.faults[-1] if seat.faults else None
        why = f"{fault.kind} in hand {fault.hand}: {fault.detail}" if fault else "no fault recorded"
        name = bots[job.key.bots[seat.seat]].name
        out.append(f"{result.match_id}: {name} disqualified ({one_line(why)})")
    return out


async def _watch_signals(scope: trio.CancelScope, stop_requested: trio.Event) -> None:
    """The first SIGINT or SIGTERM stops the league; later ones are ignored while it cleans up."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _signal in signals:
            if not stop_requested.is_set():
                stop_requested.set()
                scope.cancel()


# ---------------------------------------------------------------------- the pool

WORKER_EXIT_GRACE = 15.0  # seconds a worker gets to end its bots after its stdin closes


class _WorkerProcess:
    """The league's side of one table worker process (``referee.league.worker``)."""

    def __init__(self, process: trio.Process, warn: Callable[[str], None]) -> None:
        self.process = process
        self.warn = warn
        assert process.stdin is not None and process.stdout is not None
        self.stdin = process.stdin
        self.lines = JsonLines(process.stdout)

    async def send(self, message: dict[str, object]) -> None:
        await self.stdin.send_all(json.dumps(message).encode() + b"\n")

    async def play(self, job: TableJob) -> MatchResult:
        await self.send(play_message(job.key, job.rules))
        while True:
            message = await self.lines.next()
            if message is None:
                code = await self.process.wait()
                raise LeagueError(f"a table worker ended unexpectedly (exit code {code})")
            if message["type"] == "error":
                raise LeagueError(str(message["text"]))
            if message["type"] == "warn":
                self.warn(str(message["text"]))
            elif message["type"] == "result":
                return MatchResult.from_json(message["result"])

    async def close(self) -> None:
        """End the worker (it ends its bots first); shielded, so a stop cannot skip it."""
        with trio.CancelScope(shield=True):
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await self.stdin.aclose()
            with trio.move_on_after(WORKER_EXIT_GRACE):
                await self.process.wait()
            if self.process.returncode is None:
                self.process.kill()
                await self.process.wait()


class MatchPool(Protocol):
    """What a league needs of a pool: play these tables, recording each result as it ends."""

    async def play(self, jobs: Sequence[TableJob]) -> None: ...


class TablePool:
    """``jobs`` table worker processes; ``play`` runs tables on them and records each result."""

    def __init__(
        self,
        bots: Sequence[BotSpec],
        control: TimeControl,
        jobs: int,
        on_result: Callable[[TableJob, MatchResult], None],
        logs: Path | None,
        warn: Callable[[str], None],
    ) -> None:
        self.bots = list(bots)
        self.control = control
        self.jobs = max(1, jobs)
        self.on_result = on_result
        self.logs = logs
        self.warn = warn
        self.workers: list[_WorkerProcess] = []

    async def _start_workers(self, count: int) -> None:
        while len(self.workers) < min(count, self.jobs):
            process = await trio.lowlevel.open_process(
                [sys.executable, "-m", "referee.league.worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            worker = _WorkerProcess(process, self.warn)
            self.workers.append(worker)
            await worker.send(setup_message(self.bots, self.control, self.logs, len(self.workers)))

    async def play(self, jobs: Sequence[TableJob]) -> None:
        if not jobs:
            return
        if self.logs is not None:
            self.logs.mkdir(parents=True, exist_ok=True)
        await self._start_workers(len(jobs))
        send, receive = trio.open_memory_channel[TableJob](math.inf)
        for job in jobs:
            send.send_nowait(job)
        send.close()
        async with trio.open_nursery() as nursery:
            for worker in self.workers[: len(jobs)]:
                nursery.start_soon(self._work, worker, receive.clone())
        receive.close()

    async def _work(
        self, worker: _WorkerProcess, receive: trio.MemoryReceiveChannel[TableJob]
    ) -> None:
        async with receive:
            async for job in receive:
                result = await worker.play(job)
                self.on_result(job, result)

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                for worker in self.workers:
                    nursery.start_soon(worker.close)


def _league_pool(
    config: LeagueConfig,
    jobs: int,
    record: Callable[[TableJob, MatchResult], None],
    logs: Path | None,
    reporter: Reporter,
    cluster: str | None,
) -> contextlib.AbstractAsyncContextManager[MatchPool]:
    """Table workers, a cluster, or (with remote bots) tables played in this process."""
    if any(bot.remote for bot in config.bots):
        if cluster is not None:
            raise LeagueError("--cluster: a league with remote bots plays in the league process")
        from referee.league.remote_pool import open_remote_pool

        remote = config.remote
        return open_remote_pool(
            config.bots,
            config.time_control,
            record,
            logs,
            reporter.warn,
            reporter.note,
            host=remote.host,
            port=remote.port,
            wait=remote.wait,
            tokens_path=config.tokens_path,
        )
    return open_pool(config.bots, config.time_control, jobs, record, logs, reporter.warn, cluster)


@asynccontextmanager
async def open_pool(
    bots: Sequence[BotSpec],
    control: TimeControl,
    jobs: int,
    on_result: Callable[[TableJob, MatchResult], None],
    logs: Path | None,
    warn: Callable[[str], None] | None = None,
    cluster: str | None = None,
) -> AsyncIterator[MatchPool]:
    """A pool of table workers; leaving it ends every worker and bot process it started.

    With ``cluster`` the tables are Dask tasks (``referee.league.cluster``),
    imported only then: Dask is slow to import and a local league needs none of it.
    """
    pool: TablePool | ClusterPool
    if cluster is not None:
        from referee.league.cluster import ClusterPool

        pool = ClusterPool(cluster, bots, control, on_result, logs, warn or (lambda _: None))
        try:
            await pool.start()
        except BaseException:
            await pool.aclose()
            raise
    else:
        pool = TablePool(bots, control, jobs, on_result, logs, warn or (lambda _: None))
    try:
        yield pool
    finally:
        await pool.aclose()
