"""A card tracker: remembers played and dead cards, and leads runs that come back to it.

The idea.  After a stop, the player who played the last card leads again.  So
the best lead is a run that (1) stays in our hand as long as possible (we hold
each next card) and (2) ends at a card we know stops the run: the top card,
a card whose successor was already played, or one whose successor is known to
be in the dead hand.  Then we shed all those cards and lead again.

What can be known about the dead hand?  Every stop with cause "dead" names a
card that is in it, and a dealer who swapped knows its old hand is the dead
hand now.  The SDK keeps both in ``state.known_dead``; ``state.unseen()`` is
every card whose place we do not know.  The rest of the dead hand is hidden,
so a card we do not hold is dead with probability (dead cards not yet known)
/ (unseen cards).

Run it with ``python -m bots.starters.tracker``.
"""

from __future__ import annotations

from bots.sdk import Bot, TableState, run
from protocol.messages import Request


def chance_dead(state: TableState) -> float:
    """The chance that a card whose place we do not know is in the dead hand."""
    hidden_dead = max(0, state.dead_hand_size - len(state.known_dead))
    return hidden_dead / max(1, len(state.unseen()))


def connected(state: TableState) -> int:
    """How many of our cards lead on to another of ours or stop a run for certain."""
    return sum(
        state.next_card(card) in state.hand or state.stops_after(card) for card in state.hand
    )


class TrackerBot(Bot):
    name = "tracker"
    version = "1.0"

    def lead(self, request: Request, state: TableState) -> str:
        dead = chance_dead(state)

        def score(card: str) -> tuple[float, int]:
            # The cards we would play in a row from this lead.
            mine = state.my_run(card)
            # Do we get the lead back?  Certainly if the run stops after our
            # last card; otherwise only if the next card is in the dead hand.
            comes_back = 1.0 if state.stops_after(mine[-1]) else dead
            # Cards shed now, plus the value of leading again (worth about two
            # cards).  Ties: the lower card, which is harder to get rid of.
            return len(mine) + 2.0 * comes_back, -state.rank(card)

        return max(request.legal, key=score)

    def dead_hand(self, request: Request, state: TableState) -> str:
        # A poorly connected hand rarely keeps the lead: swap it if the swap is
        # free.  A well connected one is worth keeping, and then the dead hand
        # can be sold at auction to a rival (the winning bid is paid to us).
        poor = 3 * connected(state) < len(state.hand)
        if poor and "exchange" in request.legal:
            return "exchange"
        if not poor and "auction" in request.legal:
            return "auction"
        return "keep" if "keep" in request.legal else request.legal[0]

    def bid(self, request: Request, state: TableState) -> int:
        # Offer one chip for the dead hand when ours is poorly connected.
        low, high = request.min_bid or 0, request.max_bid or 0
        wanted = 1 if 3 * connected(state) < len(state.hand) else 0
        return max(low, min(high, wanted))


if __name__ == "__main__":
    run(TrackerBot())
