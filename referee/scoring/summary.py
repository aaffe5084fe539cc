"""The batch fit's sufficient statistics, kept as results arrive, and the bootstrap over them.

What a group (a duplicate group, or a match alone) adds to the fit's normal
equations (``referee.scoring.fit``) is a matrix ``A_g`` and a vector ``b_g``.
``A_g`` depends only on the group's *layout*, who held which seat in which
match, never on the chips; ``b_g`` carries the results.  Groups whose layouts
give the same ``A_g`` form a *class*: in a round robin one per table, since a
table's full set of rotations gives the same ``A_g`` whatever order its bots
were seated in.  ``FitSummary`` keeps, per class, ``A``, its number of groups
``n`` and the sum and the sum of outer products of its groups' ``b_g``; over
all groups, the sum of ``A`` (in whole numbers: every coefficient is a
multiple of ``1 / (matches - 1)``, or ``1 / (seats - 1)`` for a match alone,
so the sum is exact and the same in any order) and of ``b``.  So:

* the point estimate solves ``sum(A) theta = sum(b)`` as the batch fit does,
  equal to it within float rounding (only the order of the additions differs);
* a result costs one group's update (its class's sums and the totals), the
  same at a million matches as at a thousand;
* the bootstrap draws over classes, not groups (``FitSummary.bootstrap``).

**The bootstrap.**  The batch fit's bootstrap (``referee.scoring.intervals.bootstrap``)
draws ``G`` groups with replacement out of ``G`` and refits.  Split by class,
that is: the number of draws that fall in each class, ``N_c``, is
multinomial(``G``, ``n_c / G``); given ``N_c``, the class adds ``N_c A_c`` to the
matrix and the sum of ``N_c`` draws from its groups' ``b_g`` to the vector.
Here ``N_c`` is drawn from that very multinomial, so the resampled matrix has
exactly the batch bootstrap's distribution, and the sum of the ``N_c`` draws is
drawn from the normal law with its exact mean and covariance given ``N_c``
(``N_c`` times the class's mean and plug-in covariance of ``b_g``).  What is
not equal is only the shape of that sum beyond its first two moments (a
class of one group is exact: its covariance is 0), which fades as ``N_c``
grows; tests/scoring/test_summary.py compares the intervals.

While a league has at most ``EXACT_GROUPS`` groups, the summary also keeps
every group's ``b_g`` and draws the groups themselves, with the batch
bootstrap's generator and seed: the same resamples as the batch fit, so the
same intervals within float rounding.  Beyond that the cost of a resample is
the number of classes, which the schedule bounds (the tables it has), not
the number of matches.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Hashable, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

from referee.scoring.duplicate import GroupMatch, relative_score, seat_diffs
from referee.scoring.fit import gauss
from referee.scoring.intervals import (
    CONFIDENCE,
    Bootstrap,
    default_resamples,
    percentile,
    widening,
)

__all__ = ["EXACT_GROUPS", "FitSummary", "LayoutClass", "solve_many", "summarize"]

EXACT_GROUPS = 2000  # up to this many groups the bootstrap draws groups, as the batch fit does
# Resamples drawn and solved at once in the class bootstrap: bounds its arrays to some MB.
_CHUNK_CELLS = 250_000
# A system whose smallest Cholesky pivot is this small against its largest diagonal entry is
# singular (bots that were never compared): it goes to the batch fit's elimination.
_SINGULAR = 1e-11
_NO_SPREAD = 1e-12  # a class's covariance's eigenvalue this small against its mean square b_g

Array = npt.NDArray[np.floating[Any]]
# (d, the bots with a coefficient, sorted, and A_g d^2 over them, row by row: whole numbers)
ClassKey = tuple[int, tuple[int, ...], tuple[int, ...]]
# (m, the holders of each compared set of seats, each sorted, sorted): all that A_g depends on
Layout = tuple[int, tuple[tuple[int, ...], ...]]


class _Shape(NamedTuple):
    """A class's key and what its key says, computed once per layout."""

    key: ClassKey
    bots: tuple[int, ...]  # with a coefficient (a nonzero diagonal), sorted
    where: dict[int, int]  # bot -> its position in ``bots``


@dataclasses.dataclass(slots=True)
class LayoutClass:
    """The groups that share one ``A_g``, and the sums of their ``b_g``."""

    key: ClassKey
    bots: tuple[int, ...]  # the bots with a coefficient, sorted; the vectors' order
    matrix: tuple[float, ...]  # A_g over ``bots``, row by row
    groups: int = 0
    total: list[float] = dataclasses.field(default_factory=list)  # sum of b_g
    outer: list[float] = dataclasses.field(default_factory=list)  # sum of b_g b_g', row by row


