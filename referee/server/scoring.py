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
"new"): the scheduler treats it as the most uncertain of all.

The fit is kept as results arrive (``Leaderboard``, over
``referee.scoring.summary.FitSummary``): a new result updates its group's
share, and the bootstrap draws over the summaries, so a leaderboard costs
about the same after a million matches as after a thousand.  It still runs
in a worker thread (``competition``), once per new result.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

from referee.scoring.duplicate import GroupMatch, forfeit_nets
from referee.scoring.intervals import default_resamples
from referee.scoring.summary import FitSummary
from referee.server.competition_db import PlayedMatch

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


@dataclasses.dataclass
class _OpenGroup:
    """A group whose rotations are not all in yet: its deals' labels and who it counted."""

    labels: set[tuple[int, int]] = dataclasses.field(default_factory=set)
    counted: set[int] = dataclasses.field(default_factory=set)
    seen: int = 0


class Leaderboard:
    """Every finished match's share of the fit, added one at a time (``add``).

    A fit group is a group's deal: its rotations that share the deal seed (at
    a remote table, where each rotation has its own, each rotation alone).
    Once all of a group's rotations are in (one per seat), its matches are
    forgotten and only its share stays.
    """

    def __init__(self) -> None:
        self.fit = FitSummary()
        self.matches = 0
        self._seen: set[int] = set()  # every version that sat at a finished match
        self._groups: dict[int, int] = defaultdict(int)  # version -> groups it played in
        self._played: dict[int, int] = defaultdict(int)  # version -> matches
        self._open: dict[int, _OpenGroup] = {}

    def add(self, match: PlayedMatch) -> None:
        nets = [float(net) for net in match.net_chips]
        if match.disqualified:  # the default policy's chips are not the version's
            nets = forfeit_nets(nets, match.disqualified)
        label = (match.group_id, match.seed)
        self.fit.add(label, GroupMatch(list(match.versions), nets, match.hands))
        self.matches += 1
        versions = set(match.versions)
        self._seen |= versions
        for version in versions:
            self._played[version] += 1
        group = self._open.setdefault(match.group_id, _OpenGroup())
        for version in versions - group.counted:
            self._groups[version] += 1
        group.counted |= versions
        group.labels.add(label)
        group.seen += 1
        if group.seen >= len(match.versions):  # every rotation is in: nothing more can come
            for done in group.labels:
                self.fit.close(done)
            del self._open[match.group_id]

    def extend(self, played: Iterable[PlayedMatch]) -> None:
        for match in played:
            self.add(match)

    def scores(self, versions: Sequence[int]) -> dict[int, Score]:
        """Scores for ``versions`` from every match added so far (see the module doc)."""
        everyone = sorted(self._seen | set(versions))
        index = {version: i for i, version in enumerate(everyone)}
        groups, matches = self._groups, self._played
        # Rank intervals among the versions that have one: a new version's rank is still noise.
        ranked = [index[v] for v in versions if groups.get(v, 0) >= MIN_GROUPS]
        resamples = min(BOOTSTRAP, default_resamples(len(everyone)))
        fitted = (
            self.fit.bootstrap(everyone, resamples=resamples, seed=SEED, ranked=ranked)
            if self.fit.groups
            else None
        )
        point = {v: fitted.strength[index[v]] for v in versions if fitted and groups.get(v)}
        order = sorted(versions, key=lambda v: (v not in point, -point.get(v, 0.0), v))
        board: dict[int, Score] = {}
        for rank, version in enumerate(order, start=1):
            # The bootstrap's intervals, for a version with enough groups to have them.
            sure = fitted if groups.get(version, 0) >= MIN_GROUPS else None
            i = index[version]
            board[version] = Score(
                version=version,
                groups=groups.get(version, 0),
                matches=matches.get(version, 0),
                score=point.get(version),
                low=sure.low[i] if sure else None,
                high=sure.high[i] if sure else None,
                rank=rank,
                rank_low=sure.rank_low[i] if sure else None,
                rank_high=sure.rank_high[i] if sure else None,
            )
        return board


def score_versions(played: Sequence[PlayedMatch], versions: Sequence[int]) -> dict[int, Score]:
    """Scores for ``versions`` from every finished match (see the module doc)."""
    board = Leaderboard()
    board.extend(played)
    return board.scores(versions)
