"""What the other seats' leads say about their hands, and deals drawn to fit them.

The facts in ``bots.search.knowledge`` are certain (a lead is the lowest card
of its suit, ...).  A lead says more than that, just not for certain: players
lead where their own run is long, where the lead comes back, where a boodle
stack is in reach.  A sampled deal in which a seat's lead looks like a poor
choice for the hand the sample gives it is less likely than one in which it
was that seat's natural lead.

**The model of a lead.**  ``LeadModel.predict`` is the ``boodle`` starter's
lead rule, reproduced exactly from what that seat saw (its hand then, the
cards gone, the stacks, its own chance that a card is dead), ties included.
Given a hand, the seat's lead is

* the predicted one, with probability ``1 - epsilon + epsilon / n``;
* any other of its ``n`` possible leads, with probability ``epsilon / n``.

**How far to trust it: learned per seat.**  When a hand ends every hand is
shown (``hand_ended``), so the bot can replay each seat's leads of that hand
with the cards it really held and count how often the model named the lead it
made (``LeadModel.learn``).  A seat that leads like the starter gets a small
``epsilon`` (its leads then say a lot about its cards); a seat that leads at
random ends near ``epsilon = 1`` and its leads are ignored.  Before any hand
is seen, ``prior_epsilon`` with ``prior_weight`` pseudo-leads.

**Drawing deals that fit** (``DealChain``).  A sharp model makes most random
deals very unlikely, so drawing a few and keeping one by weight (importance
resampling) barely moves.  Instead a Metropolis chain walks over consistent
deals: swap two unseen cards between two places (when both may hold them),
accept with the ratio of the deals' likelihoods.  Its stationary law is the
consistent deals weighted by the likelihood, the posterior the search wants.
The likelihood is a product over seats, so a swap costs the two seats'
factors, and each seat's factor is cached by its hand.

Only leads under the "any suit" rule are read: under the change-of-suit rules
which leads were legal depends on the stops in between, and a wrong set of
legal leads would mislead more than it informs.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from bots.search.playout import (
    LEAD_AGAIN,
    LeadCache,
    boodle_limits,
    dead_chance,
    position_codes,
)
from bots.search.sampler import Dealer
from engine.cards import Card
from engine.rules import LeadSuit, Rules

__all__ = ["DealChain", "LeadModel", "LeadSeen", "Likelihood"]

LeadSeen = tuple[int, Card, int, tuple[int, ...], int, int]
"""(seat, card led, cards played before it this hand, the boodle stacks then,
the cards gone then (played or proven dead, a mask of ``Card`` ints), the dead
hand's size then)."""


class LeadModel:
    """The chance of the leads seen this hand, per seat, and how far each seat is predictable."""

    def __init__(
        self,
        rules: Rules,
        players: int = 8,
        *,
        prior_epsilon: float = 0.3,
        prior_weight: float = 4.0,
        floor: float = 0.03,
    ) -> None:
        self.code, self.boodle_at = position_codes(rules)
        self.limits = boodle_limits(self.boodle_at)
        # The chain replays every lead of the hand for each deal it weighs: remembered by suit.
        self.leads = LeadCache(self.boodle_at, LEAD_AGAIN, self.limits)
        self.applies = rules.lead_suit is LeadSuit.ANY
        self.prior_epsilon = prior_epsilon
        self.prior_weight = prior_weight
        self.floor = floor
        self.agreed = [0] * players
        self.judged = [0] * players

    # -- the starter's rule ------------------------------------------------------------------

    def codes(self, cards: int) -> int:
        """A mask of ``Card`` ints as a mask of engine codes."""
        code = self.code
        out = 0
        while cards:
            low = cards & -cards
            out |= 1 << code[low.bit_length() - 1]
            cards ^= low
        return out

    def predict(self, hand: int, gone: int, stacks: Sequence[int], dead: float) -> tuple[int, int]:
        """The code the ``boodle`` starter leads from ``hand`` (codes), and how many it could."""
        return self.leads.lead(hand, gone, stacks, dead)

    # -- learning how predictable each seat is ------------------------------------------------

    def epsilon(self, seat: int) -> float:
        """The share of ``seat``'s leads taken as random: the prior, then what the hands showed."""
        agreed = self.agreed[seat] + (1.0 - self.prior_epsilon) * self.prior_weight
        judged = self.judged[seat] + self.prior_weight
        # P(agree) = 1 - epsilon + epsilon / n, with about three leads to choose from.
        missed = 1.0 - agreed / judged
        return min(1.0, max(self.floor, missed * 1.5))

    def learn(
        self,
        leads: Sequence[LeadSeen],
        played: Sequence[tuple[int, Card]],
        final: Sequence[Sequence[Card]],
    ) -> None:
        """Replay each lead with the hand the seat really held (``final``: the hands shown)."""
        if not self.applies:
            return
        for seat, card, before, stacks, gone, dead_size in leads:
            if seat >= len(final) or seat >= len(self.agreed):
                continue
            hand = 0
            for held in final[seat]:
                hand |= 1 << held
            for who, later in played[before:]:
                if who == seat:
                    hand |= 1 << later
            code_hand = self.codes(hand)
            dead = _dead_chance(dead_size, code_hand, before, gone)
            predicted, options = self.predict(code_hand, self.codes(gone), stacks, dead)
            if options >= 2:
                self.judged[seat] += 1
                self.agreed[seat] += predicted == self.code[card]

    def likelihood(
        self, leads: Sequence[LeadSeen], played: Sequence[tuple[int, Card]]
    ) -> Likelihood:
        return Likelihood(self, leads, played)


def _dead_chance(dead_size: int, hand: int, before: int, gone: int) -> float:
    """The starter's chance that a card is dead, for a seat holding ``hand`` (codes) when
    ``before`` cards were played and ``gone`` (played or proven dead) were gone."""
    return dead_chance(dead_size, gone.bit_count() - before, hand.bit_count(), before)


class Likelihood:
    """The chance of this hand's leads given a deal: a product of one factor per seat."""

    def __init__(
        self, model: LeadModel, leads: Sequence[LeadSeen], played: Sequence[tuple[int, Card]]
    ) -> None:
        self.model = model
        # Per seat: its leads as (cards it played since, gone, stacks, dead size, before, code led).
        self.leads: dict[int, list[tuple[int, int, tuple[int, ...], int, int, int]]] = {}
        self.epsilon: dict[int, float] = {}
        if not model.applies:
            return
        for seat, card, before, stacks, gone, dead_size in leads:
            since = 0
            for who, later in played[before:]:
                if who == seat:
                    since |= 1 << later
            self.leads.setdefault(seat, []).append(
                (model.codes(since), model.codes(gone), stacks, dead_size, before, model.code[card])
            )
            self.epsilon[seat] = model.epsilon(seat)
        self.cache: dict[tuple[int, int], float] = {}

    def informative(self, seat: int) -> bool:
        return seat in self.leads and self.epsilon[seat] < 1.0

    def factor(self, seat: int, hand: int) -> float:
        """The chance of ``seat``'s leads if it now holds ``hand`` (a mask of codes)."""
        leads = self.leads.get(seat)
        if not leads:
            return 1.0
        key = (seat, hand)
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        epsilon = self.epsilon[seat]
        value = 1.0
        for since, gone, stacks, dead_size, before, led in leads:
            then = hand | since
            dead = _dead_chance(dead_size, then, before, gone)
            predicted, options = self.model.predict(then, gone, stacks, dead)
            if options < 2:
                continue
            share = epsilon / options
            value *= share + (1.0 - epsilon) if predicted == led else share
        self.cache[key] = value
        return value


class DealChain:
    """A Metropolis walk over consistent deals, weighted by the leads' likelihood.

    ``slots`` names each place of the dealer's problem (a seat, or negative for
    the dead hand).  ``draw`` moves the chain on and returns the current deal
    (for each slot, its cards), as ``Dealer.deal`` does.
    """

    def __init__(
        self,
        dealer: Dealer,
        slots: Sequence[int],
        likelihood: Likelihood,
        rng: random.Random,
        *,
        burn_in: int = 200,
        steps: int = 12,
    ) -> None:
        self.dealer = dealer
        self.slots = list(slots)
        self.likelihood = likelihood
        self.steps = steps
        self.forbidden = dealer.forbidden
        dealt = dealer.deal(rng)
        self.cards = [card for cards in dealt for card in cards]
        self.where = {card: slot for slot, cards in enumerate(dealt) for card in cards}
        code = likelihood.model.code
        self.code = code
        self.masks = [sum(1 << code[card] for card in cards) for cards in dealt]
        self.live = [slot >= 0 and likelihood.informative(slot) for slot in self.slots]
        self.factors = [
            likelihood.factor(seat, mask) if live else 1.0
            for seat, mask, live in zip(self.slots, self.masks, self.live, strict=True)
        ]
        self.accepted = self.proposed = 0
        self.walk(rng, burn_in)

    def walk(self, rng: random.Random, steps: int) -> None:
        cards, where, masks, factors = self.cards, self.where, self.masks, self.factors
        forbidden, live, slots, code = self.forbidden, self.live, self.slots, self.code
        factor = self.likelihood.factor
        count = len(cards)
        draw = rng.random
        for _ in range(steps):
            a = cards[int(draw() * count)]
            b = cards[int(draw() * count)]
            sa, sb = where[a], where[b]
            if sa == sb or forbidden[sb] >> a & 1 or forbidden[sa] >> b & 1:
                continue
            self.proposed += 1
            swap = (1 << code[a]) | (1 << code[b])
            new_a, new_b = masks[sa] ^ swap, masks[sb] ^ swap
            fa = factor(slots[sa], new_a) if live[sa] else 1.0
            fb = factor(slots[sb], new_b) if live[sb] else 1.0
            old = factors[sa] * factors[sb]
            if old > 0 and draw() * old >= fa * fb:
                continue
            self.accepted += 1
            where[a], where[b] = sb, sa
            masks[sa], masks[sb] = new_a, new_b
            factors[sa], factors[sb] = fa, fb

    def draw(self, rng: random.Random) -> list[list[int]]:
        """Walk on, then the current deal: for each slot, its cards (``Card`` ints)."""
        self.walk(rng, self.steps)
        dealt: list[list[int]] = [[] for _ in self.slots]
        for card, slot in self.where.items():
            dealt[slot].append(card)
        return dealt
