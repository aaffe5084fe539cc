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

**Per hand** (``held_boodle_luck``): AIVAT's chance correction at each deal,
with the cheapest value function there is.  In a duplicate group the deals
are shared, but the boodle stacks a hand starts with are not once the
rotations have played differently (chips nobody won carry over), so who
holds the card with a larger stack in one rotation than in the other is
luck that duplicate scoring leaves in.  A seat's correction for a hand is
the chips on the boodle cards it was dealt minus what it would hold on
average, ``stacks x cards held / 52``: every card is equally likely in
every position of a uniform deal, so the mean over deals is exact, and
since the deal is drawn independently of the stacks (they are set before
it), the correction has mean 0 whatever the bots do.  Measured in
docs/fidelity.md (``benchmarks/fidelity_variance.py chance``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from engine import Card, Rules
from referee.scoring.policies import REFERENCE, play_match

__all__ = ["held_boodle_luck", "luck"]

_PACK = 52


@functools.lru_cache(maxsize=256)
def luck(rules: Rules, players: int, seed: int) -> tuple[int, ...]:
    """Each seat's net chips when the reference policy plays every seat of (rules, seed)."""
    match = play_match(rules, seed, [REFERENCE] * players)
    return match.outcome().net_chips


def held_boodle_luck(
    boodle_cards: Sequence[Card], stacks: Sequence[int], hands: Sequence[Sequence[Card]]
) -> list[float]:
    """Per seat: the chips on the boodle cards it was dealt, minus their mean over deals.

    ``stacks[i]`` is the chips on ``boodle_cards[i]`` when the hand is dealt
    (after the stakes), ``hands[s]`` the cards dealt to seat s (before any
    dead-hand exchange, which is a choice, not chance).  A card is in a hand
    of ``k`` cards with probability ``k / 52`` in a uniform deal, so the
    correction's mean over deals is exactly 0.
    """
    if len(stacks) != len(boodle_cards):
        raise ValueError(
            f"held_boodle_luck: {len(stacks)} stacks for {len(boodle_cards)} boodle cards"
        )
    on_card = dict(zip(boodle_cards, stacks, strict=True))
    total = sum(stacks)
    return [
        sum(on_card.get(card, 0) for card in hand) - total * len(hand) / _PACK for hand in hands
    ]
