"""Tables on a Dask distributed cluster (``newmarket league --cluster``, ``serve --cluster``).

The same three promises as the local pool (``referee.tables.local_pool``), over
many machines:

* **One writer.**  The league process (the *coordinator*) submits every match
  as a Dask task and records each result the moment its future completes, by
  match id and at most once; workers only play and return ``MatchResult``
  JSON.  SQLite never leaves this process.
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
from referee.storage.private_files import private_dir
from referee.tables.job import MATCH_ATTEMPTS, WORKER_EXIT_GRACE, TableError, TableJob, WorkerDied
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

    def play(self, message: Play) -> Outcome:
        """The match's result and warnings; raises ``TableError`` if the table worker failed."""
        assert self.process.stdout is not None
        self.send(message)
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
                return Outcome(result=result.result, warnings=warnings)

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
        local: bool = False,
        sandbox: str = "",
        log_form: LogForm = DEFAULT_LOG_FORM,
    ) -> None:
        self.bots = bots
        self.local = local  # a worker process of this league's own local:N cluster
        self.logs = logs
        self.name = name  # Dask's plugin name, unique per league run
        # Built here, on the coordinator, so that every worker gets the league's own
        # settings (its sandbox setting among them), not its machine's.
        self.setup_template = Setup(
            control, None if logs is None else str(logs), 0, list(bots), sandbox, log_form=log_form
        )

    def setup(self, worker: Worker) -> None:
        if self.local and threading.current_thread() is threading.main_thread():
            # Ctrl-C in the terminal reaches local:N's worker processes too; the league
            # process decides what a stop means (as its table workers leave it to it).
            signal.signal(signal.SIGINT, signal.SIG_IGN)
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
            self.tables.append(table)
            return table

    def play(self, message: Play) -> Outcome:
        if self.problems:
            raise ClusterError(
                "\n".join(f"worker {get_worker().address}: {line}" for line in self.problems)
            )
        warnings: list[str] = []
        for attempt in range(1, MATCH_ATTEMPTS + 1):
            table = self._take()
            try:
                outcome = table.play(message)
            except WorkerDied as death:
                self._drop(table)
                if attempt == MATCH_ATTEMPTS:
                    why = f"{death} in each of {MATCH_ATTEMPTS} attempts"
                    return Outcome(abandoned=why, warnings=warnings)
                warnings.append(
                    f"{message.key.match_id}: {death}; playing the match again on a fresh "
                    f"worker (attempt {attempt + 1} of {MATCH_ATTEMPTS})"
                )
                continue
            except BaseException:
                self._drop(table)  # it failed or was interrupted: never reuse it
                raise
            with self.lock:
                self.idle.append(table)
            outcome.warnings[:0] = warnings
            return outcome
        raise AssertionError("unreachable: the last attempt returns")

    def _drop(self, table: _Table) -> None:
        with self.lock:
            self.tables.remove(table)
        table.close()


def play_on_worker(plugin: str, message: Play) -> Outcome:
    """The Dask task: play one match on this worker's tables."""
    worker = get_worker()
    host: TableHost = worker.plugins[plugin]  # type: ignore[assignment]
    try:
        return host.play(message)
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
        log_form: LogForm = DEFAULT_LOG_FORM,
    ) -> None:
        self.log_form = log_form  # how each match's log is kept (``Setup.log_form``)
        self.address = address
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
        logging.getLogger("distributed").setLevel(logging.ERROR)
        try:
            if workers is not None:
                self.cluster = _untyped(LocalCluster)(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    silence_logs=logging.ERROR,
                )
                self.client = _untyped(Client)(self.cluster)
            else:
                self.client = _untyped(Client)(self.address, timeout=CONNECT_TIMEOUT)
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
            local=workers is not None,
            sandbox=self.sandbox,
            log_form=self.log_form,
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
            left = len(jobs)
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
                for job, outcome in zip(batch_jobs, outcomes, strict=True):
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
    ) -> dict[Any, TableJob]:
        """Submit every match as a task; each calls ``arrived`` when done.  Its jobs, by key."""
        by_key: dict[Any, TableJob] = {}
        for job in jobs:
            future = client.submit(
                play_on_worker,
                self.plugin,
                Play(job.key, job.rules.to_dict()),
                key=f"{job.key.match_id}-{self.plugin}",
                pure=False,
            )
            by_key[future.key] = job
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


def _outcomes(client: Client, futures: list[Future[Any]], jobs: list[TableJob]) -> list[Outcome]:
    """Finished futures' results in one gather; a failed one raises as ``_outcome`` says."""
    try:
        gathered: list[Outcome] = _untyped(client.gather)(futures)
    except Exception:  # one of them failed: find it, and name its match
        return [_outcome(future, job) for future, job in zip(futures, jobs, strict=True)]
    return gathered


def _outcome(future: Future[Any], job: TableJob) -> Outcome:
    """A finished future's result; a failure becomes one ``TableError`` naming the match."""
    try:
        outcome: Outcome = future.result()
    except TableError:
        raise
    except KilledWorker as error:
        raise TableError(
            f"{job.key.match_id}: every worker that played it died ({error})"
        ) from None
    except FutureCancelledError:
        raise TableError(f"{job.key.match_id}: cancelled on the cluster") from None
    except Exception as error:
        raise TableError(f"{job.key.match_id}: {type(error).__name__}: {error}") from None
    return outcome
