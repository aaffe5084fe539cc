"""The competition's tables on a Dask cluster (``newmarket serve --cluster ADDRESS``).

The Dask pool (``referee.tables.dask_pool``) does the work: a
``ClusterPool`` connects (or starts ``local:N``), sets a ``TableHost`` up on
every worker, which keeps table workers (``referee.tables.worker``)
across matches, and ends them when the server stops.  What differs is the
roster: a league's bots are fixed at setup, a competition's change, so each
match is sent with the specs of the versions at its table and the versions
still in play, the messages a local table gets (``referee.server.worker_table``).
Any Dask worker's table can then play any match.

The server stays the one writer: a ``ClusterTable`` submits its group's
matches one at a time, as a local table plays them, and ``play_group``
records each result as it comes.  A match whose worker died is played again
by Dask elsewhere (``allowed-failures``); one that cannot be played at all
raises ``WorkerError``, and the group is retried once and then given up, as
when a local table worker dies.

Every worker needs newmarket at the same path, and the competition's data
directory at the same path (a shared filesystem): the uploaded versions run
from there and the match logs are written there.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

import trio
from distributed import Future

from engine.rules import Rules
from referee.bots import BotSpec
from referee.match.key import MatchKey
from referee.match.result import MatchResult, result_from_json
from referee.server.competition_file import CompetitionConfig
from referee.server.sandboxing import sandbox_setting
from referee.server.worker_table import WorkerError
from referee.tables.dask_pool import ClusterPool, Outcome, play_on_worker
from referee.tables.job import TableError, TableJob
from referee.tables.messages import Play


def _never(_job: TableJob, _result: MatchResult) -> None:
    raise AssertionError("a competition's matches are recorded by play_group, not the pool")


class ClusterTables:
    """The connection to the cluster and its table hosts, for every ``ClusterTable``."""

    def __init__(self, address: str, config: CompetitionConfig) -> None:
        # The table hosts' setup carries the file's sandbox setting to every worker.
        self.pool = ClusterPool(
            address,
            [],
            config.time_control,
            _never,
            config.logs_dir,
            warn=lambda _text: None,
            sandbox=sandbox_setting(config),
            tls=config.cluster,  # [cluster]: TLS; a worker must hold the organiser's certificate
            log_form=config.match_logs,
        )
        self.submitted = itertools.count(1)

    async def start(self) -> None:
        """Connect (or start ``local:N``); ``ClusterError`` with one line if it cannot."""
        await self.pool.start()

    def threads(self) -> int:
        """The worker threads the cluster has now: the tables it can play at once."""
        client: Any = self.pool.client
        threads: dict[str, int] = client.nthreads()
        return max(1, sum(threads.values()))

    async def aclose(self) -> None:
        await self.pool.aclose()


class ClusterTable:
    """One table of the competition whose matches run as Dask tasks, one after another."""

    def __init__(self, tables: ClusterTables) -> None:
        self.tables = tables

    async def play(
        self, key: MatchKey, rules: Rules, specs: Mapping[int, BotSpec], keep: Iterable[int]
    ) -> MatchResult:
        pool = self.tables.pool
        client: Any = pool.client
        message = Play(key, rules.to_dict(), dict(specs), sorted(set(keep)))
        # Unique per submission: a retried group plays its match ids again.
        name = f"{key.match_id}-{next(self.tables.submitted)}-{pool.plugin}"
        future: Any = await trio.to_thread.run_sync(  # distributed's Future: partly typed
            lambda: client.submit(play_on_worker, pool.plugin, message, key=name, pure=False)
        )
        pool.outstanding[name] = future  # cancelled by the pool if the server stops
        try:
            outcome = await trio.to_thread.run_sync(_outcome, future, abandon_on_cancel=True)
        finally:
            pool.outstanding.pop(name, None)
            if not future.done():
                with trio.CancelScope(shield=True):
                    await trio.to_thread.run_sync(future.cancel)
        if outcome.abandoned is not None:
            raise WorkerError(f"{key.match_id}: {outcome.abandoned}")
        assert outcome.result is not None
        return result_from_json(outcome.result)

    async def aclose(self) -> None:
        """Nothing of its own: the table hosts' workers are the pool's, ended with it."""


def _outcome(future: Future[Any]) -> Outcome:
    """The task's outcome; a failed task (its workers died, a table failed) a WorkerError."""
    try:
        outcome: Outcome = future.result()
    except TableError as error:
        raise WorkerError(str(error)) from None
    except Exception as error:  # KilledWorker, a cancellation...: one line, the group retried
        raise WorkerError(f"{type(error).__name__}: {error}") from None
    return outcome
