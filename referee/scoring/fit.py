"""A batch fit of every bot's strength from duplicate chips scores, independent of match order.

The model: each bot has a strength ``theta`` in chips per hand, and a
seat's score is its holder's strength minus the mean strength of those it
is compared with, plus noise.  In a duplicate group the comparison is the
bridge one (``referee.scoring.duplicate.seat_diffs``): the holders of the
same seat in the group's other matches; a match without shared cards
compares a seat with the others at its table (``relative_score``).  The
least-squares ``theta`` (with the strengths summing to 0, since only
differences are seen) is one linear solve over all matches at once, so the
order they were played in cannot matter, unlike an online rating update
(openskill's), which gives a different result for every order.

Why not simply the mean score?  In a round robin every bot meets the same
fields and the fit equals the mean score; in a balanced schedule or a
gauntlet the fields differ, and the fit credits a bot for strong company.

Each group contributes its own normal equations (``GroupEquations``), so a
bootstrap over groups (``referee.scoring.intervals``) re-solves by adding up
the resampled groups' small matrices, never the matches again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from referee.scoring.duplicate import GroupMatch, relative_score, seat_diffs

__all__ = ["GroupEquations", "equations", "gauss", "solve"]


@dataclasses.dataclass(frozen=True, slots=True)
class GroupEquations:
    """One group's share of the normal equations, over the bots that played in it.

    ``matrix[(a, b)]`` is sum over rows of x_a x_b, ``vector[a]`` sum of x_a y;
    ``scores[a]`` is bot a's mean score in the group (what the table shows).
    """

    matrix: dict[tuple[int, int], float]
    vector: dict[int, float]
    scores: dict[int, float]


def _rows(group: Sequence[GroupMatch[int]]) -> list[tuple[dict[int, float], float, int]]:
    """(coefficients by bot, observed score, the seat's bot) for every seat of the group."""
    rows: list[tuple[dict[int, float], float, int]] = []
    if len(group) >= 2:
        diffs = seat_diffs(group)
        others = len(group) - 1
        for r, match in enumerate(group):
            for seat, bot in enumerate(match.holders):
                coefficients: dict[int, float] = {bot: 1.0}
                for r2, other in enumerate(group):
                    if r2 != r:
                        holder = other.holders[seat]
                        coefficients[holder] = coefficients.get(holder, 0.0) - 1.0 / others
                rows.append((coefficients, diffs[r][seat], bot))
        return rows
    match = group[0]
    n = len(match.holders)
    for seat, bot in enumerate(match.holders):
        coefficients = {bot: 1.0}
        for s, holder in enumerate(match.holders):
            if s != seat:
                coefficients[holder] = coefficients.get(holder, 0.0) - 1.0 / (n - 1)
        rows.append((coefficients, relative_score(match, seat), bot))
    return rows


def equations(group: Sequence[GroupMatch[int]]) -> GroupEquations:
    """The normal equations and scores of one group (a duplicate group, or one match)."""
    matrix: dict[tuple[int, int], float] = {}
    vector: dict[int, float] = {}
    sums: dict[int, list[float]] = {}
    for coefficients, y, bot in _rows(group):
        for a, xa in coefficients.items():
            if xa == 0.0:
                continue
            vector[a] = vector.get(a, 0.0) + xa * y
            for b, xb in coefficients.items():
                if xb != 0.0:
                    matrix[(a, b)] = matrix.get((a, b), 0.0) + xa * xb
        sums.setdefault(bot, []).append(y)
    scores = {bot: sum(values) / len(values) for bot, values in sums.items()}
    return GroupEquations(matrix, vector, scores)


def solve(
    bots: int, groups: Sequence[GroupEquations], weights: Sequence[int] | None = None
) -> list[float]:
    """The least-squares strengths (summing to 0) of ``groups``, each counted ``weights[i]`` times.

    A bot that played no group gets 0.  The constraint is added as a penalty
    row ``sum(theta) = 0`` of weight 1, which fixes the one free direction
    (adding a constant to every strength) and changes nothing else.
    """
    a = [[1.0] * bots for _ in range(bots)]  # the constraint's row: 1 1 ... 1, squared
    b = [0.0] * bots
    played = [False] * bots
    for index, group in enumerate(groups):
        weight = 1 if weights is None else weights[index]
        if not weight:
            continue
        for (i, j), value in group.matrix.items():
            a[i][j] += weight * value
        for i, value in group.vector.items():
            b[i] += weight * value
            played[i] = True
    # A bot outside every group: its strength is pinned to 0 by a unit row of its own.
    for i in range(bots):
        if not played[i]:
            for j in range(bots):
                a[i][j] = a[j][i] = 0.0
            a[i][i] = 1.0
    return gauss(a, b)


def gauss(a: list[list[float]], b: list[float]) -> list[float]:
    """Solve a x = b by Gaussian elimination with partial pivoting (a small dense system)."""
    n = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[pivot][col]) < 1e-12:
            continue  # a direction the data does not fix (bots never compared): left at 0
        m[col], m[pivot] = m[pivot], m[col]
        lead = m[col][col]
        for r in range(col + 1, n):
            factor = m[r][col] / lead
            if factor:
                row, top = m[r], m[col]
                for c in range(col, n + 1):
                    row[c] -= factor * top[c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        if abs(m[r][r]) < 1e-12:
            continue
        x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x
