"""Playing a league: which tables to play, each result recorded, a clean stop.

Where the tables are played is ``referee.tables``' business (table workers on
this machine, a Dask cluster, or this process when some bots are remote);
this module is the league's side, the client of a pool:

* **Which tables.**  Round robin hands the pool the whole schedule at once
  (minus the stored match ids), in ``rotation_major`` order; bankroll one
  round at a time (a round's seating depends on the previous round's results).
* **Crash safety.**  Only this process writes the database: each result is
  recorded (one transaction) the moment the pool reports it.  Nothing else
  is state: what to play next is the schedule minus the stored match ids.
* **A clean stop.**  SIGINT and SIGTERM cancel the league: the pool closes
  every worker's stdin, which makes it drop its match in progress and end its
  bots' process trees, and ``run_league`` returns with ``stopped`` set.
  Workers ignore the terminal's Ctrl-C themselves and leave the decision to
  this process.  If this process is killed outright, the workers see their
  stdin end and do the same.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import signal
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import trio

from protocol.faults import FaultKind
from referee.bots import BotSpec
from referee.league import bankroll
from referee.league.league_db import LeagueStore
from referee.league.league_file import LeagueConfig
from referee.league.schedule import ScheduledMatch, build_schedule
from referee.match.dealkey import DealKey
from referee.match.key import MatchKey
from referee.match.result import FaultRecord, MatchResult, SeatResult
from referee.tables.job import MatchPool, TableError, TableJob
from referee.tables.local_pool import BOT_PROCESSES, open_pool
from referee.tables.worker import is_could_not_start, one_line


class LeagueError(TableError):
    """The referee side of a league failed (not a bot): a bankroll round left unplayed.

    A ``TableError`` (what every pool raises for its own failures), so a client catches both.
    """


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
    # One line per match given up after MATCH_ATTEMPTS table-worker deaths in this run.
    abandoned: list[str] = dataclasses.field(default_factory=list)


def round_robin_jobs(config: LeagueConfig, seed: int, deals: DealKey) -> list[TableJob]:
    """Every match of a round-robin league, in schedule order.

    ``seed`` is the league seed (the file's, or the one its database drew) and
    ``deals`` the key its cards come from (``LeagueStore.deal_key``).
    """
    settings = config.schedule
    schedule = build_schedule(
        len(config.bots),
        config.table_size,
        seed,
        kind=settings.kind,
        duplicate=settings.duplicate,
        cycles=settings.cycles,
        meetings=settings.meetings,
        round_robin_limit=settings.round_robin_limit,
        candidates=settings.candidates,
    )
    start = config.rules.starting_chips
    return [TableJob(_key(match, start, deals), config.rules) for match in schedule]


def rotation_major(job: TableJob) -> tuple[int, int, int]:
    """The order tables are handed out: every table's rotation 0 of a cycle, then rotation 1...

    The schedule is built in this order (``referee.league.schedule``, which
    also interleaves the tables of each pass so that every bot keeps to its
    share); sorting by it keeps a pending list in that order.  Results do not
    depend on it (ratings follow each match's ``ordinal``, its place in the
    schedule), but bot start-ups do: a process never plays a
    deal twice (``referee.tables.worker``), and in this order a bot's process
    of rotation 0 of one table goes on to rotation 0 of the next, so a
    duplicate league starts about one process per bot and rotation instead
    of one per match and seat (``benchmarks/league.py``).
    """
    return (job.key.round, job.key.rotation, job.key.ordinal)


def _key(match: ScheduledMatch, start: int, deals: DealKey) -> MatchKey:
    return MatchKey(
        match_id=match.match_id,
        ordinal=match.index,
        round=match.cycle,
        table=match.table,
        rotation=match.rotation,
        seed=match.seed,
        bots=match.bots,
        start_chips=(start,) * len(match.bots),
        deal_seed=deals.deal_seed(match.seed),
    )


def bankroll_params(config: LeagueConfig, seed: int, deals: DealKey) -> bankroll.BankrollParams:
    return bankroll.BankrollParams(
        bots=len(config.bots),
        table_size=config.table_size,
        seed=seed,
        rules=config.rules,
        max_rounds=config.bankroll.max_rounds,
        deals=deals,
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
    sandbox: str = "",
    bot_processes: int = BOT_PROCESSES,
) -> LeagueRun:
    """Play what is left of the league; returns when it is complete or stopped.

    Match logs go to ``logs`` (None: no logs); see ``LeagueConfig.log_dir``.
    ``cluster`` (a Dask scheduler's address or ``local:N``) plays the tables
    on a Dask cluster instead of ``jobs`` local table workers.  ``sandbox`` is
    the sandbox setting (``referee.sandbox.setting_to_env``'s text) every table
    resolves where its bots run; empty, the default level and limits.
    ``bot_processes`` bounds the bot processes each table runs at once, here or on a cluster
    (``referee.tables.local_pool.BOT_PROCESSES``).
    """
    started = time.monotonic()
    total: int | None = None
    recorder = _Recorder(config, store, reporter, logs)
    stop_requested = trio.Event()
    async with trio.open_nursery() as outer:
        with trio.CancelScope() as league_scope:
            if handle_signals:
                # In the outer nursery: signals that come during the clean-up are still caught.
                outer.start_soon(_watch_signals, league_scope, stop_requested)
            async with _league_pool(
                config, jobs, recorder, logs, reporter.note, cluster, sandbox, bot_processes
            ) as pool:
                if config.format == "bankroll":
                    await _play_bankroll(config, store, pool, reporter, recorder.abandoned)
                else:
                    pending, total = _round_robin_pending(config, store)
                    reporter.begin(total, total - len(pending), f"{config.name}: round robin")
                    await pool.play(pending)
        outer.cancel_scope.cancel()
    for line in recorder.startup.closing_lines():
        reporter.warn(line)
    reporter.end()
    return LeagueRun(
        recorder.played,
        store.count(),
        total,
        stop_requested.is_set(),
        time.monotonic() - started,
        recorder.abandoned,
    )


class _Recorder:
    """What a pool reports: each result stored and told, each match given up told once."""

    def __init__(
        self, config: LeagueConfig, store: LeagueStore, reporter: Reporter, logs: Path | None
    ) -> None:
        self.config = config
        self.store = store
        self.reporter = reporter
        self.logs = logs
        self.startup = StartupFaults(config.bots, logs, reporter.warn)
        self.played = 0  # matches finished by this run
        self.abandoned: list[str] = []  # one line per match given up (``LeagueRun.abandoned``)

    def record(self, job: TableJob, result: MatchResult) -> None:
        self.store.record(job.key, result)
        self.played += 1
        self.reporter.finished(job, result)
        for warning in self.startup.warnings(job, result) + result_warnings(
            self.config.bots, job, result, self.logs
        ):
            self.reporter.warn(warning)

    def give_up(self, job: TableJob, why: str) -> None:
        then = (
            "a bankroll round needs every result, so the league stops after this round"
            if self.config.format == "bankroll"
            else "the league goes on without it"
        )
        line = (
            f"league error: match {job.key.match_id} left unplayed: {why}; {then} "
            "(run the same command to try it again)"
        )
        self.abandoned.append(line)
        self.reporter.warn(line)


def _round_robin_pending(config: LeagueConfig, store: LeagueStore) -> tuple[list[TableJob], int]:
    """The round robin's matches not yet stored, in ``rotation_major`` order, and its total."""
    all_jobs = round_robin_jobs(config, store.schedule_seed(), store.deal_key())
    finished = store.finished_ids()
    pending = [job for job in all_jobs if job.key.match_id not in finished]
    pending.sort(key=rotation_major)
    return pending, len(all_jobs)


async def _play_bankroll(
    config: LeagueConfig,
    store: LeagueStore,
    pool: MatchPool,
    reporter: Reporter,
    abandoned: list[str],
) -> None:
    params = bankroll_params(config, store.schedule_seed(), store.deal_key())
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
        if abandoned:
            # The next round's seating needs every result of this one: stop here, once.
            raise LeagueError(abandoned[0].removeprefix("league error: "))


def result_warnings(
    bots: Sequence[BotSpec], job: TableJob, result: MatchResult, logs: Path | None = None
) -> list[str]:
    """One line per seat disqualified during the match, naming the fault that settled it.

    If the line leaves part of the detail out (a bot's long stderr line), it names the
    match's log in ``logs``, whose ``stderr`` record has what the bot wrote during the
    match.  A seat whose bot never started is ``StartupFaults``' to tell, once per bot.
    """
    log_path = None if logs is None else result.log_path  # the file it is kept in
    out = []
    for seat in result.seats:
        if seat.status != "disqualified" or _startup_fault(seat) is not None:
            continue
        fault = seat.faults[-1] if seat.faults else None
        why = f"{fault.kind} in hand {fault.hand}: {fault.detail}" if fault else "no fault recorded"
        name = bots[job.key.bots[seat.seat]].name
        out.append(f"{result.match_id}: {name} disqualified ({one_line(why, whole_in=log_path)})")
    return out


def _startup_fault(seat: SeatResult) -> FaultRecord | None:
    """The fault that disqualified ``seat`` before its bot ever said ready, if that is how."""
    fault = seat.faults[-1] if seat.faults else None
    if seat.status == "disqualified" and fault is not None and fault.kind == FaultKind.STARTUP:
        return fault
    return None


class StartupFaults:
    """Bots that could not start: said once per bot, and the matches they missed counted.

    A bot that cannot start (a module it lacks, a wrong path) is disqualified at
    every table it sits at: each table worker tries it twice, then the default
    policy plays its seat on the dead process.  A league of 30 bots used to say
    "X could not start" for every attempt and "mNN: X disqualified (startup ...)"
    for every match, dozens of times the same line.  Now the first result with
    the bot's startup fault says it once, naming that match's log (its
    ``stderr`` record has all the bot wrote), the workers' own "could not
    start" lines are dropped (``warn``), and ``closing_lines`` counts the
    matches each bot missed.  A remote bot that did not connect is told the same way.
    """

    def __init__(
        self, bots: Sequence[BotSpec], logs: Path | None, warn: Callable[[str], None]
    ) -> None:
        self.bots = bots
        self.logs = logs
        self._warn = warn
        self.first: dict[int, str] = {}  # bot -> the match id of its first startup fault
        self.missed: collections.Counter[int] = collections.Counter()  # bot -> matches

    def warn(self, text: str) -> None:
        """A pool's warning, passed on unless it is a worker's "could not start"."""
        if not any(is_could_not_start(text, bot.name) for bot in self.bots):
            self._warn(text)

    def warnings(self, job: TableJob, result: MatchResult) -> list[str]:
        """The lines ``result`` calls for: a bot's first startup fault, said in full."""
        out = []
        for seat in result.seats:
            fault = _startup_fault(seat)
            if fault is None:
                continue
            bot = job.key.bots[seat.seat]
            self.missed[bot] += 1
            if bot in self.first:
                continue
            self.first[bot] = result.match_id
            spec = self.bots[bot]
            if spec.remote:
                what, misses = f"{spec.name} {one_line(fault.detail)}", "misses"
            else:
                what = f"{spec.name} could not start: {one_line(fault.detail)}"
                if self.logs is not None and result.log_path is not None:
                    what += f" (whole stderr in {result.log_path})"
                misses = "cannot start"
            out.append(
                f"{result.match_id}: {what}; disqualified here and in each match it "
                f"{misses} (one line at the end counts them)"
            )
        return out

    def closing_lines(self) -> list[str]:
        """One line per bot that missed matches: how many, and where the first is."""
        out = []
        for bot, first in self.first.items():
            spec = self.bots[bot]
            how = "was absent from" if spec.remote else "could not start in"
            out.append(
                f"{spec.name} {how} {_matches(self.missed[bot])} of this run, each a "
                f"disqualification with its seat played by the default policy (the first: {first})"
            )
        return out


def _matches(count: int) -> str:
    return f"{count} match" if count == 1 else f"{count} matches"


async def _watch_signals(scope: trio.CancelScope, stop_requested: trio.Event) -> None:
    """The first SIGINT or SIGTERM stops the league; later ones are ignored while it cleans up."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _signal in signals:
            if not stop_requested.is_set():
                stop_requested.set()
                scope.cancel()


def _league_pool(
    config: LeagueConfig,
    jobs: int,
    recorder: _Recorder,
    logs: Path | None,
    note: Callable[[str], None],
    cluster: str | None,
    sandbox: str,
    bot_processes: int = BOT_PROCESSES,
) -> contextlib.AbstractAsyncContextManager[MatchPool]:
    """Table workers, a cluster, or (with remote bots) tables played in this process."""
    warn = recorder.startup.warn
    if any(bot.remote for bot in config.bots):
        if cluster is not None:
            raise LeagueError("--cluster: a league with remote bots plays in the league process")
        from referee.tables.remote_pool import open_remote_pool

        remote = config.remote
        return open_remote_pool(
            config.bots,
            config.time_control,
            recorder.record,
            logs,
            warn,
            note,
            host=remote.host,
            port=remote.port,
            wait=remote.wait,
            tokens_path=config.tokens_path,
            sandbox=sandbox,
            log_form=config.match_logs,
        )
    if cluster is not None:  # Dask, imported only then: slow to import
        from referee.tables.dask_pool import ClusterPool

        return ClusterPool(
            cluster,
            config.bots,
            config.time_control,
            recorder.record,
            logs,
            warn,
            recorder.give_up,
            sandbox,
            config.cluster,  # the file's [cluster] certificates: TLS
            config.match_logs,
            bot_processes,
        )
    return open_pool(
        config.bots,
        config.time_control,
        jobs,
        recorder.record,
        logs,
        warn,
        recorder.give_up,
        sandbox,
        bot_processes,
        config.match_logs,
    )
