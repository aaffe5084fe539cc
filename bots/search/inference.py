"""What the other seats' leads say about their hands: a weight for each sampled deal.

The facts in ``bots.search.knowledge`` are certain (a lead is the lowest card
of its suit, ...).  A lead says more than that, just not for certain: players
lead where their own run is long, where the lead comes back, where a boodle
stack is in reach, the way the ``boodle`` starter and the playout policy do.
A sampled deal in which a seat's lead looks like a poor choice for the hand
the sample gives it is less likely than one in which it was that seat's best.

So each sampled deal gets a likelihood: per lead by another seat this hand,
rebuild that seat's hand at the time (its sampled cards plus those it played
since) and ask the playout policy which lead it would have made there.  The
lead is

* the policy's choice, with probability ``1 - epsilon + epsilon / n``;
* any other of the ``n`` possible leads, with probability ``epsilon / n``

(``epsilon`` allows for players who do not lead like the policy at all).  The
bot draws several deals and keeps one in proportion to its weight (sampling
importance resampling), so the search plays out deals that fit how the table
actually played.

Only leads under the "any suit" rule are read: under the change-of-suit rules
which leads were legal depends on the stops in between, and a wrong set of
legal leads would mislead more than it informs.
"""

from __future__ import annotations

from collections.abc import Sequence

from bots.search.playout import LEAD_AGAIN, lead_value
from engine.cards import Card, Rank
from engine.rules import LeadSuit, Rules

__all__ = ["LeadModel"]

LeadSeen = tuple[int, Card, int, tuple[int, ...]]
"""(seat, card led, cards played before it this hand, the boodle stacks then)."""


class LeadModel:
    """The likelihood of the leads seen this hand, for one sampled deal."""

    def __init__(self, rules: Rules, *, epsilon: float = 0.3, dead: float = 0.25) -> None:
        order = rules.rank_order
        # The engine's codes: suit-major, in rank order, so runs climb code by code.
        self.code = tuple((card // 13) * 13 + order.position(Rank(card % 13)) for card in range(52))
        self.boodle_at = [-1] * 52
        for index, card in enumerate(rules.boodle_cards):
            self.boodle_at[self.code[card]] = index
        self.applies = rules.lead_suit is LeadSuit.ANY
        self.epsilon = epsilon
        self.dead = dead

    def weight(
        self,
        leads: Sequence[LeadSeen],
        played: Sequence[tuple[int, Card]],
        hands: Sequence[Sequence[Card]],
    ) -> float:
        """The chance of ``leads`` if the other seats hold ``hands`` (unnormalized)."""
        if not self.applies or not leads:
            return 1.0
        code = self.code
        weight = 1.0
        for seat, card, before, stacks in leads:
            hand = 0
            for held in hands[seat]:
                hand |= 1 << code[held]
            for who, later in played[before:]:
                if who == seat:
                    hand |= 1 << code[later]
            options = [
                (hand >> (13 * suit) & 0x1FFF & -(hand >> (13 * suit) & 0x1FFF)).bit_length()
                - 1
                + 13 * suit
                for suit in range(4)
                if hand >> (13 * suit) & 0x1FFF
            ]
            if len(options) < 2:
                continue
            gone = 0
            for _who, earlier in played[:before]:
                gone |= 1 << code[earlier]
            stack_list = list(stacks)
            best, best_value = -1, -1e9
            for option in options:
                value = lead_value(
                    option, hand, gone, stack_list, self.boodle_at, self.dead, LEAD_AGAIN
                )
                if value > best_value:
                    best, best_value = option, value
            share = self.epsilon / len(options)
            weight *= share + (1.0 - self.epsilon) if best == code[card] else share
        return weight
