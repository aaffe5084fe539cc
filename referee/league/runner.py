"""Playing a league: parallel tables, bot processes reused across matches, a clean stop.

The shape follows from three promises of the issue:

* **Parallel tables, one bot process per bot per table.**  ``--jobs N`` starts
  N *table workers* (``referee.league.worker``), each a process that referees
  one table at a time and keeps a session of every bot it has met for the
  next match (start-up is paid once).  Workers are processes, not tasks,
  because refereeing costs about as much CPU as the bots themselves: in one
  process it would be the bottleneck of every league on a multi-core machine.
  This module hands out matches to the workers as they finish, each worker
  taking its own seat rotations first (``_Waiting``).
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

import collections
import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import trio

from engine.rules import Rules
from protocol.faults import FaultKind
from referee.bots import BotSpec
from referee.league import bankroll
from referee.league.league_db import LeagueStore, MatchKey
from referee.league.league_file import LeagueConfig
from referee.league.schedule import ScheduledMatch, build_schedule
from referee.league.worker import (
    WORKER_COMMAND,
    JsonLines,
    PipeError,
    is_could_not_start,
    one_line,
    play_message,
    setup_message,
)
from referee.match.dealkey import DealKey
from referee.match.result import FaultRecord, MatchResult, SeatResult, result_from_json
from referee.storage.private_files import private_dir
from referee.transport.process import describe_exit
from referee.transport.timecontrol import TimeControl

if TYPE_CHECKING:
    from referee.league.cluster import ClusterPool


class LeagueError(Exception):
    """The referee side of a league failed (not a bot): a worker could not write its log."""


class WorkerDied(LeagueError):
    """A table worker ended, or wrote something that is not a message, during a match.

    Not a verdict on any bot: which seat (if any) was to blame cannot be told
    from outside the worker, so the match is played again on a fresh worker
    (``MATCH_ATTEMPTS``) and, if it keeps dying, left unplayed and reported.
    """


PLAYS_AHEAD = 2
"""Matches a table worker is sent before the result of the first is back.

