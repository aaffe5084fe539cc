"""The loop every broken bot shares: a correct bot on the standard library alone.

Each bot in this package breaks exactly one rule of SPEC.md, so everything
else must be right: this loop handshakes, answers each request with its
``default`` (always legal), ignores what it does not know and exits 0 at
``shutdown`` or at the end of its input.  A bot overrides one hook (how it
answers, what it does with a message, how it ends) and nothing more, so a
test that fails names that one rule.  Over TCP (``NEWMARKET_CONNECT``) it
connects and sends its token, as SPEC.md 3.2 says.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

Message = dict[str, Any]


class Wire:
    """The bot's end of the connection: messages in, lines out (always flushed)."""

    def __init__(self) -> None:
        connect = os.environ.get("NEWMARKET_CONNECT", "")
        self.token = os.environ.get("NEWMARKET_TOKEN")
        self.reader: BinaryIO
        self.writer: BinaryIO
        if connect:
            host, _, port = connect.rpartition(":")
            sock = socket.create_connection((host.strip("[]"), int(port)))
            self.reader = sock.makefile("rb")
            self.writer = sock.makefile("wb")
        else:
            self.reader = sys.stdin.buffer
            self.writer = sys.stdout.buffer
        self.requests = 0  # requests received so far, this one included
        self.matches = 0  # match_end messages received so far

    def send(self, message: Message) -> None:
        self.raw(json.dumps(message).encode() + b"\n")

    def raw(self, data: bytes) -> None:
        self.writer.write(data)
        self.writer.flush()

    def reply(self, request: Message, choice: object) -> None:
        self.send({"type": "reply", "id": request["id"], "choice": choice})

    def messages(self) -> Iterator[Message]:
        for line in self.reader:
            if line.strip():
                yield json.loads(line)


def log(text: str) -> None:
    """A line on stderr: the bot's own log, which the check shows on failure."""
    print(text, file=sys.stderr, flush=True)


def answer_default(wire: Wire, request: Message) -> None:
    wire.reply(request, request["default"])


Answer = Callable[[Wire, Message], None]


def run(
    answer: Answer = answer_default,
    *,
    name: str,
    protocol: int = 1,
    on_message: Callable[[Wire, Message], None] | None = None,
    on_shutdown: Callable[[], None] = lambda: None,
    on_end_of_input: Callable[[], None] = lambda: None,
) -> None:
    """Ready, then ``answer`` each request; ``on_shutdown`` or ``on_end_of_input`` at the end."""
    wire = Wire()
    ready: Message = {"type": "ready", "name": name, "protocol": protocol, "version": "test"}
    if wire.token:
        ready["token"] = wire.token
    wire.send(ready)
    log(f"{name}: ready")
    for message in wire.messages():
        if on_message is not None:
            on_message(wire, message)
        kind = message.get("type")
        if kind == "request":
            wire.requests += 1
            answer(wire, message)
        elif kind == "match_end":
            wire.matches += 1
        elif kind == "shutdown":
            on_shutdown()
            return
    on_end_of_input()
