"""A boodle hunter: steers runs towards the boodle cards it holds.

The idea.  Whoever plays a boodle card takes every chip staked on it, so a
boodle card in your hand is worth chips only if a run reaches it.  A run
climbs one rank at a time and stops at the first card nobody can play, so the
bot leads in the suit of a boodle card it holds, from as close below it as it
can, through cards it holds itself (each card it does not hold might be in the
dead hand and stop the run).

Stakes follow the same idea: low boodle cards are reached more often than
high ones (a run reaching the Ace had to pass the Jack), and chips on a card
that is played change hands this hand, where this bot's steering helps.

Run it with ``python -m bots.starters.boodle``.
"""

from __future__ import annotations

from bots.sdk import Bot, TableState, run
from protocol.messages import Request


def held_boodle(state: TableState) -> list[str]:
    return [card for card in state.hand if state.is_boodle(card)]


class BoodleBot(Bot):
    name = "boodle"
    version = "1.0"

    def lead(self, request: Request, state: TableState) -> str:
        def score(lead: str) -> tuple[float, int]:
            best = 0.0
            for target in held_boodle(state):
                if target[1] != lead[1]:
                    continue
                stack = state.boodle[state.boodle_cards.index(target)]
                if target == lead:  # the lead itself is a boodle card: take it now
                    best = max(best, 11.0 + stack / 100)
                    continue
                # Walk from the lead up to the boodle card.  A card already
                # played or known dead on the way means the run can never get
                # there; each card we do not hold is a chance it stops short.
                between, card = [], state.next_card(lead)
                while card is not None and card != target:
                    between.append(card)
                    card = state.next_card(card)
                if any(state.is_gone(card) for card in between):
                    continue
                missing = sum(card not in state.hand for card in between)
                best = max(best, 10.0 - missing + stack / 100)
            # No boodle card to steer towards: lead the lowest card instead.
            return best, -state.rank(lead)

        return max(request.legal, key=score)

    def stake(self, request: Request, state: TableState) -> list[int]:
        # Half the chips (rounded up) on the lowest-ranked boodle card, the rest
        # spread over the others.  state.rank knows the match's rank order.
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
        # As dealer: with boodle cards in hand, keep them and sell the dead hand
        # at auction if the rules allow it (the winning bid is paid to us).
        # Without any, swap for the unseen dead hand: it may hold some.
        holding = bool(held_boodle(state))
        if holding and "auction" in request.legal:
            return "auction"
        if not holding and "exchange" in request.legal:
            return "exchange"
        if not holding and "buy" in request.legal and sum(state.boodle) > 2 * len(state.boodle):
            return "buy"  # pay the fee only when the boodle stacks are worth it
        return "keep" if "keep" in request.legal else request.legal[0]

    def bid(self, request: Request, state: TableState) -> int:
        # Bid a little for the dead hand when we hold no boodle card.
        low, high = request.min_bid or 0, request.max_bid or 0
        wanted = 0 if held_boodle(state) else 2
        return max(low, min(high, wanted))


if __name__ == "__main__":
    run(BoodleBot())
