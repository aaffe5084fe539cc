"""A finished match as plain data, like python-chess's ``Outcome``."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """Final places (1 is best; equal keys share a place) and chips, per seat."""

    places: tuple[int, ...]
    chips: tuple[int, ...]
    hands_played: int
    reason: str  # "players_left" or "hand_limit"
    eliminated: tuple[tuple[int, int], ...]  # (seat, the hand before which it went out), in order
