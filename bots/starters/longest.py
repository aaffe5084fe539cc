"""A bot that leads from its longest suit, and trades away a hand with no long suit.

The idea.  You win a hand by playing all your cards first, and cards leave
your hand fastest in runs.  The suit where you hold the most cards is where
you are most likely to hold the next card too, so a run you start there tends
to stay with you.  A hand with no long suit is poor for this, so as dealer
the bot swaps it for the dead hand when the swap is free.

Run it with ``python -m bots.starters.longest``.
"""

from __future__ import annotations

from bots.sdk import SUITS, Bot, TableState, run
from protocol.messages import Request


def longest_suit_length(state: TableState) -> int:
    """How many cards we hold in our longest suit (state.hand is our own hand)."""
    return max((len(state.suit_of_hand(suit)) for suit in SUITS), default=0)


class LongestBot(Bot):
    name = "longest"
    version = "1.0"

    def lead(self, request: Request, state: TableState) -> str:
        # Each legal lead is the lowest card we hold in its suit, so choosing
        # a card is choosing a suit.  Rank the suits by how many cards we hold
        # there; break ties by leading the lower card.
        def key(card: str) -> tuple[int, int]:
            return -len(state.suit_of_hand(card[1])), state.rank(card)

        return min(request.legal, key=key)

    def dead_hand(self, request: Request, state: TableState) -> str:
        # Asked only of the dealer, after seeing their own hand.  The dead hand
        # is unseen, so it is as good as an average hand.  Swap ours for it when
        # ours has no suit longer than an average one and the swap costs
        # nothing ("exchange"); a paid swap ("buy") is not worth it for an
        # average hand, so otherwise keep the default (it is always legal).
        average = len(state.hand) / 4
        if "exchange" in request.legal and longest_suit_length(state) <= average + 1:
            return "exchange"
        return super().dead_hand(request, state)


if __name__ == "__main__":
    run(LongestBot())
