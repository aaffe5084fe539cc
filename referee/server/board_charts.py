"""The leaderboard's rating history and head-to-head matrix, as the league report draws them.

The chart is the report's own (``referee.report.chart.rating_chart``): each
version's openskill rating (``mu - 3 sigma``, Plackett-Luce on its places)
after each match, updated as ``referee.report.data.rating_history`` updates a
league's.  A match counts once its duplicate group has finished, as every
number that comes from a match's cards does (``CompetitionStore.in_play``),
so the matches enter in the order their groups end.  The ratings are kept
here and brought up to date with the matches stored since the last look; the
history keeps at most ``2 * STEPS`` snapshots (every other one is dropped, and
the stride doubles, when it fills), so a page's size and the memory do not
grow with the weeks.

The matrix is the report's head to head: the share of the matches both
versions played in which the row version finished ahead (ties half),
counted in the same pass.
Both are for the leaderboard's top ``SHOWN`` versions (the chart's palette).
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any

import trio
from markupsafe import Markup
from openskill.models import PlackettLuce

from referee.report.chart import PALETTE, rating_chart
from referee.scoring.ratings import MU, SIGMA, Rating
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore

SHOWN = len(PALETTE)
STEPS = 120
PER_LOOK = 2000  # new matches a look takes in (0.2 to 2 s of openskill, in its thread)


@dataclasses.dataclass
class _State:
    model: PlackettLuce = dataclasses.field(
        default_factory=lambda: PlackettLuce(mu=MU, sigma=SIGMA)
    )
    ratings: dict[int, Any] = dataclasses.field(default_factory=dict)
    after: int = 0  # the last match row looked at
    waiting: dict[str, int] = dataclasses.field(default_factory=dict)  # in play: id -> row
    history: list[tuple[int, dict[int, Rating]]] = dataclasses.field(default_factory=list)
    counted: int = 0  # matches rated
    stride: int = 1
    # (row version, column version) -> [matches the row finished ahead (ties half), matches]
    pairs: dict[tuple[int, int], list[float]] = dataclasses.field(default_factory=dict)
    lock: trio.Lock = dataclasses.field(default_factory=trio.Lock)  # one look at a time
    reader: CompetitionStore | None = None  # the looks' own connection, in a worker thread


_STATES: weakref.WeakKeyDictionary[Competition, _State] = weakref.WeakKeyDictionary()


def _state(competition: Competition) -> _State:
    state = _STATES.get(competition)
    if state is None:
        state = _STATES[competition] = _State()
    return state


async def refresh_charts(competition: Competition) -> None:
    """Bring the ratings and the matrix up to date, in a worker thread with a read-only
    connection of its own (the openskill updates are pure Python: on the server's loop,
    a backlog of thousands would hold every request and table)."""
    state = _state(competition)
    async with state.lock:
        if state.reader is None:
            state.reader = CompetitionStore.reader(competition.store.path)
        await trio.to_thread.run_sync(_update, state.reader, state)


def _update(store: CompetitionStore, state: _State) -> None:
    """Count the matches whose groups have finished since the last look, in row order.

    At most ``PER_LOOK`` new rows a look, so that a page asked for after a restart on a
    large database waits for one look, and the chart catches up over the next ones.
    """
    rows = store.connection.execute(
        "SELECT rowid, match_id FROM matches WHERE rowid > ? ORDER BY rowid LIMIT ?",
        (state.after, PER_LOOK),
    ).fetchall()
    for rowid, match_id in rows:
        state.waiting[str(match_id)] = int(rowid)
        state.after = int(rowid)
    if not state.waiting:
        return
    still = store.in_play(state.waiting)
    ready = sorted((row, mid) for mid, row in state.waiting.items() if mid not in still)
    seats: dict[str, list[tuple[int, int]]] = {}
    for start in range(0, len(ready), 500):
        chunk = [mid for _row, mid in ready[start : start + 500]]
        for match_id, version, place in store.connection.execute(
            "SELECT match_id, version, place FROM seats WHERE match_id IN "
            f"({','.join('?' * len(chunk))}) ORDER BY match_id, seat",
            chunk,
        ):
            seats.setdefault(str(match_id), []).append((int(version), int(place)))
    for _row, match_id in ready:
        del state.waiting[match_id]
        table = seats.get(match_id, [])
        if len(table) >= 2:
            _count(state, table)


def _count(state: _State, table: list[tuple[int, int]]) -> None:
    """One finished match's seats (version, place): the ratings and the pairs."""
    teams = []
    for version, _place in table:
        if version not in state.ratings:
            state.ratings[version] = state.model.rating(mu=MU, sigma=SIGMA, name=str(version))
        teams.append([state.ratings[version]])
    updated = state.model.rate(teams, ranks=[float(place) for _v, place in table])
    for (version, _place), team in zip(table, updated, strict=True):
        state.ratings[version] = team[0]
    for a, a_place in table:
        for b, b_place in table:
            if a != b:
                pair = state.pairs.setdefault((a, b), [0.0, 0.0])
                pair[0] += 1.0 if a_place < b_place else 0.5 if a_place == b_place else 0.0
                pair[1] += 1
    state.counted += 1
    if state.counted % state.stride == 0:
        snapshot = {v: Rating(r.mu, r.sigma) for v, r in state.ratings.items()}
        state.history.append((state.counted, snapshot))
        if len(state.history) >= 2 * STEPS:
            state.history = state.history[1::2]
            state.stride *= 2


def _shown_versions(competition: Competition) -> list[tuple[int, str]]:
    """The leaderboard's top versions, by rank, with their labels."""
    labels = {v.id: v.label for v in competition.store.versions()}
    scores = competition.board.scores
    ranked = sorted(scores, key=lambda version: (scores[version].rank, version))
    return [(v, labels.get(v, f"v{v}")) for v in ranked if v in labels][:SHOWN]


def ratings_svg(competition: Competition) -> Markup | None:
    """The report's rating chart of the top versions as of the last ``refresh_charts``
    (None before a match has counted)."""
    state = _state(competition)
    shown = _shown_versions(competition)
    if not state.history or not shown:
        return None
    prior = Rating(MU, SIGMA)
    names = [label for _v, label in shown]
    history = [
        {label: snapshot.get(version, prior) for version, label in shown}
        for _count, snapshot in state.history
    ]
    return rating_chart(names, history)


def head_to_head(competition: Competition) -> dict[str, Any]:
    """``{"versions": [labels], "rows": [[cell, ...], ...]}``: the share of common matches the
    row version finished ahead of the column one, as the report prints it ('' when they never
    met), counted with the ratings, as of the last ``refresh_charts``."""
    state = _state(competition)
    shown = _shown_versions(competition)
    ids = [v for v, _label in shown]
    rows = []
    for a in ids:
        cells = []
        for b in ids:
            ahead, met = state.pairs.get((a, b), (0.0, 0.0))
            cells.append(f"{100 * ahead / met:.0f}%" if met else "")
        rows.append(cells)
    return {"versions": [label for _v, label in shown], "rows": rows}
