"""Dealing the unseen cards again, consistently with everything a seat has observed.

A determinized search plays the real engine forward from a guess of where the
hidden cards are.  A guess that contradicts what the seat saw (a card a stop
proved dead now in a player's hand, a player holding a card lower than one it
led in that suit) makes the search plan against a game that cannot happen, so
every guess here obeys all of it.

Why it is shaped this way:

* The problem is plain data, ``DealProblem``: the cards whose place is unknown
  (the *pool*), the places they can go (*slots*: each other live seat and the
  unknown part of the dead hand) with how many cards each still needs, and per
  slot the cards it cannot hold.  ``bots.search.knowledge`` derives it from the
  events; this module knows nothing about events, so it is tested on its own.
* Cards are dealt one at a time to a slot chosen with probability in
  proportion to the room it has left.  Without constraints that is exactly a
  uniform deal (like dealing a shuffled pack); with them, the most constrained
  cards go first so they still find room.  If a card finds no slot with room,
  an augmenting path moves already dealt cards along (bipartite matching with
  capacities), which always succeeds when any consistent deal exists, and the
  true deal is one.  So sampling never fails on consistent knowledge, and on
  inconsistent knowledge (a bug elsewhere) it says so with ``DealError``.
* The deal is close to, not exactly, uniform over consistent deals; a search
  averages over many of them, and exact uniform sampling under these
  constraints costs far more than it would gain.
"""

from __future__ import annotations

import dataclasses
import random
from collections import deque
from collections.abc import Sequence

__all__ = ["DealError", "DealProblem", "Dealer", "fits", "sample_deal"]


class DealError(ValueError):
    """No deal fits the constraints (the knowledge that made them is inconsistent)."""


@dataclasses.dataclass(frozen=True, slots=True)
class DealProblem:
    """Cards (ints 0..51) whose place is unknown, and the slots they must fill.

    ``room[i]`` is how many pool cards slot ``i`` receives; ``forbidden[i]`` is
    a bit mask of cards slot ``i`` cannot hold.  The room adds up to the pool.
    """

    pool: tuple[int, ...]
    room: tuple[int, ...]
    forbidden: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.room) != len(self.forbidden):
            raise DealError("room and forbidden must have one entry per slot")
        if sum(self.room) != len(self.pool) or any(r < 0 for r in self.room):
            raise DealError(f"{len(self.pool)} unseen cards do not fill slots of sizes {self.room}")


def sample_deal(problem: DealProblem, rng: random.Random) -> list[list[int]]:
    """One deal: for each slot, the pool cards it receives."""
    return Dealer(problem).deal(rng)


class Dealer:
    """Deals one ``DealProblem`` again and again: what every deal shares is worked out once.

    A search draws hundreds of deals of the same problem per decision; which
    slots may hold each card, and the order of the cards by how constrained
    they are, do not change between them.
    """

    def __init__(self, problem: DealProblem) -> None:
        forbidden = problem.forbidden
        slots = range(len(problem.room))
        self.room = problem.room
        self.forbidden = problem.forbidden
        self.allowed = {
            card: [s for s in slots if not forbidden[s] >> card & 1] for card in problem.pool
        }
        # Cards in groups of equal constraint, fewest possible slots first; each
        # group is shuffled per deal (the same as a shuffle and a stable sort).
        groups: dict[int, list[int]] = {}
        for card in problem.pool:
            groups.setdefault(len(self.allowed[card]), []).append(card)
        self.groups = [groups[size] for size in sorted(groups)]

    def deal(self, rng: random.Random) -> list[list[int]]:
        """One deal: for each slot, the pool cards it receives."""
        allowed = self.allowed
        left = list(self.room)
        where: dict[int, int] = {}
        dealt: list[list[int]] = [[] for _ in left]
        stuck: list[int] = []
        draw = rng.random  # int(draw() * n) costs less than randrange(n), and is as fair here
        for group in self.groups:
            order = group[:]
            rng.shuffle(order)
            for card in order:
                options = allowed[card]
                total = 0
                for s in options:
                    total += left[s]
                if total == 0:
                    stuck.append(card)
                    continue
                pick = int(draw() * total)
                for s in options:
                    pick -= left[s]
                    if pick < 0:
                        break
                left[s] -= 1
                where[card] = s
                dealt[s].append(card)
        for card in stuck:
            _augment(card, allowed, left, where, dealt)
        return dealt


def _augment(
    card: int,
    allowed: dict[int, list[int]],
    left: list[int],
    where: dict[int, int],
    dealt: list[list[int]],
) -> None:
    """Place ``card`` by moving dealt cards along a shortest chain to a slot with room.

    Breadth-first over slots: from a slot that may hold the card, any card in
    it may move to another slot that may hold *that* card, and so on until a
    slot with room is reached.
    """
    start = allowed[card]
    parent: dict[int, tuple[int, int] | None] = {s: None for s in start}
    queue = deque(start)
    end = -1
    while queue:
        slot = queue.popleft()
        if left[slot] > 0:
            end = slot
            break
        for moved in dealt[slot]:
            for nxt in allowed[moved]:
                if nxt not in parent:
                    parent[nxt] = (slot, moved)
                    queue.append(nxt)
    if end < 0:
        raise DealError(f"no consistent place for card {card}")
    left[end] -= 1
    slot = end
    step = parent[slot]
    while step is not None:
        previous, moved = step
        dealt[previous].remove(moved)
        dealt[slot].append(moved)
        where[moved] = slot
        slot = previous
        step = parent[slot]
    dealt[slot].append(card)
    where[card] = slot


def fits(problem: DealProblem, dealt: Sequence[Sequence[int]]) -> bool:
    """True if ``dealt`` gives every slot its room, from the pool, and nothing forbidden."""
    if len(dealt) != len(problem.room):
        return False
    cards = [card for cards in dealt for card in cards]
    if sorted(cards) != sorted(problem.pool):
        return False
    return all(
        len(cards) == room and not any(forbidden >> card & 1 for card in cards)
        for cards, room, forbidden in zip(dealt, problem.room, problem.forbidden, strict=True)
    )
