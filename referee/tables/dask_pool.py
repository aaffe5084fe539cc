"""Tables on a Dask distributed cluster (``newmarket league --cluster``, ``serve --cluster``).

The same three promises as the local pool (``referee.tables.local_pool``), over
many machines:

* **One writer.**  The league process (the *coordinator*) submits the matches
  as Dask tasks, a few matches each (``batches``), and records each result
  the moment its task completes, by match id and at most once; workers only
  play and return ``MatchResult`` JSON.  SQLite never leaves this process.
* **Bot processes reused.**  Each Dask worker holds a ``TableHost`` (a worker
  plugin) that keeps one table worker process (``referee.tables.worker``,
  the very program ``--jobs`` uses, spoken to in ``referee.tables.messages``)
  per worker thread.  A table worker keeps a session of every bot it has met,
  so a bot starts once per worker thread, not once per match.
* **Nothing lost, nothing twice.**  A worker that dies takes its table worker
  and bots with it (their stdin ends); the scheduler gives the match to
  another worker (Dask's ``allowed-failures``, 3 by default, before it gives
  up on that match), and the coordinator records whichever copy finishes
  first and ignores any other.  Matches are independent and seeded, so the
  standings are those of a local run of the same league.  A table worker
  that dies while its Dask worker lives (killed by a bot, or by the OOM
  killer) is replaced and the match replayed, ``MATCH_ATTEMPTS`` times at
  most, as with ``--jobs``; then the match is left unplayed and named.

Bots must exist at the same paths on every worker.  Before any match is
submitted, every worker checks every bot (the program resolves, the script
and the directory exist: what the league file's own check asks on this
machine), and the league stops with one line per worker and bot that fails.
A worker that joins later checks when it joins and refuses to play if a bot
cannot start there, which ends the league with the same line.

``--cluster local:N`` starts a ``LocalCluster`` of N worker processes with
one thread each, for this machine's cores and for tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import os
import signal
import subprocess
import threading
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import trio
from distributed import Client, Future, LocalCluster, WorkerPlugin, get_worker
from distributed.client import FutureCancelledError
from distributed.scheduler import KilledWorker
from distributed.worker import Worker

from referee.bots import BotSpec
from referee.match.archive import DEFAULT_LOG_FORM, LogForm
from referee.match.result import MatchResult, result_from_json
from referee.settings.cluster import TLS_SCHEME, ClusterTLS
from referee.storage.private_files import private_dir
from referee.tables.cluster_tls import address_problem, security_for
from referee.tables.job import MATCH_ATTEMPTS, WORKER_EXIT_GRACE, TableError, TableJob, WorkerDied
from referee.tables.local_pool import BOT_PROCESSES, PLAYS_AHEAD, table_core
from referee.tables.messages import (
    PipeError,
    Play,
    Setup,
    decode_from_worker,
    encode,
)
from referee.tables.process import WORKER_COMMAND, result_or_warning
from referee.transport.process import describe_exit, why_cannot_start
from referee.transport.timecontrol import TimeControl

LOCAL_PREFIX = "local:"
CONNECT_TIMEOUT = 30.0  # seconds to reach the scheduler
WORKER_WAIT = 60.0  # seconds to wait for the first worker to join a scheduler that has none
CLOSE_TIMEOUT = 60.0  # seconds for the workers to end their bots when the league is done
BATCH_MOST = 16
"""The most matches one Dask task plays (``batches``).

A task's round trip through the scheduler costs about 10 ms of wall time
(``benchmarks/league.py --cluster``), against 25 to 50 ms for a match of the
bundled bots: one match a task left each worker idle for a third of the
time.  Sixteen make it under a millisecond a match; more would only make the
last tasks longer, and a dead worker's batch bigger to play again.
"""


class ClusterError(TableError):
    """The cluster cannot play this league; one problem per line (e.g. per worker and bot)."""

    @property
    def lines(self) -> list[str]:
        return str(self).splitlines()


def local_workers(address: str) -> int | None:
    """N for ``local:N``, None for a scheduler's address; raises ``ClusterError`` on a bad N."""
    if not address.startswith(LOCAL_PREFIX):
        return None
    count = address[len(LOCAL_PREFIX) :]
    if not count.isdigit() or int(count) < 1:
        raise ClusterError(f"--cluster {address}: local:N needs a whole number of workers >= 1")
    return int(count)


