"""Multiplayer ratings: openskill's Plackett-Luce model over each match's finishing order.

Elo rates pairs; a Newmarket match is a finishing order of 3 to 8 seats, and
Plackett-Luce is a model of exactly that (Weng and Lin, 2011).  Each bot's
skill is a Gaussian (``mu``, ``sigma``); standings sort by the conservative
estimate ``mu - 3 * sigma``, so a bot that has played little does not top
the table on luck.

The updates are sequential, so the order of matches changes the numbers.
They are always fed in schedule order, never in the order the matches
happened to finish: parallel tables, a resume, or ``newmarket standings``
halfway through then all agree with an uninterrupted run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

from openskill.models import PlackettLuce

# openskill's defaults (mu 25, sigma 25/3); the conservative estimate takes 3 sigmas.
MU = 25.0
SIGMA = 25.0 / 3.0
Z = 3.0


@dataclasses.dataclass(frozen=True, slots=True)
class Rating:
    mu: float
    sigma: float

    @property
    def conservative(self) -> float:
        """The skill the bot has with high confidence: ``mu - 3 sigma``."""
        return self.mu - Z * self.sigma


def rate(
    bots: Sequence[str],
    matches: Iterable[tuple[Sequence[str], Sequence[int]]],
    start: Mapping[str, Rating] | None = None,
) -> dict[str, Rating]:
    """Ratings after ``matches``: (the names at seats 0..k-1, their places; 1 is best, ties shared).

    Every bot in ``bots`` gets a rating, the prior if it never played.  ``start``:
    the ratings after the matches before these (a rating is its mu and sigma alone,
    so going on from them gives what rating every match in one go gives).
    """
    model = PlackettLuce(mu=MU, sigma=SIGMA)
    before = start or {}
    ratings = {
        name: model.rating(
            mu=before[name].mu if name in before else MU,
            sigma=before[name].sigma if name in before else SIGMA,
            name=name,
        )
        for name in bots
    }
    for names, places in matches:
        teams = [[ratings[name]] for name in names]
        updated = model.rate(teams, ranks=[float(place) for place in places])
        for name, team in zip(names, updated, strict=True):
            ratings[name] = team[0]
    return {name: Rating(r.mu, r.sigma) for name, r in ratings.items()}
