"""The loop every hostile protocol bot shares: plain ``json`` and the standard library.

A hostile bot must be able to write anything at any moment, so it cannot sit
on the real SDK (which would refuse to send a malformed line).  ``run``
speaks the protocol over stdio, or over TCP when ``NEWMARKET_CONNECT`` is set
(as the referee sets it), and hands each request to a policy that writes
whatever it likes.  ``HOSTILE_TOKEN`` replaces the referee's token (the
wrong-token bot).  Each bot is its own small program beside this module.
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


def connect() -> socket.socket:
    """A TCP connection to the referee's ``NEWMARKET_CONNECT`` address."""
    host, _, port = os.environ["NEWMARKET_CONNECT"].rpartition(":")
    sock = socket.create_connection((host.strip("[]"), int(port)))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def ready_line(name: str, token: str | None = None) -> bytes:
    ready: Message = {"type": "ready", "name": name, "protocol": 1}
    token = os.environ.get("HOSTILE_TOKEN") or token or os.environ.get("NEWMARKET_TOKEN")
    if token:
        ready["token"] = token
    return json.dumps(ready).encode() + b"\n"


class Wire:
    """The bot's end of the connection: lines in, bytes out (always flushed)."""

    def __init__(self) -> None:
        self.reader: BinaryIO
        self.writer: BinaryIO
        if os.environ.get("NEWMARKET_CONNECT"):
            sock = connect()
            self.reader = sock.makefile("rb")
            self.writer = sock.makefile("wb")
        else:
            self.reader = sys.stdin.buffer
            self.writer = sys.stdout.buffer
        self.requests = 0

    def raw(self, data: bytes) -> None:
        self.writer.write(data)
        self.writer.flush()

    def send(self, message: Message) -> None:
        self.raw(json.dumps(message).encode() + b"\n")

    def reply(self, request: Message, choice: object) -> None:
        self.send({"type": "reply", "id": request["id"], "choice": choice})

    def messages(self) -> Iterator[Message]:
        for line in self.reader:
            yield json.loads(line)


RNG = random.Random(int(os.environ.get("HOSTILE_SEED", "0")))


def random_choice(request: Message) -> object:
    """A uniformly random legal choice, from the request alone."""
    decision = request["decision"]
    if decision in ("lead", "dead_hand"):
        return RNG.choice(request["legal"])
    if decision == "bid":
        return RNG.randint(0, request["max_bid"])
    amounts = [0] * len(request["boodle_cards"])
    for _ in range(request["stake_total"]):
        amounts[RNG.randrange(len(amounts))] += 1
    return amounts


Policy = Callable[[Wire, Message], None]


def play_randomly(wire: Wire, request: Message) -> None:
    wire.reply(request, random_choice(request))


def run(policy: Policy = play_randomly, *, name: str = "hostile") -> None:
    """Handshake, then ``policy`` for each request, until shutdown or the end of input."""
    wire = Wire()
    for message in wire.messages():
        kind = message.get("type")
        if kind == "hello":
            wire.raw(ready_line(name))
        elif kind == "request":
            wire.requests += 1
            policy(wire, message)
        elif kind == "shutdown":
            return


def arg(index: int, default: str) -> str:
    """Command-line argument ``index`` (1-based), or ``default``."""
    return sys.argv[index] if len(sys.argv) > index else default
