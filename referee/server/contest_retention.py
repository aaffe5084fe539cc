"""Retention for a contest's matches: a challenge's records pruned as the organiser says, a
finals match's kept for ever.

Finals' and challenges' matches live in ``contest_matches`` (``contest_db``),
which the ladder's pass (``referee.server.retention``) never reads; this pass
walks them with a cursor of its own, as the ladder's pass walks ``matches``,
and removes their records (the log and ``MATCH_ID.*`` beside it, only under
the logs directory) by the ladder's rules except:

* a **finals** match is kept for ever (it is the evidence of the published
  ranking, and ``finals-rerun`` compares with it);
* a **challenge**'s matches were asked for by a participant: kept for ever,
  unless ``[retention] challenge_days`` says for how many days (a
  competition with many challenges over weeks);
* a match named in ``kept_matches`` (``CompetitionStore.keep_match``) is
  kept for ever, whatever its kind;
* any other kind is kept ``[retention] days``, as a ladder match is.

The result stays (the row, the challenge's page and API); a pruned match is
in ``contest_pruned`` as a ladder one is in ``pruned_records``, and the challenge's page and API say
"record pruned on DATE (retention N days)" for it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from functools import partial

from referee.server.busy import written
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.contest_db import contest_finished_after, mark_contest_pruned

CURSOR = "retention_contest_cursor"  # meta key: the last contest_matches row looked at
BATCH = 500
DAY = 86400.0
Remove = Callable[[Sequence[tuple[str, str]]], Awaitable[list[tuple[str, int]]]]


@dataclasses.dataclass(frozen=True)
class ContestPass:
    pruned: int
    freed: int
    kept: int  # records old enough to go, kept for ever (finals, asked for), this pass


def keep_days(competition: Competition, kind: str) -> float | None:
    """How long a ``kind`` match's record is kept, in days; None: for ever."""
    settings = competition.config.retention
    if kind == "finals":
        return None
    if kind == "challenge":
        return settings.challenge_days
    return settings.days


async def prune_contest(competition: Competition, now: float, remove: Remove) -> ContestPass:
    """Remove the contest records past their time; ``remove`` deletes files (off the loop)."""
    store = competition.store
    # The cursor holds with the settings it was moved under: a challenge passed while kept for
    # ever is looked at again once ``challenge_days`` is set (one walk from the first row).
    settings = competition.config.retention
    rules = f"{settings.days:g}/{settings.challenge_days}"
    saved, _, under = (store.meta(CURSOR) or "0").partition(" ")
    cursor = int(saved) if under == rules else 0
    pruned = freed = kept = 0
    while True:
        batch = contest_finished_after(store, cursor, BATCH)
        done = len(batch) < BATCH
        doomed: list[tuple[str, str]] = []
        days_of: dict[str, float] = {}
        for row, match_id, kind, finals, log_path, finished_at in batch:
            days = None if finals else keep_days(competition, kind)
            if days is not None and finished_at >= now - days * DAY:
                done = True  # this one and every later one wait for a later pass
                break
            cursor = row
            if log_path is None:
                continue
            if days is None or store.kept_why(match_id) is not None:
                kept += 1
                continue
            doomed.append((match_id, log_path))
            days_of[match_id] = days
        sizes = await remove(doomed)
        pruned += len(sizes)
        freed += sum(size for _mid, size in sizes)
        await written(
            "recording pruned contest records",
            partial(_mark, store, sizes, days_of, now, f"{cursor} {rules}"),
        )
        if done:
            return ContestPass(pruned, freed, kept)


def _mark(
    store: CompetitionStore,
    sizes: Sequence[tuple[str, int]],
    days_of: dict[str, float],
    now: float,
    cursor: str,
) -> None:
    """Record the pruned (each with its retention) and move the cursor, in one transaction."""
    with store.connection:
        store.connection.execute("BEGIN IMMEDIATE")
        for days in sorted(set(days_of.values())):
            chosen = [(mid, size) for mid, size in sizes if days_of[mid] == days]
            mark_contest_pruned(store, chosen, now, days)
        store.set_meta(CURSOR, cursor)
