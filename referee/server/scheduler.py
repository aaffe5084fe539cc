"""Which table plays next: the rule that shrinks the leaderboard's uncertainty fastest.

Every table is a **duplicate rotation group**: one deal seed played once per
rotation of the seats, so each version holds every seat's cards once and the
deal's luck cancels (``referee.match.key.rotations``).  The rule, in
order (docs/server.md says the same):

1. **Who needs games.**  Among the playing versions (each participant's
   newest admitted one, plus the house bots), the *focus* is the one with the
   widest score interval; a version with no interval yet (new: fewer than
   two groups) is widest of all, so a new version plays at once and keeps
   playing until its interval exists.  Ties go to the version with fewer
   groups, then to the seeded random draw.
2. **Who it should meet.**  The other seats go to the versions nearest the
   focus on the leaderboard (by score; an unscored version counts as
   nearest), with a random jitter of a quarter of the median interval width
   so that the same close neighbours meet most, but not only each other.
   Close neighbours are where a game changes the ranking most.
3. **Shares.**  A participant who held more than ``max_share`` of the seats
   of the last ``SHARE_WINDOW`` groups is not seated while enough others can
   fill the table (house bots are exempt: they are the organiser's).
4. **Too few versions.**  If fewer playing versions than seats exist, no
   table is played; the status page says so.
5. **Remote bots** (versions that connect from their owner's machine) sit only
   at the server's remote table, and only while connected: a local table's
   candidates leave them out, and the remote table's focus is the connected
   remote version with the widest interval (``focus_from``), its other seats
   chosen by rule 2 among everyone.
6. **Fair tables.**  Two versions of one owner never share a table, nor two
   versions of accounts the organiser linked (``Candidate.household``): the
   next nearest takes the seat, and with too few households no table is played.

The choice is a pure function of the scores, the recent seats and a seeded
generator, so it is tested without a server.
"""

from __future__ import annotations

import dataclasses
import math
import random
import statistics
from collections import Counter
from collections.abc import Collection, Mapping, Sequence

from referee.server.scoring import Score

SHARE_WINDOW = 20  # groups


@dataclasses.dataclass(frozen=True)
class Candidate:
    version: int
    participant: int
    house: bool = False
    linked: int | None = None  # the household of linked accounts (contest_db.households)

    @property
    def household(self) -> int:
        """Who must not meet itself at a table: the participant, or its linked accounts."""
        return self.participant if self.linked is None else self.linked


@dataclasses.dataclass(frozen=True)
class TableChoice:
    versions: tuple[int, ...]
    why: str


def choose_table(
    candidates: Sequence[Candidate],
    scores: Mapping[int, Score],
    recent_seats: Sequence[int],
    players: int,
    max_share: float,
    rng: random.Random,
    focus_from: Collection[int] | None = None,
) -> TableChoice | None:
    """The next group's table (before rotation), or None if too few versions can play.

    ``recent_seats`` is the participant of every seat of the last groups, oldest first.
    ``focus_from``, if given, are the versions the focus must be one of (rule 5).
    """
    if len(candidates) < players:
        return None
    allowed = _within_shares(candidates, recent_seats, players, max_share)
    draw = {c.version: rng.random() for c in allowed}
    focusable = [c for c in allowed if focus_from is None or c.version in focus_from]
    if not focusable:
        return None
    focus = max(focusable, key=lambda c: (_width(scores, c), -_groups(scores, c), draw[c.version]))
    others = _nearest(focus, allowed, scores, players - 1, rng)
    if len(others) < players - 1:
        return None  # rule 6: too few households to fill a table
    table = [focus, *others]
    width = _width(scores, focus)
    reason = "new version" if not math.isfinite(width) else f"widest interval ({width:.1f})"
    return TableChoice(tuple(c.version for c in table), f"focus v{focus.version}: {reason}")


def _within_shares(
    candidates: Sequence[Candidate], recent_seats: Sequence[int], players: int, max_share: float
) -> list[Candidate]:
    """Rule 3: the candidates whose participant is within its share of the recent seats."""
    held = Counter(recent_seats)
    total = max(1, len(recent_seats))
    over = {
        c.version
        for c in candidates
        if not c.house and len(recent_seats) >= players and held[c.participant] / total > max_share
    }
    allowed = [c for c in candidates if c.version not in over]
    if len(allowed) < players:
        allowed = list(candidates)  # shares cannot be kept with so few: everyone plays
    return allowed


def _nearest(
    focus: Candidate,
    allowed: Sequence[Candidate],
    scores: Mapping[int, Score],
    count: int,
    rng: random.Random,
) -> list[Candidate]:
    """Rule 2: the ``count`` versions nearest the focus by score, with a random jitter."""
    finite = [_width(scores, c) for c in allowed if math.isfinite(_width(scores, c))]
    jitter = statistics.median(finite) / 4 if finite else 1.0
    centre = _point(scores, focus)

    def distance(c: Candidate) -> float:
        value = _point(scores, c)
        gap = 0.0 if value is None or centre is None else abs(value - centre)
        return gap + rng.uniform(0, jitter)

    chosen: list[Candidate] = []
    seated = {focus.household}
    for candidate in sorted((c for c in allowed if c is not focus), key=distance):
        if len(chosen) == count:
            break
        if candidate.household not in seated:  # rule 6
            chosen.append(candidate)
            seated.add(candidate.household)
    return chosen


def _width(scores: Mapping[int, Score], c: Candidate) -> float:
    score = scores.get(c.version)
    return math.inf if score is None else score.width


def _groups(scores: Mapping[int, Score], c: Candidate) -> int:
    score = scores.get(c.version)
    return 0 if score is None else score.groups


def _point(scores: Mapping[int, Score], c: Candidate) -> float | None:
    score = scores.get(c.version)
    return None if score is None else score.score
