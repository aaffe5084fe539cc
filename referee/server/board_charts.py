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
versions played in which the row version finished ahead (ties half).
Both are for the leaderboard's top ``SHOWN`` versions (the chart's palette).
"""

from __future__ import annotations

import dataclasses
import time
import weakref
from typing import Any

from markupsafe import Markup
from openskill.models import PlackettLuce

from referee.league.ratings import MU, SIGMA, Rating
from referee.report.chart import PALETTE, rating_chart
from referee.server.competition import Competition
from referee.server.competition_db import _IN_PLAY

SHOWN = len(PALETTE)
STEPS = 120
MATRIX_SECONDS = 10.0  # the matrix is read again at most this often


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
    matrix: tuple[float, int, dict[str, Any]] | None = None  # (when, matches, the matrix)


_STATES: weakref.WeakKeyDictionary[Competition, _State] = weakref.WeakKeyDictionary()


def _state(competition: Competition) -> _State:
    state = _STATES.get(competition)
    if state is None:
        state = _STATES[competition] = _State()
    return state


def _update(competition: Competition, state: _State) -> None:
    """Rate the matches whose groups have finished since the last look, in row order."""
    store = competition.store
    rows = store.db.execute(
        "SELECT rowid, match_id FROM matches WHERE rowid > ? ORDER BY rowid", (state.after,)
    ).fetchall()
    for rowid, match_id in rows:
        state.waiting[str(match_id)] = int(rowid)
        state.after = int(rowid)
    if not state.waiting:
        return
    still = store.in_play(state.waiting)
    ready = sorted((row, mid) for mid, row in state.waiting.items() if mid not in still)
    for _row, match_id in ready:
        del state.waiting[match_id]
        seats = store.db.execute(
            "SELECT version, place FROM seats WHERE match_id = ? ORDER BY seat", (match_id,)
        ).fetchall()
        if len(seats) < 2:
            continue
        teams = []
        for version, _place in seats:
            if version not in state.ratings:
                state.ratings[version] = state.model.rating(mu=MU, sigma=SIGMA, name=str(version))
            teams.append([state.ratings[version]])
        updated = state.model.rate(teams, ranks=[float(place) for _v, place in seats])
        for (version, _place), team in zip(seats, updated, strict=True):
            state.ratings[version] = team[0]
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
    """The report's rating chart of the top versions (None before a match has counted)."""
    state = _state(competition)
    _update(competition, state)
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
    met); read again at most every ``MATRIX_SECONDS``."""
    state = _state(competition)
    store = competition.store
    count = store.match_count()
    now = time.monotonic()
    if state.matrix is not None:
        when, _matches, matrix = state.matrix
        if now - when < MATRIX_SECONDS:
            return matrix
    shown = _shown_versions(competition)
    ids = [v for v, _label in shown]
    marks = ",".join("?" * len(ids))
    met: dict[tuple[int, int], tuple[float, int]] = {}
    if ids:
        rows = store.db.execute(
            "SELECT a.version, b.version, SUM(CASE WHEN a.place < b.place THEN 1.0 "
            "WHEN a.place = b.place THEN 0.5 ELSE 0.0 END), COUNT(*) FROM seats a "
            "JOIN seats b ON b.match_id = a.match_id AND b.version != a.version "
            "JOIN matches m ON m.match_id = a.match_id JOIN groups g ON g.id = m.group_id "
            f"WHERE a.version IN ({marks}) AND b.version IN ({marks}) AND NOT {_IN_PLAY} "
            "GROUP BY a.version, b.version",
            [*ids, *ids],
        )
        met = {(int(a), int(b)): (float(ahead), int(n)) for a, b, ahead, n in rows}
    matrix = {
        "versions": [label for _v, label in shown],
        "rows": [
            [f"{100 * met[(a, b)][0] / met[(a, b)][1]:.0f}%" if (a, b) in met else "" for b in ids]
            for a in ids
        ],
    }
    state.matrix = (now, count, matrix)
    return matrix
