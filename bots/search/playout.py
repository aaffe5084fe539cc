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
from engine.state import Match

__all__ = [
    "LEAD_AGAIN",
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
    )

    def __init__(
        self,
        *,
        epsilon: float = 0.1,
        epsilons: Sequence[float] | None = None,
        dead_size: int = 10,
        known_dead: int = 0,
        lead_again: float = LEAD_AGAIN,
    ) -> None:
        self.epsilon = epsilon
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
    hand, played, known = match._hands[seat], match._played, params.known_dead
    gone = played | known
    if not match._lead_any:
        # Under the change-of-suit rules only some suits may be led: the best legal one.
        to_pos = match._to_pos
        dead = dead_chance(
            params.dead_size, params.known_count, hand.bit_count(), played.bit_count()
        )
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
    dead = dead_chance(params.dead_size, params.known_count, hand.bit_count(), played.bit_count())
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
