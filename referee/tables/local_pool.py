"""Tables on this machine: ``jobs`` table worker processes, matches handed out as they finish.

Workers are processes, not tasks, because refereeing costs about as much CPU
as the bots themselves: in one process it would be the bottleneck of every
league on a multi-core machine.  Each worker keeps a session of every bot it
has met for its next match (start-up is paid once); this pool hands out
matches to the workers as they finish, each worker taking its own seat
rotations first (``_Waiting``), and replaces a worker that dies under its
match (``MATCH_ATTEMPTS``).  Results go to the client's ``on_result`` the
moment they arrive: the client (a league) is the one writer of its database.
"""

from __future__ import annotations

import collections
import contextlib
import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from referee.bots import BotSpec
from referee.match.archive import DEFAULT_LOG_FORM, LogForm
from referee.match.result import MatchResult
from referee.storage.private_files import private_dir
from referee.tables.job import MATCH_ATTEMPTS, MatchPool, TableJob, WorkerDied, stop_on_give_up
from referee.tables.messages import Play, Setup
from referee.tables.process import WorkerProcess
from referee.transport.timecontrol import TimeControl

PLAYS_AHEAD = 2
"""Matches a table worker is sent before the result of the first is back.

The worker plays them in order; the second waits in its pipe, so the worker
starts it the moment the first ends instead of after a round trip through
this process (reading the result, the database's commit, a new message),
a few milliseconds a match that a worker would otherwise sit idle, and more
with two workers whose results this one process records in turn.
"""


BOT_PROCESSES = 64
"""The most bot processes a table worker runs at once, by default (``--bot-processes``).

With one per bot a worker never starts a process again for want of room
(``referee.tables.bot_processes``), so leagues up to 64 bots start about one
process per bot and seat rotation.  Each costs its bot's memory (a bundled
Python bot under the ``auto`` sandbox: about 16 MB resident, 11 MB of it its
own; docs/leagues.md), so a table's bots hold at most about 1 GB.
"""


def table_core(tables: int, slot: int) -> int | None:
    """With one table per core, the core table ``slot`` keeps to (its worker and its bots,
    which inherit the affinity); None with fewer tables than cores, where a table may use
    the spare ones, or where affinity cannot be set.

    A table is a chain of round trips, referee and bots taking turns.  Two
    chains left to the kernel's scheduler wake each other's processes on the
    same core while the other idles until the load balancer moves one:
    ``benchmarks/league.py --measure 2 --bots 8`` at load 4 gave a median of
    17.4 matches/s unpinned and 21.3 pinned (five runs each, alternating;
    docs/speed.md).  ``--jobs N`` and ``--cluster local:N`` both pin so.
    """
    if not hasattr(os, "sched_setaffinity"):
        return None
    cores = sorted(os.sched_getaffinity(0))
    if tables < 2 or tables != len(cores):
        return None
    return cores[slot % len(cores)]


def processes_per_bot(jobs: Sequence[TableJob]) -> int:
    """The processes per bot a worker playing one seat rotation at a time can use, at most.

    One, unless one rotation deals the same cards to a bot at several tables (a
    gauntlet's field bot meets every candidate with the same deal): then as many
    as the most such tables, since no process may play a deal twice.
    """
    seen: collections.Counter[tuple[int, int, int]] = collections.Counter()
    for job in jobs:
        key = job.key
        for bot in key.bots:
            seen[(bot, key.rotation, key.deal_seed)] += 1
    return max(seen.values(), default=1)


