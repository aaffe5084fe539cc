"""A minimal bot on plain ``json`` and the standard library, for the referee's tests.

The referee's tests need bots that break the protocol on purpose, at a chosen
moment, and nothing else; building them on the real SDK would hide the very
mistakes they exist to make.  ``run`` speaks the protocol over stdio, or over
TCP when ``NEWMARKET_CONNECT`` is set (as the referee sets it), and hands each
request to a policy, which writes whatever it likes.
"""

from __future__ import annotations

import json
import os
import random
import socket
import sys
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

Message = dict[str, Any]


class Wire:
    """The bot's end of the connection: lines in, bytes out (always flushed)."""

    def __init__(self) -> None:
        connect = os.environ.get("NEWMARKET_CONNECT", "")
        # TEST_BOT_TOKEN: send this token instead of the referee's (a wrong-token test).
        self.token = os.environ.get("TEST_BOT_TOKEN") or os.environ.get("NEWMARKET_TOKEN")
        self.reader: BinaryIO
        self.writer: BinaryIO
        if connect:
            host, _, port = connect.rpartition(":")
            sock = socket.create_connection((host.strip("[]"), int(port)))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.reader = sock.makefile("rb")
            self.writer = sock.makefile("wb")
        else:
            self.reader = sys.stdin.buffer
            self.writer = sys.stdout.buffer
        self.requests = 0

    def send(self, message: Message) -> None:
        self.raw(json.dumps(message).encode() + b"\n")

    def raw(self, data: bytes) -> None:
        self.writer.write(data)
        self.writer.flush()

    def reply(self, request: Message, choice: object) -> None:
        self.send({"type": "reply", "id": request["id"], "choice": choice})

    def messages(self) -> Iterator[Message]:
        for line in self.reader:
            yield json.loads(line)


def random_choice(request: Message, rng: random.Random) -> object:
    """A uniformly random legal choice, from the request alone."""
    decision = request["decision"]
    if decision in ("lead", "dead_hand"):
        return rng.choice(request["legal"])
    if decision == "bid":
        return rng.randint(0, request["max_bid"])
    amounts = [0] * len(request["boodle_cards"])
    for _ in range(request["stake_total"]):
        amounts[rng.randrange(len(amounts))] += 1
    return amounts


Policy = Callable[[Wire, Message], None]


def play_randomly(wire: Wire, request: Message) -> None:
    wire.reply(request, random_choice(request, RNG))


RNG = random.Random(int(os.environ.get("TEST_BOT_SEED", "0")))


def run(
    policy: Policy = play_randomly,
    *,
    name: str = "testbot",
    on_message: Callable[[Wire, Message], None] | None = None,
) -> None:
    """Handshake, then call ``policy`` for each request until shutdown or end of input."""
    wire = Wire()
    for message in wire.messages():
        kind = message.get("type")
        if on_message is not None:
            on_message(wire, message)
        if kind == "hello":
            ready: Message = {"type": "ready", "name": name, "protocol": 1, "version": "test"}
            if wire.token:
                ready["token"] = wire.token
            wire.send(ready)
        elif kind == "request":
            wire.requests += 1
            policy(wire, message)
        elif kind == "shutdown":
            return


def arg(index: int, default: str) -> str:
    """Command-line argument ``index`` (1-based), or ``default``."""
    return sys.argv[index] if len(sys.argv) > index else default
