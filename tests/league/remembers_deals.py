"""A legal bot that remembers every deal it has seen, to catch a duplicate deal coming round again.

It plays each request's default, and keeps, in memory for its whole life,
each deal it saw: the hand it was dealt, the dead hand and the others' hands
shown at ``hand_ended``.  A new hand is one it has seen before when it is a
remembered deal's own hand, or when it holds none of a remembered deal's own
and dead cards and contains one of its shown hands of five cards or more (as
another seat's hand of the same deal does).  A shown hand of five cards alone
is in a fresh hand about once in 2,000 tries, too often for a whole league;
with the 26 cards that must be missing as well, about once in three million.
It then writes ``SEEN BEFORE`` to stderr: in a duplicate league that is a
process that met a deal twice and could know everyone's cards.  Otherwise it
writes ``dealt`` and the hand.
It writes ``started`` when it starts, so a test can count its processes.

``remembers_deals.py slow`` also waits 0.2 s before each reply, so that a
match lasts long enough for a test to kill its table worker in the middle.
Standard library only, as a bot from outside would be.
"""

from __future__ import annotations

import json
import sys
import time

MIN_CARDS = 5


def seen_before(
    hand: frozenset[str], seen: list[tuple[frozenset[str], list[frozenset[str]]]]
) -> bool:
    """Whether ``hand`` is a seat's hand of a deal remembered in ``seen``."""
    for own_and_dead, shown in seen:
        if hand == shown[0]:  # the very hand this process was dealt
            return True
        if not hand & own_and_dead and any(cards <= hand for cards in shown[1:]):
            return True
    return False


def main() -> None:
    slow = sys.argv[1:] == ["slow"]
    seen: list[tuple[frozenset[str], list[frozenset[str]]]] = []  # (own and dead, shown)
    own: frozenset[str] = frozenset()
    for raw in sys.stdin:
        message = json.loads(raw)
        kind = message.get("type")
        if kind == "hello":
            print("started", file=sys.stderr, flush=True)
            ready = {"type": "ready", "name": "remembers_deals", "protocol": 1}
            print(json.dumps(ready), flush=True)
        elif kind == "events":
            for event in message["events"]:
                if event["type"] == "cards_dealt":
                    own = frozenset(event["hand"])
                    word = "SEEN BEFORE" if seen_before(own, seen) else "dealt"
                    print(f"{word} {' '.join(sorted(own))}", file=sys.stderr, flush=True)
                elif event["type"] == "hand_ended":
                    dead = frozenset(event["dead_hand"])
                    shown = [frozenset(c) for c in event["hands"] if len(c) >= MIN_CARDS]
                    seen.append((own | dead, [own, *shown]))
        elif kind == "request":
            if slow:
                time.sleep(0.2)
            reply = {"type": "reply", "id": message["id"], "choice": message["default"]}
            print(json.dumps(reply), flush=True)
        elif kind == "shutdown":
            return


if __name__ == "__main__":
    main()
