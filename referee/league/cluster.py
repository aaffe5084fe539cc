"""Playing a league's tables on a Dask distributed cluster (``newmarket league --cluster``).

The same three promises as ``referee.league.runner``, over many machines:

* **One writer.**  The league process (the *coordinator*) submits every match
  as a Dask task and records each result the moment its future completes, by
  match id and at most once; workers only play and return ``MatchResult``
  JSON.  SQLite never leaves this process.
* **Bot processes reused.**  Each Dask worker holds a ``TableHost`` (a worker
  plugin) that keeps one table worker process (``referee.league.worker``,
  the very program ``--jobs`` uses, spoken to over its JSON-lines protocol)
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
import json
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

import trio
from distributed import Client, Future, LocalCluster, WorkerPlugin, get_worker
from distributed.client import FutureCancelledError
from distributed.scheduler import KilledWorker
from distributed.worker import Worker

from referee.bots import BotSpec
from referee.league.runner import (
    MATCH_ATTEMPTS,
    WORKER_EXIT_GRACE,
    LeagueError,
    TableJob,
    WorkerDied,
)
from referee.league.worker import (
    WORKER_COMMAND,
    PipeError,
    pipe_message,
    play_message,
    setup_message,
)
from referee.match.result import MatchResult, result_from_json
from referee.storage.private_files import private_dir
from referee.transport.process import describe_exit, why_cannot_start
from referee.transport.timecontrol import TimeControl

LOCAL_PREFIX = "local:"
CONNECT_TIMEOUT = 30.0  # seconds to reach the scheduler
WORKER_WAIT = 60.0  # seconds to wait for the first worker to join a scheduler that has none
CLOSE_TIMEOUT = 60.0  # seconds for the workers to end their bots when the league is done


class ClusterError(LeagueError):
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


class _Table:
    """One table worker process on a Dask worker, spoken to synchronously from a task thread."""

    def __init__(self, setup: dict[str, object]) -> None:
        self.process = subprocess.Popen(
            WORKER_COMMAND,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.send(setup)

    def send(self, message: dict[str, object]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def play(self, message: dict[str, object]) -> dict[str, Any]:
        """The match's result and warnings; raises ``LeagueError`` if the table worker failed."""
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
                reply = pipe_message(line.rstrip(b"\n"))
            except PipeError as error:
                raise WorkerDied(f"its table worker wrote a bad line ({error})") from None
            if reply["type"] == "error":
                raise LeagueError(str(reply["text"]))
            if reply["type"] == "warn":
                warnings.append(str(reply["text"]))
            elif reply["type"] == "result":
                return {"result": reply["result"], "warnings": warnings}

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
    ) -> None:
        self.bots = bots
        self.local = local  # a worker process of this league's own local:N cluster
        self.logs = logs
        self.name = name  # Dask's plugin name, unique per league run
        # Built here, on the coordinator, so that every worker gets the league's own
        # settings (those setup_message reads from this process), not its machine's.
        self.setup_template = setup_message(bots, control, logs, 0)

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
                raise LeagueError("the league is over on this worker")
            if self.idle:
                return self.idle.pop()
            # A number unique on this machine, for the bots' stderr file names.
            number = os.getpid() * 1000 + len(self.tables) + 1
            table = _Table({**self.setup_template, "number": number})
            self.tables.append(table)
            return table

    def play(self, message: dict[str, object]) -> dict[str, Any]:
        if self.problems:
            raise ClusterError(
                "\n".join(f"worker {get_worker().address}: {line}" for line in self.problems)
            )
        match_id = str(message["key"]["match_id"])  # type: ignore[index]
        warnings: list[str] = []
        for attempt in range(1, MATCH_ATTEMPTS + 1):
            table = self._take()
            try:
                outcome = table.play(message)
            except WorkerDied as death:
                self._drop(table)
                if attempt == MATCH_ATTEMPTS:
                    why = f"{death} in each of {MATCH_ATTEMPTS} attempts"
                    return {"abandoned": why, "warnings": warnings}
                warnings.append(
                    f"{match_id}: {death}; playing the match again on a fresh worker "
                    f"(attempt {attempt + 1} of {MATCH_ATTEMPTS})"
                )
                continue
            except BaseException:
                self._drop(table)  # it failed or was interrupted: never reuse it
                raise
            with self.lock:
                self.idle.append(table)
            outcome["warnings"] = warnings + outcome["warnings"]
            return outcome
        raise AssertionError("unreachable: the last attempt returns")

    def _drop(self, table: _Table) -> None:
        with self.lock:
            self.tables.remove(table)
        table.close()


def play_on_worker(plugin: str, message: dict[str, object]) -> dict[str, Any]:
    """The Dask task: play one match on this worker's tables."""
    worker = get_worker()
    host: TableHost = worker.plugins[plugin]  # type: ignore[assignment]
    try:
        return host.play(message)
    except ClusterError:
        raise  # its lines name the worker already
    except LeagueError as error:
        raise LeagueError(f"worker {worker.address}: {error}") from None


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
    ) -> None:
        self.address = address
        self.on_give_up = on_give_up
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
        host = TableHost(self.bots, self.control, self.logs, self.plugin, local=workers is not None)
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

        by_key: dict[Any, TableJob] = {}

        def submit() -> None:
            for job in jobs:
                future = client.submit(
                    play_on_worker,
                    self.plugin,
                    play_message(job.key, job.rules),
                    key=f"{job.key.match_id}-{self.plugin}",
                    pure=False,
                )
                by_key[future.key] = job
                self.outstanding[future.key] = future
                untyped: Any = future  # distributed's Future is only partly typed
                untyped.add_done_callback(arrived)

        try:
            await trio.to_thread.run_sync(submit)
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
                    for text in outcome["warnings"]:
                        self.warn(text)
                    if job.key.match_id in self.recorded:
                        continue  # a second copy of a match: it is recorded once
                    if "abandoned" in outcome:
                        why = str(outcome["abandoned"])
                        if self.on_give_up is None:
                            raise LeagueError(f"match {job.key.match_id}: {why}")
                        self.on_give_up(job, why)
                        continue
                    self.recorded.add(job.key.match_id)
                    self.on_result(job, result_from_json(outcome["result"]))
        finally:
            send.close()
            with trio.CancelScope(shield=True):
                await self._cancel_outstanding()

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


def _outcomes(
    client: Client, futures: list[Future[Any]], jobs: list[TableJob]
) -> list[dict[str, Any]]:
    """Finished futures' results in one gather; a failed one raises as ``_outcome`` says."""
    try:
        gathered: list[dict[str, Any]] = _untyped(client.gather)(futures)
    except Exception:  # one of them failed: find it, and name its match
        return [_outcome(future, job) for future, job in zip(futures, jobs, strict=True)]
    return gathered


def _outcome(future: Future[Any], job: TableJob) -> dict[str, Any]:
    """A finished future's result; a failure becomes one ``LeagueError`` naming the match."""
    try:
        outcome: dict[str, Any] = future.result()
    except LeagueError:
        raise
    except KilledWorker as error:
        raise LeagueError(
            f"{job.key.match_id}: every worker that played it died ({error})"
        ) from None
    except FutureCancelledError:
        raise LeagueError(f"{job.key.match_id}: cancelled on the cluster") from None
    except Exception as error:
        raise LeagueError(f"{job.key.match_id}: {type(error).__name__}: {error}") from None
    return outcome
