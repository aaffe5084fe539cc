"""A legal bot that remembers every deal it has seen, to catch a duplicate deal coming round again.

It plays each request's default, and keeps, in memory for its whole life,
every hand it was dealt and every hand shown at ``hand_ended``.  When a new
deal gives it a hand containing one it remembers (five cards or more: a
chance match is about one in a thousand billion), it writes ``SEEN BEFORE``
to stderr: in a duplicate league that is a process that met a deal twice
and could know everyone's cards.  Otherwise it writes ``dealt`` and the hand.
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


def main() -> None:
    slow = sys.argv[1:] == ["slow"]
    remembered: list[frozenset[str]] = []
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
                    hand = frozenset(event["hand"])
                    seen = any(memory <= hand for memory in remembered)
                    word = "SEEN BEFORE" if seen else "dealt"
                    print(f"{word} {' '.join(sorted(hand))}", file=sys.stderr, flush=True)
                    remembered.append(hand)
                elif event["type"] == "hand_ended":
                    for cards in [*event["hands"], event["dead_hand"]]:
                        if len(cards) >= MIN_CARDS:
                            remembered.append(frozenset(cards))
        elif kind == "request":
            if slow:
                time.sleep(0.2)
            reply = {"type": "reply", "id": message["id"], "choice": message["default"]}
            print(json.dumps(reply), flush=True)
        elif kind == "shutdown":
            return


if __name__ == "__main__":
    main()
