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
from typing import Any

from engine.actions import Bid, DeadHandChoice, Decision, Stakes
from engine.state import Match

__all__ = ["LEAD_AGAIN", "PolicyParams", "lead_value", "lead_view", "policy_lead", "rollout"]

LEAD_AGAIN = 2.0
"""Leading again is worth about two cards shed (tracker's figure)."""
ROLLOUT_BID_CAP = 3
"""Bids in a playout: 0 .. ROLLOUT_BID_CAP - 1 chips, at random."""


class PolicyParams:
    """The playout policy's knobs (plain attributes, set once per decision)."""

    __slots__ = ("dead", "epsilon", "lead_again")

    def __init__(
        self, *, dead: float = 0.25, epsilon: float = 0.1, lead_again: float = LEAD_AGAIN
    ) -> None:
        self.dead = dead
        self.epsilon = epsilon
        self.lead_again = lead_again


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
    played: int,
    stacks: list[int],
    boodle_at: list[int],
    dead: float,
    lead_again: float,
) -> float:
    """The policy's value of leading the card with engine code ``code`` (see the module)."""
    value = 0.0
    card = code
    while True:  # our own run: played by us for certain
        index = boodle_at[card]
        if index >= 0:
            value += stacks[index]
        if card % 13 == 12 or not hand >> (card + 1) & 1:
            break
        card += 1
    value += card - code + 1
    if card % 13 == 12 or played >> (card + 1) & 1:
        return value + lead_again  # a certain stop on our own card: we lead again
    value += lead_again * dead
    reach = 1.0
    card += 1
    while True:  # beyond our run: each card we do not hold may be dead and stop it
        if played >> card & 1:
            break
        index = boodle_at[card]
        if hand >> card & 1:
            if index >= 0:
                value += reach * stacks[index]
        else:
            reach *= 1.0 - dead
            if index >= 0:
                value -= reach * stacks[index]
        if card % 13 == 12:
            break
        card += 1
    return value


def policy_lead(match: Match, draw: Any, params: PolicyParams) -> Any:
    """The lead the policy makes for the seat to act (an engine ``Card``)."""
    hand, played, stacks, boodle_at, to_pos, legal = lead_view(match)
    if len(legal) == 1:
        return legal[0]
    if draw() < params.epsilon:
        return legal[int(draw() * len(legal))]
    best, best_value = legal[0], -1e9
    dead, again = params.dead, params.lead_again
    for card in legal:  # sorted by code: ties keep the lower card
        value = lead_value(to_pos[card], hand, played, stacks, boodle_at, dead, again)
        if value > best_value:
            best, best_value = card, value
    return best


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
