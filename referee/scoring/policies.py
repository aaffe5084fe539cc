"""In-process policies: the luck reference, and bots of known strength for simulations.

A *policy* chooses a lead from the engine's state for the seat to act.  It
reads only what that seat may know: its own hand (``hand_of`` of its own
seat), the cards played this hand, the hand sizes and the size of the dead
hand.  Everything else a match asks (stakes, the dead hand, bids) is
answered by ``default_action``: stakes spread evenly, the dealt hand kept,
no bid.  On the default preset (fixed antes, no exchange) leads are the only
decisions, so these policies play the whole game.

``REFERENCE`` is what the referee replays to measure the luck of a deal
(``referee.scoring.luck``).  It must be fixed (the same for every bot, every
version) and deterministic; it need not be strong, only correlated with how
well a deal plays, and the card-tracking heuristic is.

The others exist for ``benchmarks/fidelity.py`` and the tests: bots whose
order of strength is known (measured there), played without processes so a
thousand matches cost seconds, not hours.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from engine import Bid, Card, DeadHandChoice, Decision, Match, Rules, Stakes
from engine.cards import RankOrder

__all__ = [
    "POLICIES",
    "REFERENCE",
    "Policy",
    "default_action",
    "noisy",
    "play_match",
    "play_step",
    "random_policy",
    "tracker",
]

Policy = Callable[[Match, int, list[Card], random.Random], Card]
"""(match, seat to act, legal leads, the seat's own generator) -> the lead."""


def _next_card(card: Card, order: RankOrder) -> Card | None:
    """The card after ``card`` in its suit, or None after the top card."""
    position = order.position(card.rank)
    if position == 12:
        return None
    return Card(card.suit * 13 + order.rank_at(position + 1))


def _run(card: Card, hand: set[Card], order: RankOrder) -> list[Card]:
    """The cards this seat plays in a row from ``card`` (it holds each next card)."""
    run = [card]
    while True:
        following = _next_card(run[-1], order)
        if following is None or following not in hand:
            return run
        run.append(following)


def _lead_value(
    match: Match, seat: int, card: Card, *, back_weight: float, boodle_weight: float
) -> tuple[float, int]:
    """Cards shed by leading ``card``, the value of leading again, and boodle chips won."""
    order = match.rules.rank_order
    hand = set(match.hand_of(seat))
    played = set(match.played_cards())
    run = _run(card, hand, order)
    after = _next_card(run[-1], order)
    if after is None or after in played:
        comes_back = 1.0
    else:
        unseen = 52 - len(hand) - len(played)
        dead = len(match.dead_hand())  # its size only, which every seat knows
        comes_back = dead / max(1, unseen)
    value = len(run) + back_weight * comes_back
    if boodle_weight:
        stacks = dict(zip(match.rules.boodle_cards, match.boodle_stacks, strict=True))
        value += boodle_weight * sum(stacks.get(c, 0) for c in run)
    return value, -order.position(card.rank)


def tracker(back_weight: float = 2.0, boodle_weight: float = 0.0) -> Policy:
    """The tracker starter's idea: shed the longest run that gives the lead back.

    ``back_weight`` is what getting the lead back is worth, in cards (the
    starter uses 2); ``boodle_weight`` adds that many cards per chip on the
    boodle cards of the run (0 in the starter, which ignores stakes).
    """

    def choose(match: Match, seat: int, legal: list[Card], rng: random.Random) -> Card:
        return max(
            legal,
            key=lambda card: _lead_value(
                match, seat, card, back_weight=back_weight, boodle_weight=boodle_weight
            ),
        )

    return choose


def random_policy(match: Match, seat: int, legal: list[Card], rng: random.Random) -> Card:
    return rng.choice(legal)


def noisy(policy: Policy, noise: float) -> Policy:
    """``policy``, except that a share ``noise`` of its leads are random."""

    def choose(match: Match, seat: int, legal: list[Card], rng: random.Random) -> Card:
        if rng.random() < noise:
            return rng.choice(legal)
        return policy(match, seat, legal, rng)

    return choose


def lowest(match: Match, seat: int, legal: list[Card], rng: random.Random) -> Card:
    order = match.rules.rank_order
    return min(legal, key=lambda card: (order.position(card.rank), card.suit))


REFERENCE: Policy = tracker()
"""The luck reference: the tracker heuristic, fixed once and for all."""

POLICIES: dict[str, Policy] = {
    "random": random_policy,
    "lowest": lowest,
    "tracker": tracker(),
    "tracker-noisy": noisy(tracker(), 0.10),
    "tracker-tiny": tracker(back_weight=1.5),
    "boodler": tracker(boodle_weight=0.5),
}
"""The simulation's bots, by name (their order of strength is measured in docs/fidelity.md)."""


def _even_stakes(total: int, cards: int) -> Stakes:
    base, extra = divmod(total, cards)
    return Stakes(tuple(base + (1 if i < extra else 0) for i in range(cards)))


def default_action(match: Match, rules: Rules) -> object:
    """Every decision but a lead: even stakes, keep the dealt hand, bid nothing."""
    decision = match.decision
    if decision is Decision.STAKE:
        return _even_stakes(rules.stake_total, len(rules.boodle_cards))
    if decision is Decision.DEAD_HAND:
        return DeadHandChoice.KEEP
    if decision is Decision.BID:
        return Bid(0)
    raise ValueError(f"no default for {decision}")


def play_match(
    rules: Rules,
    seed: int,
    seats: Sequence[Policy],
    rngs: Sequence[random.Random] | None = None,
    on_deal: Callable[[Match], None] | None = None,
) -> Match:
    """Play one match in-process, ``seats[i]`` at seat i; return the finished match.

    ``rngs[i]`` is seat i's generator (only random and noisy policies draw
    from it); by default each seat gets one seeded from the match seed.
    ``on_deal`` sees the match once a hand, just after its deal: at the
    hand's first decision that is not a stake (stakes come before the deal,
    a dead-hand choice or a lead after it).
    """
    match = Match(rules, len(seats), seed)
    generators = (
        list(rngs)
        if rngs is not None
        else [random.Random(f"{seed}/{seat}") for seat in range(len(seats))]
    )
    dealt = 0  # the hands on_deal has seen
    while not match.is_over:
        if (
            on_deal is not None
            and match.hand_number > dealt
            and match.decision is not Decision.STAKE
        ):
            dealt = match.hand_number
            on_deal(match)
        play_step(match, seats, generators)
    return match


def play_step(match: Match, seats: Sequence[Policy], rngs: Sequence[random.Random]) -> object:
    """Apply the next decision: the seat's policy for a lead, ``default_action`` else.

    Returns the action applied, so a caller can record the match and replay it.
    """
    seat = match.current_seat()
    assert seat is not None, "play_step: the match is over"
    action: object
    if match.decision is Decision.LEAD:
        action = seats[seat](match, seat, match.legal_actions(), rngs[seat])
    else:
        action = default_action(match, match.rules)
    match.apply(action)  # type: ignore[arg-type]
    return action