class _Waiting:
    """The matches not yet handed out, each worker taking its own seat rotations first.

    Worker ``slot`` of ``workers`` takes, in schedule order, the matches of
    rotations ``slot``, ``slot + workers``, ...; when it has none left, the
    next match of the worker with the most left.  Why: in a duplicate league a
    table's rotations share one deal, and a bot process never plays a deal
    twice (``referee.tables.worker``), so a worker needs a process per bot for
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
        on_give_up: Callable[[TableJob, str], None] = stop_on_give_up,
        sandbox: str = "",
        bot_processes: int = BOT_PROCESSES,
        log_form: LogForm = DEFAULT_LOG_FORM,
    ) -> None:
        self.log_form = log_form  # how each match's log is kept (``Setup.log_form``)
        self.bots = list(bots)
        self.bot_processes = bot_processes  # per table worker
        self.per_bot = 1  # sized by the schedule when it comes (``play``)
        self.sandbox = sandbox  # the setting each worker resolves (``Setup.sandbox``)
        self.control = control
        self.jobs = max(1, jobs)
        self.on_result = on_result
        self.on_give_up = on_give_up
        self.logs = logs
        self.warn = warn
        self.workers: list[WorkerProcess] = []
        self.started = 0  # workers ever started: each one's number, for its bots' stderr files
        self.ended_bot_starts = 0  # bot processes started by workers since replaced

    async def _start_worker(self, slot: int) -> WorkerProcess:
        self.started += 1
        setup = Setup(
            self.control,
            None if self.logs is None else str(self.logs),
            self.started,
            self.bots,
            self.sandbox,
            bot_processes=self.bot_processes,
            per_bot=self.per_bot,
            log_form=self.log_form,
        )
        return await WorkerProcess.launch(
            setup, self.warn, lambda process: self._pin(process, slot)
        )

    def _pin(self, process: trio.Process, slot: int) -> None:
        """Keep table ``slot`` (its worker, and the bots it starts) on its core, if it has one
        (``table_core``)."""
        core = table_core(self.jobs, slot)
        if core is not None:
            with contextlib.suppress(OSError):  # it may have ended: its first match says so
                os.sched_setaffinity(process.pid, {core})

    @property
    def bot_starts(self) -> int:
        """Bot processes its table workers have started, as of their last results."""
        return self.ended_bot_starts + sum(worker.bot_starts for worker in self.workers)

    @property
    def most_bots(self) -> int:
        """The most bot processes one of its table workers has run at once."""
        return max((worker.most_bots for worker in self.workers), default=0)

    async def _start_workers(self, count: int) -> None:
        while len(self.workers) < min(count, self.jobs):
            self.workers.append(await self._start_worker(len(self.workers)))

    async def play(self, jobs: Sequence[TableJob]) -> None:
        if not jobs:
            return
        if self.logs is not None:
            private_dir(self.logs)
        self.per_bot = max(self.per_bot, processes_per_bot(jobs))
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
            await self.workers[slot].send_play(Play(job.key, job.rules.to_dict()))
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
            self.ended_bot_starts += self.workers[slot].bot_starts
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
                    await self.workers[slot].send_play(Play(job.key, job.rules.to_dict()))
            except WorkerDied as again:
                death = again
                continue
            return

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                for worker in self.workers:
                    nursery.start_soon(worker.close)


@asynccontextmanager
async def open_pool(
    bots: Sequence[BotSpec],
    control: TimeControl,
    jobs: int,
    on_result: Callable[[TableJob, MatchResult], None],
    logs: Path | None,
    warn: Callable[[str], None] | None = None,
    on_give_up: Callable[[TableJob, str], None] = stop_on_give_up,
    sandbox: str = "",
    bot_processes: int = BOT_PROCESSES,
    log_form: LogForm = DEFAULT_LOG_FORM,
) -> AsyncIterator[MatchPool]:
    """A pool of table workers; leaving it ends every worker and bot process it started.

    ``sandbox`` is the sandbox setting (``referee.sandbox.setting_to_env``'s text) each
    table worker resolves where its bots run; empty, the default level and limits.
    ``bot_processes`` bounds the bot processes each table runs at once (``BOT_PROCESSES``).
    ``log_form``: how each match's log is kept (``referee.match.archive``).

    A cluster's tables are ``referee.tables.dask_pool.ClusterPool``.
    """
    pool = TablePool(
        bots,
        control,
        jobs,
        on_result,
        logs,
        warn or (lambda _: None),
        on_give_up,
        sandbox,
        bot_processes,
        log_form,
    )
    try:
        yield pool
    finally:
        await pool.aclose()
