"""Dividing chips, the one place where a remainder appears.

No source says what to do with a remainder, so the engine decides (SPEC.md,
"Chips"): an amount is divided equally, and the remainder goes one chip each
to the recipients in the order given, which is always clockwise from a named
seat (the left of the eliminated player, or the left of the dealer).
"""

from __future__ import annotations

from collections.abc import Sequence


def divide(amount: int, recipients: Sequence[int]) -> list[tuple[int, int]]:
    """[(seat, share)] for every recipient, shares summing to ``amount``."""
    if not recipients:
        return []
    base, extra = divmod(amount, len(recipients))
    return [(seat, base + (1 if i < extra else 0)) for i, seat in enumerate(recipients)]


def clockwise_from(start: int, seats: Sequence[int], players: int) -> list[int]:
    """``seats`` ordered clockwise, beginning at ``start`` or the first seat after it."""
    return sorted(seats, key=lambda seat: (seat - start) % players)
