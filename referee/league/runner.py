"""Playing a league: parallel tables, bot processes reused across matches, a clean stop.

The shape follows from three promises of the issue:

* **One bot process per bot per concurrent table.**  ``--jobs N`` runs N
  *table workers*; each keeps its own session of every bot it has met, and
  reuses it for every later match (the protocol's lifecycle: start-up is paid
  once).  A session lives in its own small task (``_Keeper``), because trio
  closes nurseries and cancel scopes in the order they were opened, and a
  worker must be able to replace one crashed bot while keeping the others.
  A session that died (a crash, an end of stream) is started afresh before
  the worker's next match with that bot, so one crash costs one match, not
  the rest of the league; a bot that cannot even start is tried twice per
  worker, then left dead (every later match plays it by the default policy).
* **Crash safety.**  A result reaches the database (one transaction) as
  soon as its match ends, from the worker that played it.  Nothing else is
  state: what to play next is the schedule minus the stored match ids.
* **A clean stop.**  SIGINT and SIGTERM cancel the league: running matches
  are dropped (they are replayed on resume), every bot process tree is ended
  by ``open_bot``'s exit, and ``run_league`` returns with ``stopped`` set.

The runner knows nothing of the two formats beyond "a list of tables to
play": round robin hands it the whole schedule at once, bankroll one round
at a time (a round's seating depends on the previous round's results).
"""

from __future__ import annotations

import dataclasses
import math
import signal
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Protocol

import trio

from engine.rules import Rules
from referee.bots import BotSpec
from referee.league import bankroll
from referee.league.config import LeagueConfig
from referee.league.schedule import ScheduledMatch, build_schedule
from referee.league.store import LeagueStore, MatchKey
from referee.match import MatchResult, play_match
from referee.session import BotSession, open_bot
from referee.timecontrol import TimeControl

STARTUP_ATTEMPTS = 2  # per bot and worker; after that a bot that cannot start stays dead


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

    def end(self) -> None: ...


class SilentReporter:
    """A reporter that keeps the warnings in a list (tests, ``--json`` without a terminal)."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.results: list[MatchResult] = []

    def begin(self, total: int | None, done: int, description: str) -> None:
        pass

    def describe(self, description: str, total: int | None = None) -> None:
        pass

    def finished(self, job: TableJob, result: MatchResult) -> None:
        self.results.append(result)

    def warn(self, text: str) -> None:
        self.warnings.append(text)

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
) -> LeagueRun:
    """Play what is left of the league; returns when it is complete or stopped.

    Match logs go to ``logs`` (None: no logs); see ``LeagueConfig.log_dir``.
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
            async with open_pool(
                config.bots, config.time_control, jobs, record, logs, reporter.warn
            ) as pool:
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
    config: LeagueConfig, store: LeagueStore, pool: TablePool, reporter: Reporter
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
        out.append(f"{result.match_id}: {name} disqualified ({_one_line(why)})")
    return out


