"""The protocol loop the OS-level hostile bots share: the standard library only.

Each bot is a small program beside this module: it plays legal random
choices (from the request alone) and does its one hostile thing at the
moment its ``HOSTILE_AT`` request arrives (default: the first), or before
the handshake.  It never uses the SDK, because what it does must not depend
on any of the referee's own code.
"""

from __future__ import annotations

import json
import os
import random
import sys
from collections.abc import Callable
from typing import Any

Message = dict[str, Any]
RNG = random.Random(int(os.environ.get("HOSTILE_SEED", "0")))
AT = int(os.environ.get("HOSTILE_AT", "1"))


def say(text: str) -> None:
    """A line on stderr, flushed at once (the tests read it)."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def send(message: Message) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def choice(request: Message) -> object:
    decision = request["decision"]
    if decision in ("lead", "dead_hand"):
        return RNG.choice(request["legal"])
    if decision == "bid":
        return RNG.randint(0, request["max_bid"])
    amounts = [0] * len(request["boodle_cards"])
    for _ in range(request["stake_total"]):
        amounts[RNG.randrange(len(amounts))] += 1
    return amounts


def run(hostile: Callable[[Message], None] | None = None, name: str = "hostile") -> None:
    """Handshake, then play; call ``hostile(request)`` at request number ``AT`` instead."""
    count = 0
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            send({"type": "ready", "name": name, "protocol": 1})
        elif kind == "request":
            count += 1
            if hostile is not None and count == AT:
                hostile(message)
                continue
            send({"type": "reply", "id": message["id"], "choice": choice(message)})
        elif kind == "shutdown":
            return