The worker plays them in order; the second waits in its pipe, so the worker
starts it the moment the first ends instead of after a round trip through
this process (reading the result, the database's commit, a new message),
a few milliseconds a match that a worker would otherwise sit idle, and more
with two workers whose results this one process records in turn.
"""

MATCH_ATTEMPTS = 3
"""How often one run plays a match whose table worker dies under it, before giving it up.

Without a bound, a bot that kills its table worker (possible without the
sandbox's PID namespace), or a match that trips a referee bug, would stop the
league and stop it again on every resume.  With it, the league goes on and
names the match once (``LeagueRun.abandoned``); running the command again
tries it again, MATCH_ATTEMPTS more times at most.
"""


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
    deal twice (``referee.league.worker``), and in this order a bot's process
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
) -> LeagueRun:
    """Play what is left of the league; returns when it is complete or stopped.

    Match logs go to ``logs`` (None: no logs); see ``LeagueConfig.log_dir``.
    ``cluster`` (a Dask scheduler's address or ``local:N``) plays the tables
    on a Dask cluster instead of ``jobs`` local table workers.
    """
    started = time.monotonic()
    played = 0
    total: int | None = None
    abandoned: list[str] = []
    startup = StartupFaults(config.bots, logs, reporter.warn)

    def record(job: TableJob, result: MatchResult) -> None:
        nonlocal played
        store.record(job.key, result)
        played += 1
        reporter.finished(job, result)
        for warning in startup.warnings(job, result) + result_warnings(
            config.bots, job, result, logs
        ):
            reporter.warn(warning)

    def give_up(job: TableJob, why: str) -> None:
        then = (
            "a bankroll round needs every result, so the league stops after this round"
            if config.format == "bankroll"
            else "the league goes on without it"
        )
        line = (
            f"league error: match {job.key.match_id} left unplayed: {why}; {then} "
            "(run the same command to try it again)"
        )
        abandoned.append(line)
        reporter.warn(line)

    stop_requested = trio.Event()
    async with trio.open_nursery() as outer:
        with trio.CancelScope() as league_scope:
            if handle_signals:
                # In the outer nursery: signals that come during the clean-up are still caught.
                outer.start_soon(_watch_signals, league_scope, stop_requested)
            async with _league_pool(
                config, jobs, record, logs, startup.warn, reporter.note, cluster, give_up
            ) as pool:
                if config.format == "bankroll":
                    await _play_bankroll(config, store, pool, reporter, abandoned)
                else:
                    all_jobs = round_robin_jobs(config, store.schedule_seed(), store.deal_key())
                    total = len(all_jobs)
                    finished = store.finished_ids()
                    pending = [job for job in all_jobs if job.key.match_id not in finished]
                    pending.sort(key=rotation_major)
                    reporter.begin(total, total - len(pending), f"{config.name}: round robin")
                    await pool.play(pending)
        outer.cancel_scope.cancel()
    for line in startup.closing_lines():
        reporter.warn(line)
    reporter.end()
    return LeagueRun(
        played,
        store.count(),
        total,
        stop_requested.is_set(),
        time.monotonic() - started,
        abandoned,
    )


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
    log_path = None if logs is None else logs / f"{result.match_id}.jsonl"
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
                if self.logs is not None:
                    what += f" (whole stderr in {self.logs / f'{result.match_id}.jsonl'})"
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


# ---------------------------------------------------------------------- the pool

WORKER_EXIT_GRACE = 15.0  # seconds a worker gets to end its bots after its stdin closes


class WorkerProcess:
    """The referee's side of one table worker process: the league's, and the server's.

    ``play``/``result_of`` turn everything the worker can do wrong (end, write a
    line that is not a message, send a result that does not parse) into
    ``WorkerDied``, and its own reported failure into ``LeagueError``.
    """

    def __init__(self, process: trio.Process, warn: Callable[[str], None]) -> None:
        self.process = process
        self.warn = warn
        assert process.stdin is not None and process.stdout is not None
        self.stdin = process.stdin
        self.lines = JsonLines(process.stdout)

    async def send(self, message: dict[str, object]) -> None:
        await self.stdin.send_all(json.dumps(message).encode() + b"\n")

    async def result_of(self, play: dict[str, object]) -> MatchResult:
        """Send one ``play`` message and wait for its result (warnings go to ``warn``)."""
        await self.send_play(play)
        return await self.next_result()

    async def send_play(self, play: dict[str, object]) -> None:
        """Send a ``play`` message; the worker plays its plays in order (``next_result``)."""
        try:
            await self.send(play)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise WorkerDied(f"its table worker ended ({await self._exit()})") from None

    async def next_result(self) -> MatchResult:
        """The result of the oldest play sent and not yet answered."""
        while True:
            try:
                message = await self.lines.next()
            except PipeError as error:
                raise WorkerDied(f"its table worker wrote a bad line ({error})") from None
            if message is None:
                raise WorkerDied(f"its table worker ended ({await self._exit()})")
            if message["type"] == "error":
                raise LeagueError(str(message["text"]))
            if message["type"] == "warn":
                self.warn(str(message["text"]))
            elif message["type"] == "result":
                try:
                    return result_from_json(message["result"])
                except (KeyError, TypeError, ValueError) as error:
                    raise WorkerDied(f"its table worker sent a bad result ({error!r})") from None

    async def _exit(self) -> str:
        with trio.move_on_after(WORKER_EXIT_GRACE):
            await self.process.wait()
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
            return "killed after it stopped answering"
        return describe_exit(self.process.returncode)

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
    """What a league needs of a pool: play these tables, recording each result as it ends.

    A match the pool cannot play (its table worker died ``MATCH_ATTEMPTS``
    times) goes to the pool's ``on_give_up`` instead, and the others go on.
    """

    async def play(self, jobs: Sequence[TableJob]) -> None: ...


def _stop_on_give_up(job: TableJob, why: str) -> None:
    raise LeagueError(f"match {job.key.match_id}: {why}")


class _Waiting:
    """The matches not yet handed out, each worker taking its own seat rotations first.

    Worker ``slot`` of ``workers`` takes, in schedule order, the matches of
    rotations ``slot``, ``slot + workers``, ...; when it has none left, the
    next match of the worker with the most left.  Why: in a duplicate league a
    table's rotations share one deal, and a bot process never plays a deal
    twice (``referee.league.worker``), so a worker needs a process per bot for
    every rotation of a table it plays.  Handed out in turn, each of two
    workers met nearly every rotation and started almost as many bot processes
    as one worker alone (36 each against 35, ``benchmarks/league.py --bots
    8``; docs/speed.md): CPU spent twice.  Split by rotation, each starts about
    half.  Plain deals (a seed per match) lose nothing by it either way.
    """

    def __init__(self, jobs: Sequence[TableJob], workers: int) -> None:
        self.workers = max(1, workers)
        self.queues: list[collections.deque[TableJob]] = [
            collections.deque() for _ in range(self.workers)
        ]
        for job in jobs:
            self.queues[job.key.rotation % self.workers].append(job)

    def take(self, slot: int) -> TableJob | None:
        """The next match for worker ``slot``, or None when every match is handed out."""
        own = self.queues[slot % self.workers]
        if own:
            return own.popleft()
        longest = max(self.queues, key=len)
        return longest.popleft() if longest else None


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
        on_give_up: Callable[[TableJob, str], None] = _stop_on_give_up,
    ) -> None:
        self.bots = list(bots)
        self.control = control
        self.jobs = max(1, jobs)
        self.on_result = on_result
        self.on_give_up = on_give_up
        self.logs = logs
        self.warn = warn
        self.workers: list[WorkerProcess] = []
        self.started = 0  # workers ever started: each one's number, for its bots' stderr files

    async def _start_worker(self, slot: int) -> WorkerProcess:
        process = await trio.lowlevel.open_process(
            WORKER_COMMAND,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self._pin(process, slot)
        worker = WorkerProcess(process, self.warn)
        self.started += 1
        # A worker that dies at once shows at its first match, as any other death.
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await worker.send(setup_message(self.bots, self.control, self.logs, self.started))
        return worker

    def _pin(self, process: trio.Process, slot: int) -> None:
        """With one table per core, keep table ``slot`` (its worker and its bots) on core ``slot``.

        A table is a chain of round trips, referee and bots taking turns.  Two
        chains left to the kernel's scheduler wake each other's processes on
        the same core while the other idles until the load balancer moves one:
        ``benchmarks/league.py --measure 2 --bots 8`` at load 4 gave a median
        of 17.4 matches/s unpinned and 21.3 pinned (five runs each, alternating;
        docs/speed.md).  Bots inherit the affinity from the worker that starts
        them.  Only when ``--jobs`` equals the usable cores: with fewer tables
        than cores, a table may use the spare ones.
        """
        if not hasattr(os, "sched_setaffinity"):
            return
        cores = sorted(os.sched_getaffinity(0))
        if self.jobs < 2 or self.jobs != len(cores):
            return
        with contextlib.suppress(OSError):  # it may have ended already: its first match says so
            os.sched_setaffinity(process.pid, {cores[slot % len(cores)]})

    async def _start_workers(self, count: int) -> None:
        while len(self.workers) < min(count, self.jobs):
            self.workers.append(await self._start_worker(len(self.workers)))

    async def play(self, jobs: Sequence[TableJob]) -> None:
        if not jobs:
            return
        if self.logs is not None:
            private_dir(self.logs)
        await self._start_workers(len(jobs))
        waiting = _Waiting(jobs, min(len(jobs), len(self.workers)))
        async with trio.open_nursery() as nursery:
            for slot in range(waiting.workers):
                nursery.start_soon(self._work, slot, waiting)

    async def _work(self, slot: int, waiting: _Waiting) -> None:
        """Keep ``PLAYS_AHEAD`` matches at worker ``slot``; record each result as it comes.

        If the worker dies, it is replaced and every match it had is sent again:
        the one it was playing counts an attempt (``MATCH_ATTEMPTS``), the ones
        waiting behind it do not.
        """
        sent: list[TableJob] = []  # at the worker, oldest (the one it plays) first
        attempts: dict[str, int] = {}  # attempts of the match at the head, by match id
        while True:
            while len(sent) < PLAYS_AHEAD:
                job = waiting.take(slot)
                if job is None:
                    if sent:
                        break
                    return
                sent.append(job)
                if not await self._send(slot, sent, attempts, job):
                    break
            if not sent:
                continue  # the worker's matches were given up: take the next ones
            try:
                result = await self.workers[slot].next_result()
            except WorkerDied as death:
                await self._replace(slot, sent, attempts, death)
                continue
            job = sent.pop(0)
            attempts.pop(job.key.match_id, None)
            self.on_result(job, result)

    async def _send(
        self, slot: int, sent: list[TableJob], attempts: dict[str, int], job: TableJob
    ) -> bool:
        """Send ``job`` to the worker; False (and the worker replaced) if it died meanwhile."""
        try:
            await self.workers[slot].send_play(play_message(job.key, job.rules))
        except WorkerDied as death:
            await self._replace(slot, sent, attempts, death)
            return False
        return True

    async def _replace(
        self, slot: int, sent: list[TableJob], attempts: dict[str, int], death: WorkerDied
    ) -> None:
        """A fresh worker for ``slot`` with ``sent`` sent again; the head's attempt counted."""
        while True:
            await self.workers[slot].close()
            self.workers[slot] = await self._start_worker(slot)
            if sent:
                head = sent[0]
                attempt = attempts.get(head.key.match_id, 1)
                if attempt == MATCH_ATTEMPTS:
                    sent.pop(0)
                    attempts.pop(head.key.match_id, None)
                    self.on_give_up(head, f"{death} in each of {MATCH_ATTEMPTS} attempts")
                else:
                    attempts[head.key.match_id] = attempt + 1
                    self.warn(
                        f"{head.key.match_id}: {death}; playing the match again on a fresh "
                        f"worker (attempt {attempt + 1} of {MATCH_ATTEMPTS})"
                    )
            try:
                for job in sent:
                    await self.workers[slot].send_play(play_message(job.key, job.rules))
            except WorkerDied as again:
                death = again
                continue
            return

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
    warn: Callable[[str], None],
    note: Callable[[str], None],
    cluster: str | None,
    give_up: Callable[[TableJob, str], None] = _stop_on_give_up,
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
            warn,
            note,
            host=remote.host,
            port=remote.port,
            wait=remote.wait,
            tokens_path=config.tokens_path,
        )
    return open_pool(config.bots, config.time_control, jobs, record, logs, warn, cluster, give_up)


@asynccontextmanager
async def open_pool(
    bots: Sequence[BotSpec],
    control: TimeControl,
    jobs: int,
    on_result: Callable[[TableJob, MatchResult], None],
    logs: Path | None,
    warn: Callable[[str], None] | None = None,
    cluster: str | None = None,
    on_give_up: Callable[[TableJob, str], None] = _stop_on_give_up,
) -> AsyncIterator[MatchPool]:
    """A pool of table workers; leaving it ends every worker and bot process it started.

    With ``cluster`` the tables are Dask tasks (``referee.league.cluster``),
    imported only then: Dask is slow to import and a local league needs none of it.
    """
    pool: TablePool | ClusterPool
    if cluster is not None:
        from referee.league.cluster import ClusterPool

        pool = ClusterPool(
            cluster, bots, control, on_result, logs, warn or (lambda _: None), on_give_up
        )
        try:
            await pool.start()
        except BaseException:
            await pool.aclose()
            raise
    else:
        pool = TablePool(bots, control, jobs, on_result, logs, warn or (lambda _: None), on_give_up)
    try:
        yield pool
    finally:
        await pool.aclose()
