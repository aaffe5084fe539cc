"""Fast random playouts for search bots: the engine's hot loop without the API's copies.

A Monte Carlo search plays thousands of random continuations per decision.
Through the public API each lead costs a ``legal_actions()`` call and copy.
``random_leads`` picks uniformly among the engine's own list of legal leads
and applies it, so it only ever makes legal plays, and leaves every other
decision (stakes, the dead hand, bids) to the caller, who has a policy for
them::

    from engine.playout import random_leads
    draw = rng.random
    while not match.is_over:
        random_leads(match, draw)          # every lead up to the next other decision
        if not match.is_over:
            match.apply(policy(match))     # a stake, a dead-hand choice or a bid

The match stays a complete ``Match`` (events, chips, outcome): the same
seed and the same draws give exactly the match that ``apply`` with
``legal_actions()[int(draw() * len(legal))]`` would (``tests/engine`` checks
this), so a playout's result is scored as any match's.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.state import _PHASE_LEAD, Match


def random_leads(match: Match, draw: Callable[[], float], *, hands: int | None = None) -> int:
    """Play uniformly random leads until a decision that is not a lead, or the match's end.

    ``draw()`` gives a float in [0, 1), as ``random.Random.random``; each lead
    takes one draw.  With ``hands``, stop as well once that many more hands
    have ended (a search that scores one hand).  Returns the leads played.
    """
    m = match
    apply = m.apply
    stop_at = m._hands_played + hands if hands is not None else -1
    leads = 0
    while m._phase == _PHASE_LEAD:
        legal = m._legal
        apply(legal[int(draw() * len(legal))])
        leads += 1
        if m._hands_played == stop_at:
            break
    return leads


def random_playout(match: Match, draw: Callable[[], float]) -> int:
    """Play the match to its end with every decision uniformly random; returns hands played.

    The same match, for the same draws, as choosing ``legal_actions()[int(draw() * n)]``
    at every decision through the public API (the benchmark's random play).
    """
    start = match._hands_played
    while not match.is_over:
        random_leads(match, draw)
        if match.is_over:
            break
        legal = match.legal_actions()
        match.apply(legal[int(draw() * len(legal))])
    return match._hands_played - start
