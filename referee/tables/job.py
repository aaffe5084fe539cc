"""A match to play at some table, and the failures of the referee's side of a table.

Every pool (local table workers, a Dask cluster, remote bots played in this
process) takes ``TableJob``s and gives back results; a league and the
competition server are both its clients.  Whatever the pool, a failure is
never a verdict on a bot: ``TableError`` is the referee's own (a log it cannot
write, a cluster that cannot play), and ``WorkerDied`` a table worker that
ended under its match, which is played again on a fresh worker.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol

from engine.rules import Rules
from referee.match.key import MatchKey

MATCH_ATTEMPTS = 3
"""How often one run plays a match whose table worker dies under it, before giving it up.

Without a bound, a bot that kills its table worker (possible without the
sandbox's PID namespace), or a match that trips a referee bug, would stop the
league and stop it again on every resume.  With it, the league goes on and
names the match once (``LeagueRun.abandoned``); running the command again
tries it again, MATCH_ATTEMPTS more times at most.
"""

WORKER_EXIT_GRACE = 15.0  # seconds a worker gets to end its bots after its stdin closes


class TableError(Exception):
    """The referee side of a table failed (not a bot): a worker could not write its log."""


class WorkerDied(TableError):
    """A table worker ended, or wrote something that is not a message, during a match.

    Not a verdict on any bot: which seat (if any) was to blame cannot be told
    from outside the worker, so the match is played again on a fresh worker
    (``MATCH_ATTEMPTS``) and, if it keeps dying, left unplayed and reported.
    """


@dataclasses.dataclass(frozen=True)
class TableJob:
    """A match to play: where it sits in the league, and its rules."""

    key: MatchKey
    rules: Rules


class MatchPool(Protocol):
    """What a league needs of a pool: play these tables, recording each result as it ends.

    A match the pool cannot play (its table worker died ``MATCH_ATTEMPTS``
    times) goes to the pool's ``on_give_up`` instead, and the others go on.
    """

    async def play(self, jobs: Sequence[TableJob]) -> None: ...


def stop_on_give_up(job: TableJob, why: str) -> None:
    """The ``on_give_up`` of a pool whose client wants no match left unplayed: stop."""
    raise TableError(f"match {job.key.match_id}: {why}")
