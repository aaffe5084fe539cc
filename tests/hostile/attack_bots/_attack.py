"""What every attack bot shares (the standard library only; run from this directory).

A bot plays legal random choices and makes its attack at its first request.
It reports on stderr, one line each: ``TRIED <what>: <outcome>`` for every
attempt, and ``FOUND <where> <secret>`` for every ``NMSECRET-<hex>`` string
it managed to read anywhere.  The secrets' values are planted by the test
(in the referee's environment, a victim bot's environment and files, the
league directory); a bot knows only their prefix, so the test's check that no
planted value appears on its stderr cannot be faked by the bot.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
from collections.abc import Callable
from typing import Any

Message = dict[str, Any]
SECRET = re.compile(rb"NMSECRET-[0-9a-f]+")
TARGETS: dict[str, Any] = json.loads(os.environ.get("ATTACK_TARGETS", "{}"))
RNG = random.Random(0)


def say(text: str) -> None:
    sys.stderr.write(text.replace("\n", " ") + "\n")
    sys.stderr.flush()


def tried(what: str, action: Callable[[], object]) -> object:
    """Run one attempt; report how it went (and any secret in what it returned)."""
    try:
        result = action()
    except Exception as error:  # an attack that fails is the expected outcome
        say(f"TRIED {what}: refused: {type(error).__name__}: {error}")
        return None
    say(f"TRIED {what}: succeeded")
    if isinstance(result, bytes):
        found(what, result)
    return result


def found(where: str, data: bytes) -> None:
    for secret in sorted(set(SECRET.findall(data))):
        say(f"FOUND {where} {secret.decode()}")


def read(path: str, limit: int = 1 << 20) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(limit)


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


def run(attack: Callable[[], None], name: str) -> None:
    """Handshake, then play; ``attack()`` once, when the first request arrives."""
    attacked = False
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            send({"type": "ready", "name": name, "protocol": 1})
        elif kind == "request":
            if not attacked:
                attacked = True
                attack()
                say("ATTACK DONE")
            send({"type": "reply", "id": message["id"], "choice": choice(message)})
        elif kind == "shutdown":
            return
