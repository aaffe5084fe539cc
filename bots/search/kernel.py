"""A lean playout of the rest of one hand, on plain ints and lists, for the lead decisions.

The search scores a lead by playing the rest of the hand out hundreds of
times per decision.  Through the engine each playout costs a rebuilt
``Match`` (``engine.position.build_match``), a clone per candidate, and the
API's checks and event log on every lead; none of that is needed to know who
goes out and who takes which stack.  This module plays the same hand on the
few numbers that decide it:

* ``owner[code]``: who holds each card (a seat, or ``DEAD``), by engine code
  (suit-major, in rank order, so a run climbs code by code);
* each seat's hand as a bit mask of codes, the cards played as a mask;
* the boodle stacks, the kitty and the chips.

It plays exactly the engine's rules for the rest of a hand under the "any
suit" rule (a run follows the next card to whoever holds it; it stops at the
top card, a card already played or a dead one; the last to play leads again;
a boodle card's stack goes at once to whoever plays it; the first seat out
collects what the rules' payment says, and the kitty; a stop on a dead card
shows it to every seat, whose later leads count it gone), and leads with
``bots.search.playout``'s policy, drawing its random numbers in the same
order.  So for the same draws it ends the hand exactly as the engine rollout
does: ``tests/search/test_kernel.py`` holds it to that on many positions.
Anything else (stakes, the dead hand, bids, the change-of-suit rules) stays
with the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bots.search.playout import (
    LeadCache,
    PolicyParams,
    boodle_limits,
    dead_chance,
    position_codes,
)
from engine.cards import Card
from engine.position import Position
from engine.rules import LeadSuit, Rules
from engine.settlement import owed_to_winner

__all__ = ["DEAD", "HandKernel", "Root"]

DEAD = 8
"""The owner of a card in the dead hand."""


class Root:
    """One determinization, ready to play any lead from: copied per playout, never changed."""

    __slots__ = ("chips", "hands", "kitty", "owner", "played", "stacks")

    def __init__(
        self,
        owner: list[int],
        hands: list[int],
        played: int,
        stacks: list[int],
        chips: list[int],
        kitty: int,
    ) -> None:
        self.owner = owner
        self.hands = hands
        self.played = played
        self.stacks = stacks
        self.chips = chips
        self.kitty = kitty


class HandKernel:
    """Plays the rest of a hand from a lead, for one seat's search under fixed rules."""

    def __init__(self, rules: Rules, players: int, live: Sequence[bool]) -> None:
        self.code, self.boodle_at = position_codes(rules)
        boodle_mask = 0
        for card in rules.boodle_cards:
            boodle_mask |= 1 << self.code[card]
        # The cards after which more than "who holds the next card" can happen.
        self.rare_base = boodle_mask | sum(1 << (13 * suit + 12) for suit in range(4))
        self.limits = boodle_limits(self.boodle_at)
        self.leads: LeadCache | None = None  # made by the first playout, for its lead_again
        self.payment = rules.payment
        self.players = players
        self.live = list(live)
        self.live_count = sum(live)

    @staticmethod
    def applies(rules: Rules) -> bool:
        """True where the kernel plays the engine's rules: leads under the any-suit rule."""
        return rules.lead_suit is LeadSuit.ANY

    def load(self, position: Position) -> Root:
        code = self.code
        owner = [DEAD] * 52
        hands = [0] * self.players
        for seat, cards in enumerate(position.hands):
            mask = 0
            for card in cards:
                mask |= 1 << code[card]
                owner[code[card]] = seat
            hands[seat] = mask
        played = 0
        for seat, card in position.played:
            played |= 1 << code[card]
            owner[code[card]] = seat
        return Root(
            owner, hands, played, list(position.boodle), list(position.chips), position.kitty
        )

    def card_code(self, card: Card) -> int:
        return self.code[card]

    def play(
        self,
        root: Root,
        seat: int,
        lead: int,
        viewer: int,
        draw: Callable[[], float],
        params: PolicyParams,
    ) -> float:
        """``seat`` leads the code ``lead``; the hand is played out; ``viewer``'s score.

        The score is ``bots.search.montecarlo.utility``'s: the viewer's chips
        plus an equal share of what is left on the boodle cards and in the kitty.
        """
        owner = root.owner
        hands = root.hands[:]
        stacks = root.stacks[:]
        chips = root.chips[:]
        kitty = root.kitty
        played = root.played
        boodle_at = self.boodle_at
        epsilons = params.epsilons
        known, known_count = params.known_dead, params.known_count
        dead_size, again = params.dead_size, params.lead_again
        shown = params.stops_shown
        sight = params.sight
        dead_mask = 0
        if sight >= 0:
            for card in range(52):
                if owner[card] == DEAD:
                    dead_mask |= 1 << card
        leads = self.leads
        if leads is None or leads.lead_again != again:
            leads = self.leads = LeadCache(boodle_at, again, self.limits)
        starter = leads.lead
        code = lead
        while True:
            # One run from ``code``, led by ``seat``.
            start = code
            rare = (played >> 1) | self.rare_base
            while True:
                hand = hands[seat] ^ (1 << code)
                hands[seat] = hand
                if rare >> code & 1:
                    index = boodle_at[code]
                    if index >= 0 and stacks[index]:
                        chips[seat] += stacks[index]
                        stacks[index] = 0
                    if not hand or code % 13 == 12 or played >> (code + 1) & 1:
                        break
                elif not hand:
                    break
                holder = owner[code + 1]
                if holder == DEAD:
                    # A stop on a dead card shows it to every seat: from now on their
                    # leads count it gone, as the starter's TableState does.
                    if shown and not known >> (code + 1) & 1:
                        known |= 1 << (code + 1)
                        known_count += 1
                    break
                code += 1
                seat = holder
            played |= (2 << code) - (1 << start)
            if not hand:  # ``seat`` played its last card: it goes out
                others = []
                for step in range(1, self.players):
                    other = (seat + step) % self.players
                    if self.live[other]:
                        others.append((other, hands[other].bit_count()))
                for payer, owed in owed_to_winner(others, self.payment):
                    paid = owed if owed <= chips[payer] else chips[payer]
                    chips[payer] -= paid
                    chips[seat] += paid
                chips[seat] += kitty
                return chips[viewer] + sum(stacks) / max(1, self.live_count)
            # The last to play leads again: the policy's lead (playout.policy_lead).
            options = 0
            first = -1
            for suit in range(4):
                if hand >> (13 * suit) & 0x1FFF:
                    options += 1
            if options == 1:
                cards = hand & -hand
                code = cards.bit_length() - 1
                continue
            if draw() < epsilons[seat]:
                pick = int(draw() * options)
                for suit in range(4):
                    cards = hand >> (13 * suit) & 0x1FFF
                    if cards:
                        if pick == 0:
                            first = (cards & -cards).bit_length() - 1 + 13 * suit
                            break
                        pick -= 1
                code = first
                continue
            if seat == sight:
                # This seat sees the whole dead hand (PolicyParams.sight): nothing unseen is dead.
                code, _ = starter(hand, played | known | dead_mask, stacks, 0.0)
                continue
            dead = dead_chance(dead_size, known_count, hand.bit_count(), played.bit_count())
            code, _ = starter(hand, played | known, stacks, dead)
