"""Two colluders who feed each other chips, as in-process policies (``referee.scoring.policies``).

The giver sees the taker's hand (colluders share their cards over any side
channel: a phone is enough) and leads, of its legal cards, the one whose next
card the taker holds, so that the taker plays on and goes out first; failing
that it leads its shortest run, keeping its cards, each a chip it pays the
taker when the taker goes out.  At a table without the taker it plays the
tracker starter's game, like anybody.  The taker plays the tracker starter's
game.  ``tests/hostile/test_feeding.py`` checks that the collusion statistic
names them, and not an honest pair of the same strengths.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from engine import Match
from engine.cards import Card
from referee.scoring.policies import Policy, _next_card, _run, tracker


def giver(partner_seat: Callable[[Match], int | None]) -> Policy:
    """Feeds the seat ``partner_seat(match)`` names (None: nobody at this table)."""

    honest = tracker()

    def choose(match: Match, seat: int, legal: list[Card], rng: random.Random) -> Card:
        order = match.rules.rank_order
        hand = set(match.hand_of(seat))
        partner = partner_seat(match)
        if partner is not None:
            theirs = set(match.hand_of(partner))
            feeding = []
            for card in legal:
                after = _next_card(_run(card, hand, order)[-1], order)
                if after is not None and after in theirs:
                    feeding.append((len(_run(after, theirs, order)), int(card)))
            if feeding:
                return Card(max(feeding)[1])
        if partner is None:
            return honest(match, seat, legal, rng)
        # Keep the cards: each one held is a chip paid to the taker when it goes out.
        return min(legal, key=lambda card: (len(_run(card, hand, order)), int(card)))

    return choose


def taker(partner_seat: Callable[[Match], int | None]) -> Policy:
    """Plays the tracker's game, but never leads into the giver's runs: the giver keeps its
    cards, each a chip it pays when the taker goes out."""
    honest = tracker()

    def choose(match: Match, seat: int, legal: list[Card], rng: random.Random) -> Card:
        partner = partner_seat(match)
        if partner is None:
            return honest(match, seat, legal, rng)
        order = match.rules.rank_order
        hand = set(match.hand_of(seat))
        theirs = set(match.hand_of(partner))
        sparing = []
        for card in legal:
            after = _next_card(_run(card, hand, order)[-1], order)
            if after is None or after not in theirs:
                sparing.append(card)
        return honest(match, seat, sparing or legal, rng)

    return choose
