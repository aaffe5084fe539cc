"""A finished match as plain data, like python-chess's ``Outcome``."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """Final places (1 is best; equal keys share a place) and chips, per seat."""

    places: tuple[int, ...]
    chips: tuple[int, ...]
    starting_chips: tuple[int, ...]  # each seat's chips when the match began
    hands_played: int
    reason: str  # "players_left" or "hand_limit"
    eliminated: tuple[tuple[int, int], ...]  # (seat, the hand before which it went out), in order

    @property
    def net_chips(self) -> tuple[int, ...]:
        """Chips won (or lost, negative) per seat, against each seat's own start."""
        return tuple(
            end - start for end, start in zip(self.chips, self.starting_chips, strict=True)
        )
