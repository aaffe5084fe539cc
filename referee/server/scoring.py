"""The leaderboard's numbers: each version's duplicate chips score with bootstrap intervals.

**The seam.**  ``score_versions`` is the one function the server calls for a
score.  It is not yet the leagues' batch fit of duplicate chips per hand
(``referee.scoring.fit`` and ``intervals.bootstrap``), which landed after it:
moving onto that changes the leaderboard's unit (chips per hand, against the
other holders of the same cards) and needs each match's hands, which the
seats table does not join in.  Today:

* A version's **score** is its mean net chips per match, averaged first
  within each duplicate rotation group (the same deal seed with the seats
  rotated), then across the groups it played in: the cards' luck cancels
  within a group, so the groups are the independent samples.
* Its **score interval** is the 2.5th to 97.5th percentile of that mean over
  ``BOOTSTRAP`` resamples of the groups (with replacement, seeded, so the
  page does not flicker between two refreshes with the same results).
* Its **rank interval** is the 2.5th to 97.5th percentile of its rank among
  the scored versions in the same resamples.

A version with fewer than ``MIN_GROUPS`` groups has no interval yet (shown as
"new"): the scheduler treats it as the most uncertain of all.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections import defaultdict
from collections.abc import Sequence

from referee.scoring.intervals import percentile
from referee.server.store import SeatRow

BOOTSTRAP = 200
MIN_GROUPS = 2
SEED = 20240917


@dataclasses.dataclass(frozen=True)
class Score:
    version: int
    groups: int  # duplicate groups it played in
    matches: int
    score: float | None  # mean net chips per match
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


def score_versions(rows: Sequence[SeatRow], versions: Sequence[int]) -> dict[int, Score]:
    """Scores for ``versions`` from every stored seat (see the module doc)."""
    per_group: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    matches: dict[int, int] = defaultdict(int)
    for row in rows:
        per_group[row.group_id][row.version].append(row.net_chips)
        matches[row.version] += 1
    # Each group as (version, its mean there) pairs: the unit the bootstrap resamples.
    groups = [
        [(version, sum(chips) / len(chips)) for version, chips in members.items()]
        for _gid, members in sorted(per_group.items())
    ]
    counts: dict[int, int] = defaultdict(int)
    sums: dict[int, float] = defaultdict(float)
    for group in groups:
        for version, value in group:
            counts[version] += 1
            sums[version] += value
    point = {v: sums[v] / counts[v] for v in versions if counts[v] > 0}
    scored = [v for v in versions if counts[v] >= MIN_GROUPS]
    samples: dict[int, list[float]] = {v: [] for v in scored}
    ranks: dict[int, list[int]] = {v: [] for v in scored}
    if scored and groups:
        rng = random.Random(SEED)
        wanted = set(scored)
        for _ in range(BOOTSTRAP):
            s_sum: dict[int, float] = defaultdict(float)
            s_count: dict[int, int] = defaultdict(int)
            for _i in range(len(groups)):
                for version, value in groups[rng.randrange(len(groups))]:
                    if version in wanted:
                        s_sum[version] += value
                        s_count[version] += 1
            means = {v: s_sum[v] / s_count[v] for v in scored if s_count[v]}
            order = sorted(means, key=lambda v: -means[v])
            for place, version in enumerate(order, start=1):
                samples[version].append(means[version])
                ranks[version].append(place)
    order = sorted(versions, key=lambda v: (v not in point, -point.get(v, 0.0), v))
    board: dict[int, Score] = {}
    for rank, version in enumerate(order, start=1):
        values = sorted(samples.get(version, []))
        places = sorted(ranks.get(version, []))
        board[version] = Score(
            version=version,
            groups=counts[version],
            matches=matches[version],
            score=point.get(version),
            low=percentile(values, 0.025) if values else None,
            high=percentile(values, 0.975) if values else None,
            rank=rank,
            rank_low=round(percentile(places, 0.025)) if places else None,
            rank_high=round(percentile(places, 0.975)) if places else None,
        )
    return board
