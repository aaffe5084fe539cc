"""The leaderboard's numbers: the leagues' batch fit of duplicate chips per hand, with intervals.

The same score as ``newmarket standings`` (docs/fidelity.md section 4), so a
competition's leaderboard and a league's table mean the same thing:

* Within a **duplicate group** (one deal seed played once per rotation of the
  seats), each seat's chips per hand are compared with what the group's other
  holders of the same cards won (bridge scoring,
  ``referee.scoring.duplicate.seat_diffs``).  A match whose deal nobody else
  played (a remote table deals each rotation its own seed) compares each seat
  with the others at its table instead.
* A version's **score** is its fitted strength in chips per hand above the
  average version that has played: one least-squares solve over every match
  (``referee.scoring.fit``).  Why a fit and not a mean: the scheduler seats
  close neighbours on the leaderboard together, so a strong version mostly
  meets strong ones; a mean over its groups would pull it towards the middle,
  while the fit credits it for its company, and the order in which the matches
  were played cannot matter.
* Its **score interval** and **rank interval** are the 2.5th and 97.5th
  percentiles over ``BOOTSTRAP`` resamples of the groups (fewer with many
  versions: ``default_resamples``), each refitted
  (``referee.scoring.intervals.bootstrap``; seeded, so the page does not
  flicker between two refreshes with the same results).  Ranks are among the
  versions asked for (the admitted ones); older versions stay in the fit as
  opponents.

A version with fewer than ``MIN_GROUPS`` groups has no interval yet (shown as
"new"): the scheduler treats it as the most uncertain of all.  The fit is a
dense solve per resample, so it runs in a worker thread (``competition``),
once per new result.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Sequence

from referee.scoring.duplicate import GroupMatch, forfeit_nets
from referee.scoring.fit import GroupEquations, equations
from referee.scoring.intervals import bootstrap, default_resamples
from referee.server.store import PlayedMatch

BOOTSTRAP = 200
MIN_GROUPS = 2
SEED = 20240917


@dataclasses.dataclass(frozen=True)
class Score:
    version: int
    groups: int  # duplicate groups it played in
    matches: int
    score: float | None  # fitted chips per hand above the average version
    low: float | None
    high: float | None
    rank: int  # 1 is best; by score, unscored versions last
    rank_low: int | None
    rank_high: int | None

    @property
    def width(self) -> float:
        """The interval's width; infinite while the version is new."""
        if self.low is None or self.high is None:
            return math.inf
        return self.high - self.low

    def to_json(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def _groups(played: Sequence[PlayedMatch], index: dict[int, int]) -> list[list[GroupMatch[int]]]:
    """The fit's groups: the matches of a group that share its deal seed; any other match alone."""
    by_deal: dict[tuple[int, int], list[GroupMatch[int]]] = defaultdict(list)
    for match in played:
        holders = [index[version] for version in match.versions]
        nets = [float(net) for net in match.net_chips]
        if match.disqualified:  # the default policy's chips are not the version's
            nets = forfeit_nets(nets, match.disqualified)
        by_deal[(match.group_id, match.seed)].append(GroupMatch(holders, nets, match.hands))
    return [matches for _deal, matches in sorted(by_deal.items())]


def score_versions(played: Sequence[PlayedMatch], versions: Sequence[int]) -> dict[int, Score]:
    """Scores for ``versions`` from every finished match (see the module doc)."""
    everyone = sorted({v for match in played for v in match.versions} | set(versions))
    index = {version: i for i, version in enumerate(everyone)}
    group_equations: list[GroupEquations] = [equations(group) for group in _groups(played, index)]
    groups: dict[int, set[int]] = defaultdict(set)
    matches: dict[int, int] = defaultdict(int)
    for match in played:
        for version in set(match.versions):
            groups[version].add(match.group_id)
            matches[version] += 1
    # Rank intervals among the versions that have one: a new version's rank is still noise.
    ranked = [index[v] for v in versions if len(groups[v]) >= MIN_GROUPS]
    resamples = min(BOOTSTRAP, default_resamples(len(everyone)))
    fitted = (
        bootstrap(len(everyone), group_equations, resamples=resamples, seed=SEED, ranked=ranked)
        if group_equations
        else None
    )
    point = {v: fitted.strength[index[v]] for v in versions if fitted and groups[v]}
    order = sorted(versions, key=lambda v: (v not in point, -point.get(v, 0.0), v))
    board: dict[int, Score] = {}
    for rank, version in enumerate(order, start=1):
        # The bootstrap's intervals, for a version with enough groups to have them.
        sure = fitted if len(groups[version]) >= MIN_GROUPS else None
        i = index[version]
        board[version] = Score(
            version=version,
            groups=len(groups[version]),
            matches=matches[version],
            score=point.get(version),
            low=sure.low[i] if sure else None,
            high=sure.high[i] if sure else None,
            rank=rank,
            rank_low=sure.rank_low[i] if sure else None,
            rank_high=sure.rank_high[i] if sure else None,
        )
    return board
