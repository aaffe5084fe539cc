"""The playout policy: how every seat leads in a simulated hand, cheaply and far better than random.

A determinized search is only as good as its playouts.  With uniformly random
leads a playout says little about a choice: real players (the starters, and
anyone who has read them) lead runs that come back to them and steer to the
boodle stacks, and a hand played at random goes somewhere else.  So every
seat in a playout leads the way the ``boodle`` starter does
(``bots/starters/boodle.py``, where the idea is explained in words):

    value = own run length + LEAD_AGAIN x (chance to lead again)
            + stacks on boodle cards in the run
            + stacks on own boodle cards above it x chance the run gets there
            - stacks on rivals' boodle cards above it x chance the run gets there

Each seat sees only its own hand and the cards played (no peeking at the
sampled hands), and a card it does not hold is dead with the fixed chance
``dead`` (the searching seat's estimate at the root).  With probability
``epsilon`` a lead is random instead, so that playouts of one sample still
differ and a plan that only works against exactly this policy is not
overrated.

Speed.  This runs for every lead of every playout, tens of thousands of times
per decision, so it works on the engine's own bit masks: ``lead_view`` is the
one place that reads ``engine.state.Match``'s private fields (the hand masks,
the played mask and the boodle stacks), and ``tests/search`` checks it against
the public API, so a change of the engine's layout fails a test rather than
the bot.  In the engine's card codes a suit is 13 consecutive codes in rank
order (under either rank order) and the top card is code % 13 == 12.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from engine.actions import Bid, DeadHandChoice, Decision, Stakes
from engine.cards import Rank
from engine.rules import Rules
from engine.state import Match

__all__ = [
    "LEAD_AGAIN",
    "LeadCache",
    "PolicyParams",
    "boodle_limits",
    "dead_chance",
    "lead_value",
    "lead_view",
    "policy_lead",
    "rollout",
    "starter_lead",
]

LEAD_AGAIN = 2.0
"""Leading again is worth about two cards shed (tracker's figure)."""
ROLLOUT_BID_CAP = 3
"""Bids in a playout: 0 .. ROLLOUT_BID_CAP - 1 chips, at random."""


class PolicyParams:
    """The playout policy's knobs (plain attributes, set once per decision).

    ``dead_size`` is the dead hand's size and ``known_dead`` the cards (a mask
    of engine codes) proven dead at the root: with them each seat works out
    its own chance that an unseen card is dead at each lead, as the starter
    does.  ``epsilons`` gives each seat its own share of random leads (the
    search uses what it learned of each seat); otherwise ``epsilon`` for all.
    """

    __slots__ = (
        "dead_size",
        "epsilon",
        "epsilons",
        "known_count",
        "known_dead",
        "lead_again",
        "limits",
        "sight",
        "stops_shown",
    )

    def __init__(
        self,
        *,
        epsilon: float = 0.1,
        epsilons: Sequence[float] | None = None,
        dead_size: int = 10,
        known_dead: int = 0,
        lead_again: float = LEAD_AGAIN,
        stops_shown: bool = True,
        sight: int = -1,
    ) -> None:
        self.epsilon = epsilon
        # A seat (-1: none) whose leads in the playout count the whole dead hand of the
        # determinization gone: a clairvoyant bound on what our own later leads could make
        # of what the stops reveal (the search's ``later_sight``; measurements only).
        self.sight = sight
        # A stop on a dead card in the playout shows it to every seat (as the starter
        # counts it); False forgets it, as the playouts did before (for comparisons).
        self.stops_shown = stops_shown
        self.epsilons = tuple(epsilons) if epsilons is not None else (epsilon,) * 8
        self.dead_size = dead_size
        self.known_dead = known_dead
        self.known_count = known_dead.bit_count()
        self.lead_again = lead_again
        self.limits: tuple[int, ...] | None = None  # boodle_limits, kept by the first playout


def lead_view(match: Match) -> tuple[int, int, list[int], list[int], tuple[int, ...], list[Any]]:
    """The leader's hand mask, the played mask, the stacks, the code's boodle index, the
    card-to-code table and the legal leads (engine ``Card``s), read from the engine's fields."""
    return (
        match._hands[match._to_act],
        match._played,
        match._stacks,
        match._boodle_at,
        match._to_pos,
        match._legal,
    )


def lead_value(
    code: int,
    hand: int,
    gone: int,
    stacks: Sequence[int],
    boodle_at: Sequence[int],
    dead: float,
    lead_again: float,
    limits: Sequence[int] | None = None,
) -> float:
    """The starter's value of leading the card with engine code ``code`` (see the module).

    ``gone`` holds the cards played or known dead.  The same sums in the same
    order as ``BoodleBot.lead``, so equal values come out equal here too.
    ``limits`` (``boodle_limits``) lets the walk past our run stop at the
    suit's highest boodle card: beyond it every term is zero.
    """
    card = code
    taken = 0
    while True:  # our own run: played by us for certain
        index = boodle_at[card]
        if index >= 0:
            taken += stacks[index]
        if card % 13 == 12 or not hand >> (card + 1) & 1:
            break
        card += 1
    if card % 13 == 12 or gone >> (card + 1) & 1:
        return (card - code + 1) + lead_again * 1.0 + taken + 0.0 - 0.0  # we lead again
    won = given = 0.0
    last = limits[card // 13] if limits is not None else card - card % 13 + 12
    if last <= card:
        return (card - code + 1) + lead_again * dead + taken + won - given
    reach = 1.0
    nxt = card + 1
    while not gone >> nxt & 1:  # beyond our run: each card we do not hold may be dead
        index = boodle_at[nxt]
        stack = stacks[index] if index >= 0 else 0
        if hand >> nxt & 1:
            won += reach * stack
        else:
            reach *= 1.0 - dead
            given += reach * stack
        if nxt == last:
            break
        nxt += 1
    return (card - code + 1) + lead_again * dead + taken + won - given


def position_codes(rules: Rules) -> tuple[tuple[int, ...], list[int]]:
    """The engine's code of each card (suit-major, in rank order, so runs climb code by code),
    and, by code, the index of each boodle card among ``rules.boodle_cards`` (-1: none)."""
    order = rules.rank_order
    code = tuple((card // 13) * 13 + order.position(Rank(card % 13)) for card in range(52))
    boodle_at = [-1] * 52
    for index, card in enumerate(rules.boodle_cards):
        boodle_at[code[card]] = index
    return code, boodle_at


def boodle_limits(boodle_at: Sequence[int]) -> tuple[int, ...]:
    """Per suit, the code of its highest boodle card (below the suit: none)."""
    limits = []
    for suit in range(4):
        codes = [code for code in range(13 * suit, 13 * suit + 13) if boodle_at[code] >= 0]
        limits.append(max(codes) if codes else 13 * suit - 1)
    return tuple(limits)


def starter_lead(
    hand: int,
    gone: int,
    stacks: Sequence[int],
    boodle_at: Sequence[int],
    dead: float,
    lead_again: float = LEAD_AGAIN,
    limits: Sequence[int] | None = None,
) -> tuple[int, int]:
    """The code the ``boodle`` starter leads from ``hand`` (engine codes), and how many leads
    it had (any-suit rule): the highest value, then the lower rank, then the first suit."""
    best, best_key = -1, (-1e18, 0)
    options = 0
    for suit in range(4):
        cards = hand >> (13 * suit) & 0x1FFF
        if not cards:
            continue
        options += 1
        start = (cards & -cards).bit_length() - 1 + 13 * suit
        value = lead_value(start, hand, gone, stacks, boodle_at, dead, lead_again, limits)
        key = (value, -(start % 13))
        if key > best_key:
            best, best_key = start, key
    return best, options


class LeadCache:
    """``starter_lead`` with every suit's lead value remembered: the same leads, far fewer sums.

    A lead's value (``lead_value``) depends only on its own suit: our cards of
    it, the cards of it gone, the stacks on its boodle cards, and the chance
    that a card is dead.  Thousands of playouts of one decision (and the deal
    chain's replays of the other seats' leads) meet the same few suit
    patterns again and again, so a dictionary keyed on them answers most
    look-ups without the walk.  One cache per decision and rule set (it is
    cleared when it grows past ``LIMIT`` entries); the values are the very
    floats ``lead_value`` returns, so the leads are exactly ``starter_lead``'s.
    """

    LIMIT = 1 << 18

    __slots__ = ("boodle_at", "by_dead", "lead_again", "limits", "size", "suits")

    def __init__(
        self,
        boodle_at: Sequence[int],
        lead_again: float = LEAD_AGAIN,
        limits: Sequence[int] | None = None,
    ) -> None:
        self.boodle_at = boodle_at
        self.lead_again = lead_again
        self.limits = tuple(limits) if limits is not None else boodle_limits(boodle_at)
        # Per suit: its number, its first code, and the stacks (boodle indices) its values read.
        self.suits = tuple(
            (
                suit,
                13 * suit,
                tuple(boodle_at[c] for c in range(13 * suit, 13 * suit + 13) if boodle_at[c] >= 0),
            )
            for suit in range(4)
        )
        # Per chance that a card is dead (a handful of values per decision): a table keyed
        # by the suit, our cards of it, its cards gone and its stacks, packed in one int.
        self.by_dead: dict[float, dict[int, float]] = {}
        self.size = 0

    def lead(self, hand: int, gone: int, stacks: Sequence[int], dead: float) -> tuple[int, int]:
        """``starter_lead(hand, gone, stacks, boodle_at, dead, lead_again, limits)``."""
        table = self.by_dead.get(dead)
        if table is None:
            if self.size > self.LIMIT:
                self.by_dead.clear()
                self.size = 0
            table = self.by_dead[dead] = {}
        best, best_value, best_rank = -1, -1e18, 0
        options = 0
        for suit, shift, boodle in self.suits:
            cards = hand >> shift & 0x1FFF
            if not cards:
                continue
            options += 1
            key = (cards | (gone >> shift & 0x1FFF) << 13) << 2 | suit
            cacheable = True
            for place, index in enumerate(boodle):
                stack = stacks[index]
                if stack >> 20:
                    cacheable = False  # too big to pack (never in play): computed every time
                key |= stack << (28 + 20 * place)
            value = table.get(key) if cacheable else None
            rank = (cards & -cards).bit_length() - 1
            if value is None:
                value = lead_value(
                    shift + rank,
                    hand,
                    gone,
                    stacks,
                    self.boodle_at,
                    dead,
                    self.lead_again,
                    self.limits,
                )
                if cacheable:
                    table[key] = value
                    self.size += 1
            # The highest value; ties to the lower rank, then the first suit (starter_lead).
            if value > best_value or (value == best_value and rank < best_rank):
                best, best_value, best_rank = shift + rank, value, rank
        return best, options


def dead_chance(dead_size: int, known: int, held: int, played: int) -> float:
    """A seat's chance that a card it has not seen is dead (``tracker.chance_dead``):
    the dead cards not yet proven over the cards whose place it does not know
    (counts: ``known`` proven dead, ``held`` in its hand, ``played``)."""
    return max(0, dead_size - known) / max(1, 52 - held - played - known)


def policy_lead(match: Match, draw: Any, params: PolicyParams) -> Any:
    """The lead the policy makes for the seat to act (an engine ``Card``)."""
    legal = match._legal
    if len(legal) == 1:
        return legal[0]
    seat = match._to_act
    if draw() < params.epsilons[seat]:
        return legal[int(draw() * len(legal))]
    hand, played = match._hands[seat], match._played
    # The dead cards known at the root, and those the playout's stops have shown since.
    known = params.known_dead | (match._dead_shown_by_stops() if params.stops_shown else 0)
    if seat == params.sight:
        known |= match._dead  # this seat sees the determinization's whole dead hand
    known_count = known.bit_count()
    gone = played | known
    if not match._lead_any:
        # Under the change-of-suit rules only some suits may be led: the best legal one.
        to_pos = match._to_pos
        dead = dead_chance(params.dead_size, known_count, hand.bit_count(), played.bit_count())
        return max(
            legal,
            key=lambda card: (
                lead_value(
                    to_pos[card],
                    hand,
                    gone,
                    match._stacks,
                    match._boodle_at,
                    dead,
                    params.lead_again,
                ),
                -(to_pos[card] % 13),
            ),
        )
    dead = dead_chance(params.dead_size, known_count, hand.bit_count(), played.bit_count())
    boodle_at = match._boodle_at
    limits = params.limits
    if limits is None:
        limits = params.limits = boodle_limits(boodle_at)
    code, _ = starter_lead(hand, gone, match._stacks, boodle_at, dead, params.lead_again, limits)
    return match._to_card[code]


def rollout(match: Match, rng: random.Random, stake: Stakes, params: PolicyParams | None) -> None:
    """Play on to the end of the match (the search's match ends with the hand).

    Leads by the policy (``params``), or uniformly at random when ``params`` is
    None; stakes even, the dead hand kept, small random bids.
    """
    draw = rng.random
    while not match.is_over:
        decision = match.decision
        if decision is Decision.LEAD:
            if params is None:
                legal = match.legal_actions()
                match.apply(legal[int(draw() * len(legal))])
            else:
                match.apply(policy_lead(match, draw, params))
        elif decision is Decision.STAKE:
            match.apply(stake)
        elif decision is Decision.DEAD_HAND:
            match.apply(DeadHandChoice.KEEP)
        else:
            seat = match.current_seat()
            assert seat is not None
            match.apply(Bid(min(match.chips[seat], int(draw() * ROLLOUT_BID_CAP))))
