"""A TCP bot that writes each line in two pieces, 2 ms apart (the standard library only).

A reply written in pieces is ordinary (a bot that prints then flushes, a
runtime's buffered writer, a relay that forwards what it has read): its own
socket has ``TCP_NODELAY``, so each piece leaves at once, and whatever
carries it on to the referee must not hold the second piece back.
"""

from __future__ import annotations

import json
import os
import random
import socket
import time
from typing import Any

RNG = random.Random(0)


def choice(request: dict[str, Any]) -> object:
    decision = request["decision"]
    if decision in ("lead", "dead_hand"):
        return RNG.choice(request["legal"])
    if decision == "bid":
        return RNG.randint(0, request["max_bid"])
    amounts = [0] * len(request["boodle_cards"])
    for _ in range(request["stake_total"]):
        amounts[RNG.randrange(len(amounts))] += 1
    return amounts


def main() -> None:
    host, _, port = os.environ["NEWMARKET_CONNECT"].rpartition(":")
    sock = socket.create_connection((host.strip("[]"), int(port)))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send(message: dict[str, Any]) -> None:
        line = json.dumps(message).encode() + b"\n"
        sock.sendall(line[:10])
        time.sleep(0.002)
        sock.sendall(line[10:])

    for line in sock.makefile("rb"):
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            send(
                {
                    "type": "ready",
                    "name": "split",
                    "protocol": 1,
                    "token": os.environ["NEWMARKET_TOKEN"],
                }
            )
        elif kind == "request":
            send({"type": "reply", "id": message["id"], "choice": choice(message)})
        elif kind == "shutdown":
            return


if __name__ == "__main__":
    main()
