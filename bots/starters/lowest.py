"""A bot that always leads its lowest card: the shortest useful bot.

The idea.  A run only climbs, so a low card can leave your hand only when you
lead it or when a run happens to pass through it.  A high card is the other
way round: other players' runs carry the play up to it, and the top card of a
suit (the Ace, or the King with aces low) always stops the run, which gives
you the next lead.  So lead low cards while you can and keep high cards to
stop runs later.

Is it good?  Try it: in a league it loses to ``random``.  A low lead starts a
long climb through the other players' cards, and whoever plays the card
before the stop leads next, rarely us.  ``tracker`` shows the better idea:
lead runs that stay in your own hand and come back to you.  What this bot
is good for is showing how little a complete bot needs.

It overrides one method, ``lead``.  Every other decision (stakes, the dead
hand, bids) uses the SDK's default, which is the request's own ``default``:
legal in every preset.  Run it with ``python -m bots.starters.lowest``.
"""

from __future__ import annotations

from bots.sdk import Bot, TableState, run
from protocol.messages import Request


class LowestBot(Bot):
    name = "lowest"
    version = "1.0"

    def lead(self, request: Request, state: TableState) -> str:
        # request.legal holds the cards you may lead, one per suit you may lead.
        # state.rank(card) is a card's place in its suit, 0 for the lowest; it
        # follows the match's rank order, so the Ace counts low under aces_low.
        # Between equal ranks, prefer the suit where we hold more cards: the
        # run may come back through them.
        def key(card: str) -> tuple[int, int]:
            return state.rank(card), -len(state.suit_of_hand(card[1]))

        return min(request.legal, key=key)


if __name__ == "__main__":
    run(LowestBot())
