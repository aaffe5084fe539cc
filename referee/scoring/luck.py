"""The luck of a deal: what a fixed reference policy wins with the same cards.

The referee replays the match's seed in-process with every seat played by
``REFERENCE`` (``referee.scoring.policies``): the same first dealer and the
same deal of every hand (a deal depends only on the seed, the hand number
and who is still in), with no bot and no bot CPU.  A seat's *luck* is the
net chips the reference won there.  Subtracting it from a bot's own net
chips leaves, mostly, what the bot did with its cards (AIVAT's idea, with
the simplest control variate: a whole replay).

Unbiased: the luck depends only on the rules and the seed, never on the
bots, and with a seed-drawn first dealer every seat's expected luck is the
same, so subtracting it changes no comparison between seats in
expectation; it only removes variance, as much as the reference's results
track the bots'.

In the fixed-hands format the replay deals exactly the real match's cards
(nobody is eliminated in either); in elimination sessions the deals part
ways once the two lose different players, and the correction weakens but
stays unbiased.  A duplicate group's matches share their seed, so the luck
is computed once per group (cached) and cancels exactly in the bridge
score: it earns its CPU where the cards are not shared.
"""

from __future__ import annotations

import functools

from engine import Rules
from referee.scoring.policies import REFERENCE, play_match

__all__ = ["luck"]


@functools.lru_cache(maxsize=256)
def luck(rules: Rules, players: int, seed: int) -> tuple[int, ...]:
    """Each seat's net chips when the reference policy plays every seat of (rules, seed)."""
    match = play_match(rules, seed, [REFERENCE] * players)
    return match.outcome().net_chips
