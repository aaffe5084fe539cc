"""The competition's tables on a Dask cluster (``newmarket serve --cluster ADDRESS``).

The league's cluster machinery (``referee.league.cluster``) does the work: a
``ClusterPool`` connects (or starts ``local:N``), sets a ``TableHost`` up on
every worker, which keeps league table workers (``referee.league.worker``)
across matches, and ends them when the server stops.  What differs is the
roster: a league's bots are fixed at setup, a competition's change, so each
match is sent with the specs of the versions at its table and the versions
still in play, the messages a local table gets (``referee.server.tables``).
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
import os
from collections.abc import Iterable, Mapping
from typing import Any

import trio
from distributed import Future

from engine.rules import Rules
from referee.bots import BotSpec
from referee.league.cluster import ClusterPool, play_on_worker
from referee.league.league_db import MatchKey
from referee.league.runner import LeagueError, TableJob
from referee.league.worker import play_message
from referee.match.result import MatchResult, result_from_json
from referee.sandbox import ENV_SANDBOX
from referee.server.competition_file import CompetitionConfig
from referee.server.sandboxing import sandbox_setting
from referee.server.tables import WorkerError


def _never(_job: TableJob, _result: MatchResult) -> None:
    raise AssertionError("a competition's matches are recorded by play_group, not the pool")


class ClusterTables:
    """The connection to the cluster and its table hosts, for every ``ClusterTable``."""

    def __init__(self, address: str, config: CompetitionConfig) -> None:
        # The table hosts' setup carries the sandbox setting read from this process's
        # environment (as ``newmarket league`` sets it), so every worker gets the file's.
        os.environ[ENV_SANDBOX] = sandbox_setting(config)
        self.pool = ClusterPool(
            address, [], config.time_control, _never, config.logs_dir, warn=lambda _text: None
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
        message = play_message(key, rules, specs, keep)
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
        if "abandoned" in outcome:
            raise WorkerError(f"{key.match_id}: {outcome['abandoned']}")
        return result_from_json(outcome["result"])

    async def aclose(self) -> None:
        """Nothing of its own: the table hosts' workers are the pool's, ended with it."""


def _outcome(future: Future[Any]) -> dict[str, Any]:
    """The task's outcome; a failed task (its workers died, a table failed) a WorkerError."""
    try:
        outcome: dict[str, Any] = future.result()
    except LeagueError as error:
        raise WorkerError(str(error)) from None
    except Exception as error:  # KilledWorker, a cancellation...: one line, the group retried
        raise WorkerError(f"{type(error).__name__}: {error}") from None
    return outcome
