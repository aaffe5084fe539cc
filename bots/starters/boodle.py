"""A boodle hunter: tracker's runs, plus the chips on the boodle cards they reach.

Read ``tracker`` first: this bot scores a lead the same way (cards shed now,
and the chance to lead again) and adds what ``tracker`` ignores, the chips
staked on the boodle cards.  Whoever plays a boodle card takes every chip on
it at once, and unclaimed stacks carry over and grow, so a boodle card is
often worth more than the whole rest of a hand.  Three terms, all in chips:

1. **Chips the run takes for certain.**  The cards of our own run are played
   by us whatever happens, so the stacks on boodle cards among them are ours.
2. **Chips the run may reach.**  After our run, play goes on through other
   players' cards; a boodle card of ours higher in the suit is reached only if
   none of the cards in between is in the dead hand (or played already: then
   never).  Each unknown card in between is dead with the chance ``tracker``
   computes, so the stack counts in proportion to the chance that the run
   gets there.
3. **Chips the run may give away.**  The same walk up the suit passes boodle
   cards we do not hold and that are not gone: each is in a rival's hand
   unless it is dead, so if the run gets there, its stack goes to a rival.
   It counts against the lead with the same chance.

In 300 duplicate groups against three copies of ``tracker`` (every seat in
turn, the same deals) terms 1 and 2 alone gain +1.33 chips per hand, all
three +1.68: not feeding a rival's stack matters as much as reaching yours.

Stakes, the dead hand and bids follow the same idea: with boodle cards in
hand keep them; without, swap for the unseen dead hand when that is free.

Run it with ``python -m bots.starters.boodle``.
"""

from __future__ import annotations

from bots.sdk import Bot, TableState, run
from bots.starters.tracker import chance_dead, connected
from protocol.messages import Request

LEAD_AGAIN = 2.0
"""A lead that comes back to us is worth about two cards (tracker's figure)."""


def stack_on(state: TableState, card: str) -> int:
    """The chips staked on ``card`` (0 if it is not a boodle card)."""
    if card not in state.boodle_cards:
        return 0
    return state.boodle[state.boodle_cards.index(card)]


def chips_in_reach(state: TableState, last: str, dead: float) -> tuple[float, float]:
    """Expected chips won (on our boodle cards) and given away (rivals') above ``last``.

    Walk up the suit from ``last``, the end of our run: every card we do not
    hold may be dead and stop the run there (if it is not, a rival holds it);
    one already played or known dead stops it for sure.
    """
    won, given, reach = 0.0, 0.0, 1.0
    card = state.next_card(last)
    while card is not None and not state.is_gone(card):
        if card in state.hand:
            won += reach * stack_on(state, card)
        else:
            reach *= 1.0 - dead  # the run gets here only if this card is not dead
            given += reach * stack_on(state, card)
        card = state.next_card(card)
    return won, given


class BoodleBot(Bot):
    name = "boodle"
    version = "2.0"

    def lead(self, request: Request, state: TableState) -> str:
        dead = chance_dead(state)

        def score(card: str) -> tuple[float, int]:
            mine = state.my_run(card)  # what we certainly play
            stops = state.stops_after(mine[-1])
            comes_back = 1.0 if stops else dead
            taken = sum(stack_on(state, played) for played in mine)  # term 1
            # Terms 2 and 3 only if the run can go on past our last card at all.
            won, given = (0.0, 0.0) if stops else chips_in_reach(state, mine[-1], dead)
            value = len(mine) + LEAD_AGAIN * comes_back + taken + won - given
            return value, -state.rank(card)  # ties: the lower card, harder to shed

        return max(request.legal, key=score)

    def stake(self, request: Request, state: TableState) -> list[int]:
        # Free stakes are placed before the deal, so no card is ours yet.  Half
        # on the lowest boodle card (a run reaching the Ace had to pass the
        # Jack, so low cards are played, and their stacks won, more often; our
        # leads steer to them), the rest spread over the others.
        cards = request.boodle_cards or []
        total = request.stake_total or 0
        amounts = [0] * len(cards)
        order = sorted(range(len(cards)), key=lambda index: state.rank(cards[index]))
        amounts[order[0]] = (total + 1) // 2
        others = order[1:] or order
        for chip in range(total - amounts[order[0]]):
            amounts[others[chip % len(others)]] += 1
        return amounts

    def dead_hand(self, request: Request, state: TableState) -> str:
        # As dealer.  Boodle cards in hand are worth keeping, and so is a well
        # connected hand (tracker's test); then sell the dead hand if we may.
        # Otherwise swap for the unseen dead hand when the swap is free, or pay
        # the fee when the stacks are big enough to be worth a new hand.
        holding = any(state.is_boodle(card) for card in state.hand)
        poor = 3 * connected(state) < len(state.hand)
        if (holding or not poor) and "auction" in request.legal:
            return "auction"
        if not holding and poor and "exchange" in request.legal:
            return "exchange"
        if not holding and "buy" in request.legal and sum(state.boodle) > 3 * len(state.boodle):
            return "buy"
        return "keep" if "keep" in request.legal else request.legal[0]

    def bid(self, request: Request, state: TableState) -> int:
        # Bid for the dead hand only with no boodle card and a poor hand.
        low, high = request.min_bid or 0, request.max_bid or 0
        holding = any(state.is_boodle(card) for card in state.hand)
        wanted = 2 if not holding and 3 * connected(state) < len(state.hand) else 0
        return max(low, min(high, wanted))


if __name__ == "__main__":
    run(BoodleBot())
