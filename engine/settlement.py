"""What is owed when a hand ends: pure arithmetic on card counts.

Kept apart from the state machine so that the sources' worked examples can be
checked on exactly the code the engine runs, even where the example itself
could not arise in play (seed 003's David holds 3 cards and Stewart and Sharon
5 each: thirteen cards of the one suit left in hand, when a card of it has just
been played).  Who pays what they can, and where chips go, is the state
machine's business (engine/state.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine.rules import BlockedHand, Payment

# Read once a hand: an enum member read through its class costs about 0.3 µs in Python 3.11.
_FLAT = Payment.FLAT


def owed_to_winner(
    cards_held: Iterable[tuple[int, int]], payment: Payment
) -> list[tuple[int, int]]:
    """[(seat, chips owed)] by each other player to the one who went out.

    ``cards_held`` is (seat, cards still held) for every other live player.
    per_card (000/001/003/004): 1 chip per card held; flat (002): 1 chip each.
    """
    if payment is _FLAT:
        return [(seat, 1) for seat, _cards in cards_held]
    return list(cards_held)  # the pairs themselves: a card a chip


def blocked_hand_owed(
    cards_held: Sequence[tuple[int, int]], mode: BlockedHand
) -> tuple[tuple[int, ...], list[tuple[int, int]]]:
    """(winners, [(seat, chips owed)]) when no one can lead.

    ``cards_held`` is (seat, cards still held) for every live player, clockwise
    from the dealer's left.  The fewest cards win; equal fewest share the
    winnings.  fewest_flat (002): every other player owes 1 chip; fewest_difference
    (003): every other player owes the difference between their cards and the
    winners'.  nobody_pays (000/001): no winners, nothing owed.
    """
    if mode is BlockedHand.NOBODY_PAYS or not cards_held:
        return (), []
    fewest = min(cards for _seat, cards in cards_held)
    winners = tuple(seat for seat, cards in cards_held if cards == fewest)
    owed = [
        (seat, 1 if mode is BlockedHand.FEWEST_FLAT else cards - fewest)
        for seat, cards in cards_held
        if cards != fewest
    ]
    return winners, owed
