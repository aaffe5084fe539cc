"""How fast the tables play: full speed while the ranking is in doubt, a trickle once settled.

The scheduler (``referee.server.scheduler``) chooses *which* group shrinks the
leaderboard's uncertainty fastest; this module decides *whether* a new group
starts now.  The rule (docs/server.md, "Pace", says the same):

* The ranking is **settled** when every playing version has a rank interval
  (none is new) and no two neighbours on the leaderboard share more than
  ``settled_overlap`` ranks between their rank intervals (0, the default:
  their intervals are disjoint, so another game cannot change the order).
* While settled, groups start at ``settled_per_minute`` matches a minute in
  all (the maintenance rate: the order is still checked, and a version
  that drifts is found).  Otherwise at **full speed**: as fast as the tables
  play, but never above ``max_per_minute`` if it is set.
* Back to full speed at once when a version arrives (it is new) or an
  interval widens into its neighbour's: the rule is read again before every
  group, from the latest leaderboard.

A group of a table of *n* seats is *n* matches; the pace spaces group starts
so that the matches they hold keep to the rate.  ``settled`` is a pure
function of the scores, tested with simulated results; ``Pace`` keeps the
state and its clock (trio's, so tests run it on a virtual clock).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping, Sequence

from referee.server.scoring import Score

FULL_SPEED = "full speed"
SETTLED = "settled"


@dataclasses.dataclass(frozen=True)
class PaceSettings:
    settled_per_minute: float = 2.0  # matches a minute in all while the ranking is settled
    max_per_minute: float | None = None  # the cap at full speed; None: as fast as tables play
    settled_overlap: int = 0  # ranks two neighbours' rank intervals may share and be settled


@dataclasses.dataclass(frozen=True)
class PaceState:
    state: str  # SETTLED or FULL_SPEED
    why: str  # one line for the status page and the operations log


def settled(scores: Mapping[int, Score], playing: Sequence[int], overlap: int) -> PaceState:
    """Whether the ranking of ``playing`` is settled (see the module doc), and why (not)."""
    if not playing:
        return PaceState(FULL_SPEED, "no version plays yet")
    new = [v for v in playing if v not in scores or scores[v].rank_low is None]
    if new:
        return PaceState(FULL_SPEED, f"v{new[0]} is new (no rank interval yet)")
    ranked = sorted(playing, key=lambda v: scores[v].rank)
    for upper, lower in itertools.pairwise(ranked):
        shared = _shared_ranks(scores[upper], scores[lower])
        if shared > overlap:
            return PaceState(
                FULL_SPEED,
                f"v{upper} and v{lower} share {shared} rank{'s' if shared != 1 else ''} "
                f"(allowed: {overlap})",
            )
    return PaceState(SETTLED, f"no neighbours share more than {overlap} ranks; none new")


def _shared_ranks(a: Score, b: Score) -> int:
    assert a.rank_low is not None and a.rank_high is not None
    assert b.rank_low is not None and b.rank_high is not None
    return max(0, min(a.rank_high, b.rank_high) - max(a.rank_low, b.rank_low) + 1)


class Pace:
    """When the next group may start; the current state, and the changes of it.

    ``clock`` is seconds on a monotonic clock (the server passes trio's);
    ``changed`` is called with each new state (the operations log's line).
    """

    def __init__(
        self,
        settings: PaceSettings,
        clock: Callable[[], float],
        changed: Callable[[PaceState], None] | None = None,
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.changed = changed
        self.state = PaceState(FULL_SPEED, "starting")
        self._next_start: float | None = None  # the earliest the next group may start

    def update(self, scores: Mapping[int, Score], playing: Sequence[int]) -> PaceState:
        """Read the rule again from the latest leaderboard; a new state is reported."""
        state = settled(scores, playing, self.settings.settled_overlap)
        if state.state != self.state.state:
            if state.state == FULL_SPEED:
                self._next_start = None  # a version arrived or an interval widened: at once
            if self.changed is not None:
                self.changed(state)
        self.state = state
        return state

    @property
    def rate(self) -> float | None:
        """Matches a minute allowed now; None: no limit."""
        if self.state.state == SETTLED:
            cap = self.settings.max_per_minute
            rate = self.settings.settled_per_minute
            return rate if cap is None else min(rate, cap)
        return self.settings.max_per_minute

    def wait(self) -> float:
        """Seconds until a group may start (0: now)."""
        if self._next_start is None or self.rate is None:
            return 0.0
        return max(0.0, self._next_start - self.clock())

    def started(self, matches: int) -> None:
        """A group of ``matches`` matches started now: the next waits its share of the rate."""
        rate = self.rate
        if rate is None:
            self._next_start = None
            return
        begin = max(self.clock(), self._next_start or 0.0)
        self._next_start = begin + matches * 60.0 / rate
