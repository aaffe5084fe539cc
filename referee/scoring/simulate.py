"""``newmarket sprt``'s rotation groups played in-process: the engine and policies, no processes.

The same groups, scores and seeds as ``referee/commands/sprt.py``, for the
measurements of ``benchmarks/fidelity.py`` and the tests of bots of known
strength (``referee.scoring.policies``): a group of four 16-hand matches
costs milliseconds here instead of seconds over the protocol.
"""

from __future__ import annotations

import dataclasses
import random
import statistics

from engine import Rules
from referee.scoring.duplicate import GroupMatch, fixed_hands, relative_score, seat_diffs
from referee.scoring.luck import luck
from referee.scoring.policies import Policy, play_match
from referee.sprt import ChipsConfig, SprtConfig, group_seed, match_score

__all__ = ["Format", "formats", "group_score"]


@dataclasses.dataclass(frozen=True)
class Format:
    name: str
    rules: Rules
    chips: bool
    duplicate: bool
    luck: bool

    def config(self) -> SprtConfig | ChipsConfig:
        return ChipsConfig() if self.chips else SprtConfig()


def formats(base: Rules, hands: int) -> dict[str, Format]:
    fixed = fixed_hands(base, hands)
    return {
        "old": Format("old", base, chips=False, duplicate=True, luck=False),
        "new": Format("new", fixed, chips=True, duplicate=True, luck=False),
        "luck": Format("luck", fixed, chips=True, duplicate=False, luck=True),
        "single": Format("single", fixed, chips=True, duplicate=False, luck=False),
    }


def group_score(
    fmt: Format, candidate: Policy, baseline: Policy, players: int, seed: int, group: int
) -> tuple[float, int]:
    """One rotation group, as ``newmarket sprt`` plays it: (its score, hands played)."""
    matches: list[GroupMatch[int]] = []
    places_scores = []
    hands = 0
    for seat in range(players):
        seats = [baseline] * players
        seats[seat] = candidate
        deal = group_seed(seed, group, None if fmt.duplicate else seat)
        # Each seat's own generator, distinct per match as the random bot's is (match id, seat).
        rngs = [random.Random(f"{seed}/{group}/{seat}/{s}") for s in range(players)]
        outcome = play_match(fmt.rules, deal, seats, rngs).outcome()
        hands += outcome.hands_played
        places_scores.append(match_score(list(outcome.places), seat))
        holders = [1] * players
        holders[seat] = 0
        reference = luck(fmt.rules, players, deal) if fmt.luck else None
        matches.append(GroupMatch(holders, outcome.net_chips, outcome.hands_played, reference))
    if not fmt.chips:
        return statistics.fmean(places_scores), hands
    if fmt.duplicate:
        diffs = seat_diffs(matches)
        return statistics.fmean(diffs[seat][seat] for seat in range(players)), hands
    return statistics.fmean(relative_score(m, seat) for seat, m in enumerate(matches)), hands
