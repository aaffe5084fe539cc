"""A bot that makes a uniformly random legal choice for every decision.

This is the smallest complete bot worth reading: one method per decision
kind, each picking at random among the choices the request allows.  It is the
baseline every other bot should beat.

Run it with ``python -m bots.starters.random``.  Set ``NEWMARKET_RANDOM_SEED``
to an integer to vary its play (the default seed is 0).  Its generator is
reseeded at every ``match_start`` from that seed, the match id and its seat,
so a match plays the same way whichever process plays it and whatever that
process played before: a league gives the same games with any ``--jobs`` and
after a resume.
"""

from __future__ import annotations

import os
import random

from bots.sdk import Bot, TableState, run
from protocol.messages import MatchStart, Request


class RandomBot(Bot):
    # The name and version go into the "ready" line of the handshake.
    name = "random"
    version = "1.0"

    def __init__(self, seed: int = 0) -> None:
        # One private generator, never the global one: the bot's choices then
        # depend on its seed and the requests it sees, and nothing else.
        self.seed = seed
        self.rng = random.Random(seed)

    def on_match_start(self, start: MatchStart, state: TableState) -> None:
        # Reseed per match from what the referee sends at match start.  A
        # string seed goes through SHA-512 in random.Random, so it does not
        # depend on PYTHONHASHSEED: every process derives the same generator.
        self.rng = random.Random(f"{self.seed}/{start.match_id}/{start.seat}")

    def lead(self, request: Request, state: TableState) -> str:
        # request.legal lists every card you may lead now (the lowest card you
        # hold in each suit the rules let you lead), so any of them is legal.
        return self.rng.choice(request.legal)

    def dead_hand(self, request: Request, state: TableState) -> str:
        # Only the dealer is asked, and only with a dead-hand exchange rule.
        # request.legal holds the words allowed: "keep", "exchange", "auction", "buy".
        return self.rng.choice(request.legal)

    def bid(self, request: Request, state: TableState) -> int:
        # An auction for the dead hand: any whole number from min_bid to max_bid
        # (max_bid is what you can pay); 0 means "no bid".
        low, high = request.min_bid or 0, request.max_bid or 0
        return self.rng.randint(low, max(low, high))

    def stake(self, request: Request, state: TableState) -> list[int]:
        # Free stakes: exactly stake_total chips spread over the boodle cards,
        # one amount per card in request.boodle_cards.  Each chip goes on a
        # card drawn at random.
        amounts = [0] * len(request.boodle_cards or ())
        for _ in range(request.stake_total or 0):
            amounts[self.rng.randrange(len(amounts))] += 1
        return amounts


def main() -> None:
    seed = os.environ.get("NEWMARKET_RANDOM_SEED", "0")
    run(RandomBot(int(seed) if seed.lstrip("-").isdigit() else 0))


if __name__ == "__main__":
    main()