# ------------------------------------------------------------------ the workers' side


def bot_problems(bots: Sequence[BotSpec]) -> list[str]:
    """Why each bot cannot start on this machine (one line per bot), as the league file's check.

    Bots that cannot run anywhere (``unavailable``) or are not started by the
    referee (remote TCP bots) are the league file's business, not a worker's.
    """
    problems = []
    for spec in bots:
        if spec.unavailable is not None or spec.remote:
            continue
        why = why_cannot_start(spec.command, spec.cwd or Path.cwd(), spec.env)
        if why is not None:
            problems.append(f"bot {spec.name}: {why}")
    return problems


@dataclasses.dataclass
class Outcome:
    """What a Dask task gives back: the match's result (its JSON) or why it was given up."""

    result: dict[str, Any] | None = None
    abandoned: str | None = None  # the match was given up after ``MATCH_ATTEMPTS`` deaths
    warnings: list[str] = dataclasses.field(default_factory=list)


class _Table:
    """One table worker process on a Dask worker, spoken to synchronously from a task thread."""

    def __init__(self, setup: Setup) -> None:
        self.process = subprocess.Popen(
            WORKER_COMMAND,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.send(setup)

    def send(self, message: Setup | Play) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(encode(message))
        self.process.stdin.flush()

    def play(self, messages: Sequence[Play], done: Callable[[Outcome], None]) -> None:
        """Play ``messages`` in order, ``done`` with each one's outcome as it ends.

        The next match is in the worker's pipe before the current one ends
        (``PLAYS_AHEAD``, as the local pool does), so the worker starts it at
        once.  Raises ``WorkerDied`` if the table worker failed: the matches
        ``done`` has not been given were not played.
        """
        assert self.process.stdout is not None
        sent = 0
        for finished in range(len(messages)):
            while sent < min(len(messages), finished + PLAYS_AHEAD):
                self.send(messages[sent])
                sent += 1
            warnings: list[str] = []
            while True:
                line = self.process.stdout.readline()
                if not line:
                    try:
                        code = self.process.wait(WORKER_EXIT_GRACE)
                    except subprocess.TimeoutExpired:
                        self.process.kill()
                        code = self.process.wait()
                    raise WorkerDied(f"its table worker ended ({describe_exit(code)})")
                try:
                    reply = decode_from_worker(line.rstrip(b"\n"))
                except PipeError as error:
                    raise WorkerDied(f"its table worker wrote a bad line ({error})") from None
                result = result_or_warning(reply, warnings.append)
                if result is not None:
                    done(Outcome(result=result.result, warnings=warnings))
                    break

    def close(self) -> None:
        """Close its stdin (it ends its bots) and wait for it; kill it after the grace."""
        with contextlib.suppress(OSError):
            assert self.process.stdin is not None
            self.process.stdin.close()

    def wait(self) -> None:
        try:
            self.process.wait(WORKER_EXIT_GRACE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class TableHost(WorkerPlugin):
    """A Dask worker's tables for one league: table workers kept across matches.

    Pickled by the coordinator and set up on every worker (also ones that
    join later); ``teardown`` (the league is done) ends every table worker and
    so every bot process it started.
    """

    def __init__(
        self,
        bots: list[BotSpec],
        control: TimeControl,
        logs: Path | None,
        name: str,
        *,
        local: int = 0,
        sandbox: str = "",
        log_form: LogForm = DEFAULT_LOG_FORM,
        bot_processes: int = BOT_PROCESSES,
    ) -> None:
        self.bots = bots
        self.local = local  # N for a worker process of this league's own local:N cluster
        self.logs = logs
        self.name = name  # Dask's plugin name, unique per league run
        # Built here, on the coordinator, so that every worker gets the league's own
        # settings (its sandbox setting among them), not its machine's.
        # Each table keeps up to ``bot_processes`` bot processes, one a bot, as --jobs's tables
        # do (``referee.tables.bot_processes``): with the worker's default of two idle a seat,
        # a table started a sandboxed bot for most matches and the cluster ran at 0.28x of
        # --jobs 2 (benchmarks/results/2026-11-28-fit-dask-engine.md).  One a bot is the
        # round robin's need; a gauntlet's field bot starts more, and never replays a deal.
        self.setup_template = Setup(
            control,
            None if logs is None else str(logs),
            0,
            list(bots),
            sandbox,
            log_form=log_form,
            bot_processes=bot_processes,
            per_bot=1,
        )

    def setup(self, worker: Worker) -> None:
        if self.local and threading.current_thread() is threading.main_thread():
            # Ctrl-C in the terminal reaches local:N's worker processes too; the league
            # process decides what a stop means (as its table workers leave it to it).
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        self.core = _core(worker, self.local)
        self.lock = threading.Lock()
        self.idle: list[_Table] = []
        self.tables: list[_Table] = []
        self.closed = False
        self.problems = bot_problems(self.bots)
        if self.logs is not None:
            try:
                private_dir(self.logs)
            except OSError as error:
                self.problems.append(f"log directory {str(self.logs)!r}: {error.strerror}")

    async def teardown(self, worker: Worker) -> None:
        await asyncio.to_thread(self.close)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            tables = list(self.tables)
        for table in tables:
            table.close()
        for table in tables:
            table.wait()

    def _take(self) -> _Table:
        with self.lock:
            if self.closed:
                raise TableError("the league is over on this worker")
            if self.idle:
                return self.idle.pop()
            # A number unique on this machine, for the bots' stderr file names.
            number = os.getpid() * 1000 + len(self.tables) + 1
            table = _Table(msgspec.structs.replace(self.setup_template, number=number))
            if self.core is not None:  # before it starts a bot: they inherit its core
                with contextlib.suppress(OSError):
                    os.sched_setaffinity(table.process.pid, {self.core})
            self.tables.append(table)
            return table

    def play(self, messages: Sequence[Play]) -> list[Outcome]:
        """Each match's outcome, in order: played, or given up after ``MATCH_ATTEMPTS`` deaths
        of the table worker under it (the matches after it go on on a fresh one)."""
        if self.problems:
            raise ClusterError(
                "\n".join(f"worker {get_worker().address}: {line}" for line in self.problems)
            )
        outcomes: list[Outcome] = []
        warnings: list[str] = []  # said before the next outcome
        attempt = 1

        def done(outcome: Outcome) -> None:
            nonlocal attempt
            outcome.warnings[:0] = warnings
            warnings.clear()
            outcomes.append(outcome)
            attempt = 1

        while len(outcomes) < len(messages):
            table = self._take()
            try:
                table.play(messages[len(outcomes) :], done)
            except WorkerDied as death:
                self._drop(table)
                match_id = messages[len(outcomes)].key.match_id
                if attempt == MATCH_ATTEMPTS:
                    why = f"{death} in each of {MATCH_ATTEMPTS} attempts"
                    done(Outcome(abandoned=why))
                    continue
                warnings.append(
                    f"{match_id}: {death}; playing the match again on a fresh "
                    f"worker (attempt {attempt + 1} of {MATCH_ATTEMPTS})"
                )
                attempt += 1
                continue
            except BaseException:
                self._drop(table)  # it failed or was interrupted: never reuse it
                raise
            with self.lock:
                self.idle.append(table)
        return outcomes

    def _drop(self, table: _Table) -> None:
        with self.lock:
            self.tables.remove(table)
        table.close()


def _core(worker: Worker, local: int) -> int | None:
    """The core a ``local:N`` worker's tables keep to, as ``--jobs N`` pins its tables
    (``local_pool.table_core``).  ``LocalCluster`` names its workers 0 to N - 1."""
    if not local or not isinstance(worker.name, int):
        return None
    return table_core(local, worker.name)


def play_on_worker(plugin: str, message: Play) -> Outcome:
    """The Dask task: play one match on this worker's tables."""
    return play_batch_on_worker(plugin, [message])[0]


def play_batch_on_worker(plugin: str, messages: list[Play]) -> list[Outcome]:
    """The Dask task: play several matches, one after another, on this worker's tables."""
    worker = get_worker()
    host: TableHost = worker.plugins[plugin]  # type: ignore[assignment]
    try:
        return host.play(messages)
    except ClusterError:
        raise  # its lines name the worker already
    except TableError as error:
        raise TableError(f"worker {worker.address}: {error}") from None


def worker_problems(plugin: str, dask_worker: Worker) -> list[str]:
    """The bot check's findings on one worker (run on every worker by ``Client.run``)."""
    host = dask_worker.plugins.get(plugin)
    return list(host.problems) if isinstance(host, TableHost) else []


# ------------------------------------------------------------------ the coordinator's side


class ClusterPool:
    """The league's tables as Dask tasks; ``play`` submits them and records each result."""

    def __init__(
        self,
        address: str,
        bots: Sequence[BotSpec],
        control: TimeControl,
        on_result: Callable[[TableJob, MatchResult], None],
        logs: Path | None,
        warn: Callable[[str], None],
        on_give_up: Callable[[TableJob, str], None] | None = None,
        sandbox: str = "",
        tls: ClusterTLS | None = None,
        log_form: LogForm = DEFAULT_LOG_FORM,
        bot_processes: int = BOT_PROCESSES,
    ) -> None:
        self.bot_processes = bot_processes  # per table (``Setup.bot_processes``)
        self.log_form = log_form  # how each match's log is kept (``Setup.log_form``)
        self.address = address
        self.tls = tls  # the file's [cluster] certificates: every connection is TLS
        self.on_give_up = on_give_up
        self.sandbox = sandbox  # the setting every table worker resolves (``Setup.sandbox``)
        self.bots = list(bots)
        self.control = control
        self.on_result = on_result
        self.logs = logs
        self.warn = warn
        self.plugin = f"newmarket-league-{uuid.uuid4().hex}"
        self.cluster: LocalCluster | None = None
        self.client: Client | None = None
        self.recorded: set[str] = set()
        # Futures not yet recorded, by key; dropping one lets Dask free its result.
        self.outstanding: dict[Any, Future[Any]] = {}

    async def __aenter__(self) -> ClusterPool:
        """The pool ``start``ed (``--cluster``); leaving it, or a ``start`` that fails half-way,
        ends every table worker and bot on the cluster (``aclose``)."""
        try:
            await self.start()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Connect (or start ``local:N``), set the tables up on every worker, check the bots."""
        remote = [spec.name for spec in self.bots if spec.remote]
        if remote:
            raise ClusterError(
                f"remote bots cannot play on a cluster (they connect to one referee): "
                f"{', '.join(remote)}"
            )
        await trio.to_thread.run_sync(self._connect)

    def _connect(self) -> None:
        workers = local_workers(self.address)
        problem = address_problem(self.address, self.tls)
        if problem is not None:
            raise ClusterError(problem)
        logging.getLogger("distributed").setLevel(logging.ERROR)
        secure: dict[str, Any] = {}
        if self.tls is not None:
            secure["security"] = security_for(self.tls, local=workers is not None)
        try:
            if workers is not None:
                if secure:
                    secure["protocol"] = TLS_SCHEME  # local:N listens over TLS too
                self.cluster = _untyped(LocalCluster)(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    silence_logs=logging.ERROR,
                    **secure,
                )
                self.client = _untyped(Client)(self.cluster, security=secure.get("security"))
            else:
                self.client = _untyped(Client)(
                    self.address, timeout=CONNECT_TIMEOUT, security=secure.get("security")
                )
        except (OSError, TimeoutError) as error:
            raise ClusterError(
                f"cannot reach the Dask scheduler at {self.address}: {error}"
            ) from None
        try:
            self.client.wait_for_workers(1, timeout=WORKER_WAIT)
        except TimeoutError:
            raise ClusterError(
                f"no Dask worker joined the scheduler at {self.address} in {WORKER_WAIT:.0f} s"
            ) from None
        host = TableHost(
            self.bots,
            self.control,
            self.logs,
            self.plugin,
            local=workers or 0,
            sandbox=self.sandbox,
            log_form=self.log_form,
            bot_processes=self.bot_processes,
        )
        self.client.register_plugin(host, name=self.plugin)
        found: dict[str, list[str]] = self.client.run(worker_problems, self.plugin)
        lines = [
            f"worker {address}: {problem}"
            for address, problems in sorted(found.items())
            for problem in problems
        ]
        if lines:
            raise ClusterError("\n".join(lines))

    async def play(self, jobs: Sequence[TableJob]) -> None:
        if not jobs:
            return
        client = self.client
        assert client is not None
        if self.logs is not None:
            private_dir(self.logs)
        token = trio.lowlevel.current_trio_token()
        send, receive = trio.open_memory_channel[Future[Any]](math.inf)

        def arrived(future: Future[Any]) -> None:
            # Dask calls this in its own callback thread, once per future.
            with contextlib.suppress(trio.RunFinishedError, trio.ClosedResourceError):
                trio.from_thread.run_sync(send.send_nowait, future, trio_token=token)

        try:
            by_key = await trio.to_thread.run_sync(self._submit, client, jobs, arrived)
            left = len(by_key)
            while left:
                # Every future that has finished meanwhile, fetched in one round trip: the
                # coordinator must keep up with hundreds of tables.
                batch = [await receive.receive()]
                with contextlib.suppress(trio.WouldBlock):
                    while True:
                        batch.append(receive.receive_nowait())
                left -= len(batch)
                batch_jobs = [by_key.pop(future.key) for future in batch]
                outcomes = await trio.to_thread.run_sync(_outcomes, client, batch, batch_jobs)
                for future in batch:
                    del self.outstanding[future.key]  # its result can leave the worker
                del batch
                for task_jobs, task_outcomes in zip(batch_jobs, outcomes, strict=True):
                    for job, outcome in zip(task_jobs, task_outcomes, strict=True):
                        self._record(job, outcome)
        finally:
            send.close()
            with trio.CancelScope(shield=True):
                await self._cancel_outstanding()

    def _submit(
        self,
        client: Client,
        jobs: Sequence[TableJob],
        arrived: Callable[[Future[Any]], None],
    ) -> dict[Any, list[TableJob]]:
        """Submit the matches in batches, a task each; each calls ``arrived`` when done.
        Their jobs, by key."""
        threads: dict[str, int] = _untyped(client.nthreads)()
        # Lane i's batches go first to the worker of thread i (as --jobs N's workers keep their
        # own rotations); any other worker may take them if that one is gone or idle elsewhere.
        lanes = [address for address, count in sorted(threads.items()) for _ in range(count)]
        by_key: dict[Any, list[TableJob]] = {}
        for lane, batch in batches(jobs, len(lanes)):
            future = client.submit(
                play_batch_on_worker,
                self.plugin,
                [Play(job.key, job.rules.to_dict()) for job in batch],
                # The first match's id names the task (unique: a match is in one batch).
                key=f"{batch[0].key.match_id}-{self.plugin}",
                pure=False,
                workers=[lanes[lane]] if lanes else None,
                allow_other_workers=True,
            )
            by_key[future.key] = list(batch)
            self.outstanding[future.key] = future
            untyped: Any = future  # distributed's Future is only partly typed
            untyped.add_done_callback(arrived)
        return by_key

    def _record(self, job: TableJob, outcome: Outcome) -> None:
        """A match's outcome: its warnings said, its result recorded once, or given up."""
        for text in outcome.warnings:
            self.warn(text)
        if job.key.match_id in self.recorded:
            return  # a second copy of a match: it is recorded once
        if outcome.abandoned is not None:
            if self.on_give_up is None:
                raise TableError(f"match {job.key.match_id}: {outcome.abandoned}")
            self.on_give_up(job, outcome.abandoned)
            return
        assert outcome.result is not None
        self.recorded.add(job.key.match_id)
        self.on_result(job, result_from_json(outcome.result))

    async def _cancel_outstanding(self) -> None:
        pending = [future for future in self.outstanding.values() if not _done(future)]
        self.outstanding = {}
        if pending and self.client is not None:
            with trio.move_on_after(CLOSE_TIMEOUT):
                await trio.to_thread.run_sync(self.client.cancel, pending, abandon_on_cancel=True)

    async def aclose(self) -> None:
        """End every table worker (and bot) on every worker, then the client and ``local:N``."""
        with trio.CancelScope(shield=True):
            await self._cancel_outstanding()
            with trio.move_on_after(CLOSE_TIMEOUT):
                await trio.to_thread.run_sync(self._close, abandon_on_cancel=True)

    def _close(self) -> None:
        if self.client is not None:
            client: Any = self.client  # distributed's Client is only partly typed
            with contextlib.suppress(Exception):  # a worker that is gone has nothing to end
                client.unregister_worker_plugin(self.plugin)
            client.close()
        if self.cluster is not None:
            self.cluster.close()


def _untyped(function: Any) -> Any:
    """``function`` for mypy --strict, where distributed leaves a signature untyped."""
    return function


def _done(future: Future[Any]) -> bool:
    untyped: Any = future
    return bool(untyped.done())


def batches(jobs: Sequence[TableJob], threads: int) -> list[tuple[int, list[TableJob]]]:
    """The matches cut into Dask tasks, each a run of one lane's matches: (lane, matches).

    Lane ``i`` of ``threads`` holds the rotations ``i``, ``i + threads``, ...,
    and its batches go first to one worker thread, as the local pool splits
    its matches (``local_pool._Waiting``): a duplicate table's rotations share
    one deal, and a bot process never plays a deal twice, so a worker that
    met every rotation would start a process per bot for each.  Batches
    shrink towards the end (a share of what is left, at most ``BATCH_MOST``),
    so that no worker plays a long last batch while the others wait; the
    rotations take turns, in schedule order.
    """
    threads = max(1, threads)
    queues: dict[int, list[TableJob]] = {}
    for job in jobs:
        queues.setdefault(job.key.rotation % threads, []).append(job)
    left = len(jobs)
    out: list[tuple[int, list[TableJob]]] = []
    while left:
        for slot, lane in sorted(queues.items()):
            if not lane:
                continue
            size = max(1, min(BATCH_MOST, math.ceil(left / (2 * threads)), len(lane)))
            out.append((slot, lane[:size]))
            del lane[:size]
            left -= size
    return out


def _outcomes(
    client: Client, futures: list[Future[Any]], jobs: list[list[TableJob]]
) -> list[list[Outcome]]:
    """Finished futures' results in one gather; a failed one raises as ``_outcome`` says."""
    try:
        gathered: list[list[Outcome]] = _untyped(client.gather)(futures)
    except Exception:  # one of them failed: find it, and name its match
        return [_outcome(future, batch) for future, batch in zip(futures, jobs, strict=True)]
    return gathered


def _outcome(future: Future[Any], jobs: list[TableJob]) -> list[Outcome]:
    """A finished future's result; a failure becomes one ``TableError`` naming its matches."""
    named = jobs[0].key.match_id + (f" and {len(jobs) - 1} more" if len(jobs) > 1 else "")
    try:
        outcome: list[Outcome] = future.result()
    except TableError:
        raise
    except KilledWorker as error:
        raise TableError(f"{named}: every worker that played it died ({error})") from None
    except FutureCancelledError:
        raise TableError(f"{named}: cancelled on the cluster") from None
    except Exception as error:
        raise TableError(f"{named}: {type(error).__name__}: {error}") from None
    return outcome
