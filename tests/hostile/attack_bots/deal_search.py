"""A legal bot that carries the open-source engine and searches for its match's deal seed.

``python -m tests.hostile.attack_bots.deal_search [league SEED] [server SEED] ...``

The attack of issue 26: a deal is a pure function of its seed, and the seeds
a participant can read about are few.  At its first ``cards_dealt`` the bot
tries every seed it can think of, as a participant who read the docs would:

* ``small``: every seed below ``SMALL`` (``newmarket match --seed 7``);
* ``league SEED``: the seeds a league with that published seed derives for
  its schedule (``referee.match.key.derive_seed``: every cycle, table
  and rotation up to generous bounds, and the bankroll format's tables);
* ``server SEED``: the seeds a competition with that seed derives for its
  groups, and for each group's remote rotations.

A candidate must give the first dealer the bot saw and deal it exactly its
own hand.  The bot then knows every hand of the match: at its first request
once it holds its first hand it writes on stderr
``DEALSEARCH FOUND seed=N searched=K hand2-dead=CARDS match=ID`` (the dead
hand of the *next* hand, which no bot may know before it ends, so a test can
check the find against the match log), or ``DEALSEARCH NONE searched=K
match=ID``.  It plays each request's default either way.  The search runs
before that reply, so its table needs a generous move time; and a preset in
which every seat stakes before each deal (``stops``) asks it in every match.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

from engine import Match
from engine.deal import first_dealer
from engine.events import CardsDealt
from engine.rules import Rules
from referee.match.key import derive_seed

SMALL = 20_000  # seeds a person types
CYCLES = 3  # a league's cycles, tables and rotations tried for its published seed
TABLES = 1500
ROTATIONS = 8
ROUNDS = 40  # a bankroll league's rounds, and tables per round
ROUND_TABLES = 12
GROUPS = 4000  # a competition's groups tried


def candidates(argv: list[str]) -> Iterator[int]:
    yield from range(SMALL)
    words = iter(argv)
    for word in words:
        seed = int(next(words))
        if word == "league":
            for cycle in range(1, CYCLES + 1):
                for table in range(TABLES):
                    yield derive_seed(seed, "deal", cycle, table)  # duplicate deals
                    for rotation in range(ROTATIONS):  # plain deals
                        yield derive_seed(seed, "deal", cycle, table, rotation)
            for number in range(1, ROUNDS + 1):
                for at in range(ROUND_TABLES):
                    yield derive_seed(seed, "bankroll-deal", number, at)
        elif word == "server":
            for count in range(GROUPS):
                group = derive_seed(seed, "group", count)
                yield group
                for rotation in range(ROTATIONS):
                    yield derive_seed(group, "remote rotation", rotation)


def deals(match: Match) -> list[CardsDealt]:
    """The deals so far, as the engine sees them: every hand and the dead hand."""
    return [event for event in match.events() if isinstance(event, CardsDealt)]


def first_hand(rules: Rules, players: int, seed: int, seat: int) -> tuple[Match, set[str]]:
    """The match from ``seed`` and ``seat``'s cards in its first hand (stakes by default)."""
    match = Match(rules, players, seed)
    while not deals(match):
        match.apply(match.legal_actions()[0])
    return match, {str(card) for card in match.hand_of(seat)}


def second_dead_hand(match: Match) -> list[str]:
    """Play ``match`` on by each decision's first choice until hand 2 is dealt: its dead hand."""
    while len(dealt := deals(match)) < 2:
        if match.is_over:
            return []
        match.apply(match.legal_actions()[0])
    return sorted(str(card) for card in dealt[1].dead_hand or ())


def search(start: dict[str, Any], dealer: int, hand: set[str], argv: list[str]) -> str:
    rules = Rules.from_dict(start["rules"])
    players, seat = int(start["players"]), int(start["seat"])
    searched = 0
    for seed in candidates(argv):
        searched += 1
        if first_dealer(seed, players) != dealer:
            continue
        match, mine = first_hand(rules, players, seed, seat)
        if mine == hand:
            dead = " ".join(second_dead_hand(match))
            return f"DEALSEARCH FOUND seed={seed} searched={searched} hand2-dead={dead}"
    return f"DEALSEARCH NONE searched={searched}"


def main() -> None:
    argv = sys.argv[1:]
    start: dict[str, Any] = {}
    dealer = -1
    hand: set[str] | None = None
    searched = False
    for raw in sys.stdin:
        message = json.loads(raw)
        kind = message.get("type")
        if kind == "hello":
            print(json.dumps({"type": "ready", "name": "deal_search", "protocol": 1}), flush=True)
        elif kind == "match_start":
            start, dealer, hand, searched = message, -1, None, False
        elif kind == "events":
            for event in message["events"]:
                if event["type"] == "hand_started" and event["hand_number"] == 1:
                    dealer = int(event["dealer"])
                elif event["type"] == "cards_dealt" and hand is None and dealer >= 0:
                    hand = set(event["hand"])
        elif kind == "request":
            # At its first request once it holds its first hand: the referee waits for the
            # reply, so the finding is written while its match is still being played.
            if hand is not None and not searched:
                searched = True
                line = search(start, dealer, hand, argv)
                print(f"{line} match={start['match_id']}", file=sys.stderr, flush=True)
            reply = {"type": "reply", "id": message["id"], "choice": message["default"]}
            print(json.dumps(reply), flush=True)
        elif kind == "shutdown":
            return


if __name__ == "__main__":
    main()