@dataclasses.dataclass(slots=True)
class _Group:
    order: Any  # where the batch fit puts the group in its list (the resamples' indices)
    shape: _Shape
    vector: tuple[float, ...]  # its b_g over its class's bots
    matches: list[GroupMatch[int]] | None  # kept while more of its matches may come


class FitSummary:
    """Every group's share of the fit, summed by class; updated one result at a time.

    ``add`` a match to its group as it arrives (a group's score compares its
    matches with each other, so each new one replaces the group's share), and
    ``close`` the group once it is complete, which drops its matches.
    ``add_group`` adds a complete group at once.  Bots are whole numbers.
    ``exact_groups``: up to how many groups the bootstrap draws groups.
    """

    def __init__(self, exact_groups: int = EXACT_GROUPS) -> None:
        self._exact_groups = exact_groups
        self._classes: dict[ClassKey, LayoutClass] = {}
        # Open groups, and every group while there are at most EXACT_GROUPS.
        self._groups: dict[Hashable, _Group] = {}
        self._count = 0
        self._matches = 0
        self._exact = exact_groups > 0
        # sum of A by d (A's entries are whole numbers over d^2), and sum of b, by bot
        self._pairs: dict[int, dict[tuple[int, int], int]] = {}
        self._vector: dict[int, float] = {}
        self._layouts: dict[Layout, _Shape] = {}

    # ------------------------------------------------------------------ feeding

    @property
    def groups(self) -> int:
        return self._count

    @property
    def matches(self) -> int:
        return self._matches

    @property
    def classes(self) -> int:
        return len(self._classes)

    @property
    def open_groups(self) -> int:
        """Groups whose matches are still kept (more of them may come)."""
        return sum(group.matches is not None for group in self._groups.values())

    @property
    def draws_groups(self) -> bool:
        """Whether the bootstrap draws groups one by one (few groups) or class counts."""
        return self._exact

    def bots(self) -> set[int]:
        """Every bot with a coefficient in some group (the ones the fit does not pin to 0)."""
        return {a for pairs in self._pairs.values() for (a, b) in pairs if a == b}

    def add(self, label: Hashable, match: GroupMatch[int], order: Any = None) -> None:
        """One more match of the group ``label`` (``order``: see ``add_group``; the least kept).

        Close a group only once all of its matches are in: a match for a closed
        group is refused while the summary still keeps its share apart (few
        groups), and later would start a group of its own.
        """
        group = self._groups.get(label)
        if group is None:
            self._new(label, [match], label if order is None else order, keep=True)
            return
        if group.matches is None:
            raise ValueError(f"group {label!r} was closed: its matches are no longer kept")
        matches = [*group.matches, match]
        shape, vector = self._contribution(matches)  # may raise: then nothing has changed
        self._take(group.shape, group.vector, -1)
        group.matches, group.shape, group.vector = matches, shape, vector
        if order is not None and order < group.order:
            group.order = order
        self._take(shape, vector, +1)
        self._matches += 1

    def close(self, label: Hashable) -> None:
        """The group is complete: forget its matches (its share stays)."""
        group = self._groups.get(label)
        if group is None:
            return
        group.matches = None
        if not self._exact:
            del self._groups[label]

    def add_group(
        self, label: Hashable, matches: Sequence[GroupMatch[int]], order: Any = None
    ) -> None:
        """A whole group at once, closed.  ``order`` (default ``label``): the batch fit's
        groups come in this order, which the resamples' draws of groups follow."""
        if label in self._groups:
            raise ValueError(f"group {label!r} is already in the summary")
        self._new(label, list(matches), label if order is None else order, keep=False)

    def _new(
        self, label: Hashable, matches: list[GroupMatch[int]], order: Any, *, keep: bool
    ) -> None:
        shape, vector = self._contribution(matches)
        self._take(shape, vector, +1)
        self._count += 1
        self._matches += len(matches)
        if self._exact and self._count > self._exact_groups:
            self._exact = False  # too many to draw one by one: only the open ones stay
            self._groups = {k: g for k, g in self._groups.items() if g.matches is not None}
        if keep or self._exact:
            self._groups[label] = _Group(order, shape, vector, matches if keep else None)

    def _contribution(self, matches: Sequence[GroupMatch[int]]) -> tuple[_Shape, tuple[float, ...]]:
        """The group's class and its b_g over the class's bots.

        ``b_g[a] = m / (m - 1)`` times the sum of a's diffs (``m`` matches, or
        seats for a match alone): the fit's row coefficients are 1 for the
        holder and ``-1 / (m - 1)`` for those it is compared with, and a
        seat's diffs sum to 0, so the others' terms fold into the holder's.
        """
        if len(matches) >= 2:
            diffs = seat_diffs(matches)
            m = len(matches)
            columns = zip(*(match.holders for match in matches), strict=True)
            layout: Layout = (m, tuple(sorted(tuple(sorted(column)) for column in columns)))
        else:
            match = matches[0]
            m = len(match.holders)
            if m < 2:
                raise ValueError("a match alone needs at least two seats to compare")
            diffs = [[relative_score(match, seat) for seat in range(m)]]
            layout = (m, (tuple(sorted(match.holders)),))
        shape = self._layouts.get(layout)
        if shape is None:
            if len(self._layouts) > 100_000:  # layouts beyond any schedule's: start afresh
                self._layouts.clear()
            shape = self._layouts[layout] = _layout_shape(layout)
        where = shape.where
        sums = [0.0] * len(shape.bots)
        for match, row in zip(matches, diffs, strict=True):
            for bot, diff in zip(match.holders, row, strict=True):
                i = where.get(bot)
                if i is not None:
                    sums[i] += diff
        factor = m / (m - 1)
        return shape, tuple(factor * value for value in sums)

    def _take(self, shape: _Shape, vector: tuple[float, ...], sign: int) -> None:
        """Add (+1) or remove (-1) one group's share."""
        key = shape.key
        cls = self._classes.get(key)
        if cls is None:
            t = len(shape.bots)
            scale = float(key[0] * key[0])
            matrix = tuple(value / scale for value in key[2])
            cls = LayoutClass(key, shape.bots, matrix, 0, [0.0] * t, [0.0] * (t * t))
            self._classes[key] = cls
        t = len(cls.bots)
        cls.groups += sign
        if not cls.groups:
            del self._classes[key]
        else:
            total, outer = cls.total, cls.outer
            for i in range(t):
                vi = sign * vector[i]
                total[i] += vi
                row = i * t
                for j in range(t):
                    outer[row + j] += vi * vector[j]
        d, bots, entries = key
        pairs = self._pairs.setdefault(d, {})
        for i, a in enumerate(bots):
            row = i * t
            for j, b in enumerate(bots):
                value = entries[row + j]
                if value:
                    now = pairs.get((a, b), 0) + sign * value
                    if now:
                        pairs[(a, b)] = now
                    else:
                        del pairs[(a, b)]
        if not pairs:
            del self._pairs[d]
        for bot, share in zip(cls.bots, vector, strict=True):
            self._vector[bot] = self._vector.get(bot, 0.0) + sign * share

    # ------------------------------------------------------------------ fitting

    def strengths(self, bots: Sequence[int]) -> list[float]:
        """The fitted strengths of ``bots`` (every bot that played must be among them)."""
        a, b = self._system(bots)
        return [float(x) for x in solve_many(a, b)[0]]

    def _system(self, bots: Sequence[int]) -> tuple[Array, Array]:
        """The normal equations of all groups, as a stack of one."""
        index = _index(bots, self.bots())
        n = len(bots)
        a = np.ones((n, n))  # the constraint's row: 1 1 ... 1, squared
        for d, pairs in sorted(self._pairs.items()):
            scale = float(d * d)
            for (i, j), value in pairs.items():
                a[index[i], index[j]] += value / scale
        b = np.zeros(n)
        for bot, share in self._vector.items():
            if bot in index:  # else it lost its coefficients (it held one seat throughout)
                b[index[bot]] = share
        played = np.zeros(n, dtype=bool)
        played[[index[bot] for bot in self.bots()]] = True
        return _pin(a[None], b[None], played[None])

    def bootstrap(
        self,
        bots: Sequence[int],
        *,
        resamples: int | None = None,
        seed: int = 0,
        confidence: float = CONFIDENCE,
        ranked: Sequence[int] | None = None,
    ) -> Bootstrap:
        """The fit and its bootstrap, as ``referee.scoring.intervals.bootstrap`` defines them.

        ``bots``: the bot ids to fit, in the order of the output's lists (every
        bot that played must be among them); ``ranked``: positions in that list.
        """
        n = len(bots)
        count = default_resamples(n) if resamples is None else resamples
        strength = self.strengths(bots)
        samples: Array
        # One BLAS thread: OpenBLAS's threads spin waiting for each other, and where the
        # cores are busy (the server's tables, anything else) that made a fit 3-6x slower.
        with threadpool_limits(limits=1, user_api="blas"):
            if not self._count or not count:
                samples = np.zeros((0, n))
            elif self._exact:
                samples = self._group_samples(bots, count, seed)
            else:
                samples = self._class_samples(bots, count, seed)
        return summarize(strength, samples, self._count, confidence=confidence, ranked=ranked)

    def _arrays(self, bots: Sequence[int]) -> _Classes:
        classes = sorted(self._classes.values(), key=lambda c: c.key)
        return _Classes(classes, _index(bots, self.bots()), len(bots))

    def _group_samples(self, bots: Sequence[int], count: int, seed: int) -> Array:
        """The batch bootstrap's own resamples: its generator, its draws of groups."""
        arrays = self._arrays(bots)
        records = sorted(self._groups.values(), key=lambda g: g.order)
        g = len(records)
        position = {cls.key: c for c, cls in enumerate(arrays.classes)}
        of_class = np.array([position[group.shape.key] for group in records])
        vectors = np.zeros((g, arrays.n + 1))
        for row, group in enumerate(records):
            vectors[row, arrays.index[of_class[row], : len(group.vector)]] = group.vector
        to_class = _Scatter(of_class, len(arrays.classes))
        rng = random.Random(seed)
        out = np.empty((count, arrays.n))
        step = max(1, _CHUNK_CELLS // max(g, arrays.width))
        for start in range(0, count, step):
            r = min(step, count - start)
            weights = np.empty((r, g))
            for row in range(r):
                weights[row] = np.bincount(rng.choices(range(g), k=g), minlength=g)
            out[start : start + r] = arrays.solve(to_class.apply(weights), weights @ vectors)
        return out

    def _class_samples(self, bots: Sequence[int], count: int, seed: int) -> Array:
        """Resamples drawn over classes (see the module docstring)."""
        arrays = self._arrays(bots)
        rng = np.random.default_rng(seed)
        sizes = np.array([cls.groups for cls in arrays.classes], dtype=np.float64)
        mean = arrays.total / sizes[:, None]
        second = arrays.outer / sizes[:, None, None]
        spread = _sqrt_psd(
            second - mean[:, :, None] * mean[:, None, :],
            np.trace(second, axis1=1, axis2=2),
        )
        c, k = mean.shape
        # b* of a resample, by class: N_c mean_c + sqrt(N_c) S_c z, z standard normal.
        spread_t = np.swapaxes(spread, 1, 2)
        place = _Scatter(arrays.index.ravel(), arrays.n + 1)
        out = np.empty((count, arrays.n))
        step = max(1, _CHUNK_CELLS // max(c * k, arrays.width))
        for start in range(0, count, step):
            r = min(step, count - start)
            drawn = rng.multinomial(self._count, sizes / sizes.sum(), size=r).astype(np.float64)
            noise = rng.standard_normal((c, r, k))
            values = drawn[:, :, None] * mean[None] + np.sqrt(drawn)[:, :, None] * np.swapaxes(
                noise @ spread_t, 0, 1
            )
            out[start : start + r] = arrays.solve(drawn, place.apply(values.reshape(r, c * k)))
        return out


class _Scatter:
    """Adds up the columns of a matrix into ``size`` places: ``out[:, to[q]] += x[:, q]``.

    A product with a 0/1 matrix while that matrix is small (BLAS does the
    work), else ``bincount``.
    """

    def __init__(self, to: npt.NDArray[np.intp], size: int) -> None:
        self.to, self.size = to, size
        self.dense: Array | None = None
        if len(to) * size <= _CHUNK_CELLS:
            self.dense = np.zeros((len(to), size))
            self.dense[np.arange(len(to)), to] = 1.0

    def apply(self, x: Array) -> Array:
        if self.dense is not None:
            out: Array = x @ self.dense
            return out
        r = x.shape[0]
        flat = (np.arange(r)[:, None] * self.size + self.to[None, :]).ravel()
        summed = np.bincount(flat, weights=x.ravel(), minlength=r * self.size)
        return summed.astype(np.float64, copy=False).reshape(r, self.size)


class _Classes:
    """The classes as arrays over the output's bot positions (``n``: a sink for padding)."""

    def __init__(self, classes: list[LayoutClass], index: dict[int, int], n: int) -> None:
        self.classes = classes
        self.n = n
        c = len(classes)
        k = max((len(cls.bots) for cls in classes), default=1)
        self.index = np.full((c, k), n, dtype=np.intp)
        matrix = np.zeros((c, k, k))
        self.total = np.zeros((c, k))
        self.outer = np.zeros((c, k, k))
        for row, cls in enumerate(classes):
            t = len(cls.bots)
            self.index[row, :t] = [index[bot] for bot in cls.bots]
            matrix[row, :t, :t] = np.reshape(cls.matrix, (t, t))
            self.total[row, :t] = cls.total
            self.outer[row, :t, :t] = np.reshape(cls.outer, (t, t))
        # Each class's A over the pairs of bots that occur in some class: A* = N @ by_pair.
        side = n + 1
        pairs = (self.index[:, :, None] * side + self.index[:, None, :]).reshape(c, k * k)
        occurring, where = np.unique(pairs, return_inverse=True)
        self.by_pair = np.zeros((c, len(occurring)))
        np.add.at(self.by_pair, (np.repeat(np.arange(c), k * k), where.ravel()), matrix.ravel())
        self.place = _Scatter(occurring, side * side)
        self.members = np.zeros((c, side))
        np.put_along_axis(self.members, self.index, 1.0, axis=1)
        self.width = max(len(occurring), side * side)  # the widest row a resample needs

    def solve(self, drawn: Array, vectors: Array) -> Array:
        """Each resample's fit: ``drawn[r, c]`` groups of class c, vector ``vectors[r]``."""
        n, side = self.n, self.n + 1
        a = self.place.apply(drawn @ self.by_pair).reshape(len(drawn), side, side)
        a = a[:, :n, :n] + 1.0  # and the constraint's row
        played = (drawn @ self.members)[:, :n] > 0
        a, b = _pin(a, vectors[:, :n].copy(), played)
        return solve_many(a, b)


def _index(bots: Sequence[int], played: set[int]) -> dict[int, int]:
    index = {bot: i for i, bot in enumerate(bots)}
    if len(index) != len(bots):
        raise ValueError("bots: each bot once")
    missing = played - index.keys()
    if missing:
        raise ValueError(f"bots: {sorted(missing)[:5]} played but are not among the bots fitted")
    return index


def _pin(a: Array, b: Array, played: npt.NDArray[np.bool_]) -> tuple[Array, Array]:
    """A bot that played no group is pinned to 0 by a unit row of its own (as ``fit.solve``)."""
    out = ~played
    if out.any():
        a = np.where(out[:, :, None] | out[:, None, :], 0.0, a)
        r, i = np.nonzero(out)
        a[r, i, i] = 1.0
        b = np.where(out, 0.0, b)
    return a, b


def solve_many(a: Array, b: Array) -> Array:
    """``x[r]`` with ``a[r] x[r] = b[r]``, for symmetric positive semi-definite ``a[r]``.

    A singular one (bots never compared with each other) goes to the batch
    fit's elimination (``referee.scoring.fit.gauss``), which leaves the
    directions the data do not fix at 0, as the batch fit always did.
    """
    count = a.shape[0]
    good = np.zeros(count, dtype=bool)
    try:
        good = _regular(np.linalg.cholesky(a), a)
    except np.linalg.LinAlgError:
        for r in range(count):
            try:
                good[r] = _regular(np.linalg.cholesky(a[r : r + 1]), a[r : r + 1])[0]
            except np.linalg.LinAlgError:
                good[r] = False
    x = np.empty(b.shape)
    if good.any():
        x[good] = np.linalg.solve(a[good], b[good][:, :, None])[:, :, 0]
    for bad in np.nonzero(~good)[0].tolist():
        x[bad] = gauss(a[bad].tolist(), b[bad].tolist())
    return x


def _regular(chol: Array, a: Array) -> npt.NDArray[np.bool_]:
    pivots = np.diagonal(chol, axis1=1, axis2=2) ** 2
    scale = np.diagonal(a, axis1=1, axis2=2).max(axis=1)
    ok: npt.NDArray[np.bool_] = np.all(pivots > _SINGULAR * scale[:, None], axis=1)
    return ok


def _sqrt_psd(cov: Array, scale: Array) -> Array:
    """The symmetric square root of each (positive semi-definite) covariance matrix.

    Not a Cholesky factor: a group's b_g sums to 0, so every covariance is
    singular; and the symmetric root changes continuously with the matrix,
    so sums that differ by float rounding draw the same normals the same way.
    """
    cov = (cov + np.swapaxes(cov, 1, 2)) / 2
    values, vectors = np.linalg.eigh(cov)
    # Directions with no spread (a b_g sums to 0; a class of m groups spans at most m - 1)
    # come out as float noise, whose root would be a million times larger: they are 0.
    # ``scale``: each class's mean square b_g, the size of that noise's source.
    floor = _NO_SPREAD * scale[:, None]
    roots = np.sqrt(np.where(values > floor, values, 0.0))
    spread: Array = (vectors * roots[:, None, :]) @ np.swapaxes(vectors, 1, 2)
    return spread


def _layout_shape(layout: Layout) -> _Shape:
    """A layout's class: its ``A_g`` in whole numbers over ``d^2`` (``d = m - 1``), exactly.

    A row's coefficients times ``d`` are ``m e_h - n``: ``m`` for its holder
    ``h`` less one for each holder of the seats it is compared with, itself
    included (``n`` counts them; a seat in a group is compared with the same
    seat in the other matches, a match alone with the other seats of its
    table).  Summed over the holders of one such set, the products are
    ``m^2 diag(n) - m n n'``: whole numbers, the same in any order.
    """
    m, columns = layout
    entries: dict[tuple[int, int], int] = {}
    for column in columns:
        counts: dict[int, int] = {}
        for holder in column:
            counts[holder] = counts.get(holder, 0) + 1
        for a, na in counts.items():
            entries[(a, a)] = entries.get((a, a), 0) + m * m * na
            for b, nb in counts.items():
                entries[(a, b)] = entries.get((a, b), 0) - m * na * nb
    d = m - 1
    bots = tuple(sorted(a for (a, b), v in entries.items() if a == b and v))
    values = tuple(entries.get((a, b), 0) for a in bots for b in bots)
    return _Shape((d, bots, values), bots, {bot: i for i, bot in enumerate(bots)})


def summarize(
    strength: Sequence[float],
    samples: Array,
    units: int,
    *,
    confidence: float = CONFIDENCE,
    ranked: Sequence[int] | None = None,
) -> Bootstrap:
    """Intervals, rank intervals and LOS from the resamples' fits (``samples[r, bot]``).

    The same arithmetic as ``referee.scoring.intervals.bootstrap``, on arrays:
    given the same resamples it gives the same numbers.
    """
    count, n = samples.shape
    point = np.asarray(strength, dtype=np.float64)
    stretch = widening(units, confidence)
    if stretch != 1.0:  # few groups: see widening; ranks and LOS follow the widened spread
        samples = point[None, :] + stretch * (samples - point[None, :])
    tail = (1 - confidence) / 2
    among = list(range(n)) if ranked is None else list(ranked)
    ranks = np.zeros((count, n), dtype=np.int64)
    if among and count:
        values = samples[:, among]
        ranks[:, among] = 1 + (values[:, None, :] > values[:, :, None]).sum(axis=2)
    point_ranks = [0] * n
    for i in among:
        point_ranks[i] = 1 + sum(point[j] > point[i] for j in among)
    low, high, rank_low, rank_high = [], [], [], []
    ordered = np.sort(samples, axis=0)
    ordered_ranks = np.sort(ranks, axis=0)
    for bot in range(n):
        if count:
            values_of: list[float] = ordered[:, bot].tolist()
            low.append(percentile(values_of, tail))
            high.append(percentile(values_of, 1 - tail))
            ranks_of: list[int] = ordered_ranks[:, bot].tolist()
            rank_low.append(round(percentile(ranks_of, tail)))
            rank_high.append(round(percentile(ranks_of, 1 - tail)))
        else:
            low.append(float(strength[bot]))
            high.append(float(strength[bot]))
            rank_low.append(point_ranks[bot])
            rank_high.append(point_ranks[bot])
    ahead = [[0.5] * n for _ in range(n)]
    if count:
        above = (samples[:, :, None] > samples[:, None, :]).sum(axis=0)
        level = (samples[:, :, None] == samples[:, None, :]).sum(axis=0)
        share = (above + 0.5 * level) / count
        ahead = [[0.5 if a == b else float(share[a, b]) for b in range(n)] for a in range(n)]
    return Bootstrap(list(map(float, strength)), low, high, rank_low, rank_high, ahead, count)