def _one_line(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


async def _watch_signals(scope: trio.CancelScope, stop_requested: trio.Event) -> None:
    """The first SIGINT or SIGTERM stops the league; later ones are ignored while it cleans up."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _signal in signals:
            if not stop_requested.is_set():
                stop_requested.set()
                scope.cancel()


# ---------------------------------------------------------------------- the pool


class _Keeper:
    """One bot session, held open by its own task until asked to close."""

    def __init__(self) -> None:
        self.close_requested = trio.Event()
        self.closed = trio.Event()

    async def run(
        self,
        spec: BotSpec,
        control: TimeControl,
        stderr_path: Path | None,
        *,
        task_status: trio.TaskStatus[BotSession] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        try:
            async with open_bot(spec, control, stderr_path=stderr_path) as session:
                task_status.started(session)
                await self.close_requested.wait()
        finally:
            self.closed.set()

    async def close(self) -> None:
        self.close_requested.set()
        await self.closed.wait()


class _Worker:
    """One table's worth of bot sessions, reused match after match."""

    def __init__(self, pool: TablePool, number: int) -> None:
        self.pool = pool
        self.number = number
        self.sessions: dict[int, tuple[_Keeper, BotSession]] = {}
        self.failed_starts: dict[int, int] = {}

    async def session(self, bot: int) -> BotSession:
        held = self.sessions.get(bot)
        if held is not None:
            old_keeper, old = held
            gave_up = self.failed_starts.get(bot, 0) >= STARTUP_ATTEMPTS and not old.handshaken
            if old.alive or gave_up:
                return old
            await old_keeper.close()  # dead: start it afresh for this match
            del self.sessions[bot]
        keeper = _Keeper()
        spec = self.pool.bots[bot]
        stderr = None
        if self.pool.logs is not None:
            stderr = self.pool.logs / "stderr" / f"{_safe(spec.name)}-{self.number}.stderr"
        session: BotSession = await self.pool.nursery.start(
            keeper.run, spec, self.pool.control, stderr
        )
        self.sessions[bot] = (keeper, session)
        if not session.handshaken:
            self.failed_starts[bot] = self.failed_starts.get(bot, 0) + 1
            death = session.death
            why = "" if death is None else f": {_one_line(death.detail)}"
            self.pool.warn(f"{spec.name} could not start{why}")
        return session

    async def play(self, job: TableJob) -> MatchResult:
        sessions: list[BotSession | None] = [None] * len(job.key.bots)

        async def get(seat: int, bot: int) -> None:
            sessions[seat] = await self.session(bot)

        missing = [(s, b) for s, b in enumerate(job.key.bots) if b not in self.sessions]
        async with trio.open_nursery() as starting:  # start-ups are paid in parallel
            for seat, bot in missing:
                starting.start_soon(get, seat, bot)
        for seat, bot in enumerate(job.key.bots):
            if sessions[seat] is None:
                sessions[seat] = await self.session(bot)
        ready = [session for session in sessions if session is not None]
        log_path = None
        if self.pool.logs is not None:
            log_path = self.pool.logs / f"{job.key.match_id}.jsonl"
        return await play_match(
            ready,
            job.rules,
            job.key.seed,
            time_control=self.pool.control,
            match_id=job.key.match_id,
            log_path=log_path,
        )


class TablePool:
    """``jobs`` table workers; ``play`` runs a list of tables on them and records each result."""

    def __init__(
        self,
        nursery: trio.Nursery,
        bots: Sequence[BotSpec],
        control: TimeControl,
        jobs: int,
        on_result: Callable[[TableJob, MatchResult], None],
        logs: Path | None,
        warn: Callable[[str], None],
    ) -> None:
        self.nursery = nursery
        self.bots = bots
        self.control = control
        self.workers = [_Worker(self, number) for number in range(max(1, jobs))]
        self.on_result = on_result
        self.logs = logs
        self.warn = warn

    async def play(self, jobs: Sequence[TableJob]) -> None:
        if not jobs:
            return
        if self.logs is not None:
            self.logs.mkdir(parents=True, exist_ok=True)
        send, receive = trio.open_memory_channel[TableJob](math.inf)
        for job in jobs:
            send.send_nowait(job)
        send.close()
        async with trio.open_nursery() as nursery:
            for worker in self.workers[: len(jobs)]:
                nursery.start_soon(self._work, worker, receive.clone())
        receive.close()

    async def _work(self, worker: _Worker, receive: trio.MemoryReceiveChannel[TableJob]) -> None:
        async with receive:
            async for job in receive:
                result = await worker.play(job)
                self.on_result(job, result)


@asynccontextmanager
async def open_pool(
    bots: Sequence[BotSpec],
    control: TimeControl,
    jobs: int,
    on_result: Callable[[TableJob, MatchResult], None],
    logs: Path | None,
    warn: Callable[[str], None] | None = None,
) -> AsyncIterator[TablePool]:
    """A pool of table workers; leaving it ends every bot process it started."""
    async with trio.open_nursery() as nursery:
        pool = TablePool(nursery, bots, control, jobs, on_result, logs, warn or (lambda _: None))
        try:
            yield pool
        finally:
            nursery.cancel_scope.cancel()


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
