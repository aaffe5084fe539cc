"""``newmarket sprt``'s rotation groups played in-process: the engine and policies, no processes.

The same groups, scores and seeds as ``referee/commands/sprt.py``, for the
measurements of ``benchmarks/fidelity.py`` and the tests of bots of known
strength (``referee.scoring.policies``): a group of 4-hand matches costs
milliseconds here instead of seconds over the protocol.  ``Format.layout``
seats the candidates as ``newmarket sprt --layout`` does (``new`` is the
default alternate layout, ``rotate`` one candidate in every seat).
"""

from __future__ import annotations

import dataclasses
import random
import statistics
from collections.abc import Callable

from engine import Match, Rules
from referee.scoring.duplicate import (
    ALTERNATE,
    ROTATE,
    GroupMatch,
    bridge_scores,
    candidate_seats,
    fixed_hands,
    relative_score,
)
from referee.scoring.luck import held_boodle_luck, luck
from referee.scoring.policies import Policy, play_match
from referee.scoring.sequential import ChipsConfig, SprtConfig, group_seed, match_score

__all__ = ["Format", "formats", "group_score"]


@dataclasses.dataclass(frozen=True)
class Format:
    name: str
    rules: Rules
    chips: bool
    duplicate: bool
    luck: bool
    layout: str = ROTATE
    hand_luck: bool = False  # subtract held_boodle_luck at every deal

    def config(self) -> SprtConfig | ChipsConfig:
        return ChipsConfig() if self.chips else SprtConfig()


def formats(base: Rules, hands: int) -> dict[str, Format]:
    fixed = fixed_hands(base, hands)
    return {
        "old": Format("old", base, chips=False, duplicate=True, luck=False),
        "new": Format("new", fixed, chips=True, duplicate=True, luck=False, layout=ALTERNATE),
        "rotate": Format("rotate", fixed, chips=True, duplicate=True, luck=False),
        "hand-luck": Format(
            "hand-luck",
            fixed,
            chips=True,
            duplicate=True,
            luck=False,
            layout=ALTERNATE,
            hand_luck=True,
        ),
        "luck": Format("luck", fixed, chips=True, duplicate=False, luck=True),
        "single": Format("single", fixed, chips=True, duplicate=False, luck=False),
    }


def _summing_hand_luck(total: list[float]) -> Callable[[Match], None]:
    """An ``on_deal`` that adds each seat's ``held_boodle_luck`` of every hand to ``total``."""

    def add(match: Match) -> None:
        dealt = [match.hand_of(seat) for seat in range(match.players)]
        corrections = held_boodle_luck(match.rules.boodle_cards, match.boodle_stacks, dealt)
        for seat, correction in enumerate(corrections):
            total[seat] += correction

    return add


def group_score(
    fmt: Format, candidate: Policy, baseline: Policy, players: int, seed: int, group: int
) -> tuple[float, int]:
    """One rotation group, as ``newmarket sprt`` plays it: (its score, hands played)."""
    matches: list[GroupMatch[int]] = []
    places_scores: list[float] = []
    relative: list[float] = []
    hands = 0
    for index, mine in enumerate(candidate_seats(fmt.layout, players)):
        holders = [1] * players
        for seat in mine:
            holders[seat] = 0
        seats = [candidate if holder == 0 else baseline for holder in holders]
        deal = group_seed(seed, group, None if fmt.duplicate else index)
        # Each seat's own generator, distinct per match as the random bot's is (match id, seat).
        rngs = [random.Random(f"{seed}/{group}/{index}/{s}") for s in range(players)]
        per_hand = [0.0] * players
        on_deal = _summing_hand_luck(per_hand) if fmt.hand_luck else None
        outcome = play_match(fmt.rules, deal, seats, rngs, on_deal).outcome()
        hands += outcome.hands_played
        places_scores.extend(match_score(list(outcome.places), seat) for seat in mine)
        reference: list[float] | None = None
        if fmt.luck:
            reference = list(luck(fmt.rules, players, deal))
        if fmt.hand_luck:
            reference = [a + b for a, b in zip(reference or [0.0] * players, per_hand, strict=True)]
        match = GroupMatch(holders, outcome.net_chips, outcome.hands_played, reference)
        relative.extend(relative_score(match, seat) for seat in mine)
        matches.append(match)
    if not fmt.chips:
        return statistics.fmean(places_scores), hands
    if fmt.duplicate:
        return bridge_scores(matches)[0], hands
    return statistics.fmean(relative), hands
