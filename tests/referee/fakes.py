"""Bots as trio tasks on in-memory streams, so the referee's logic runs on a virtual clock.

``Connection`` works over any ``trio.abc.Stream``, so a test can seat a bot
that is a coroutine on the other end of ``trio.testing.memory_stream_pair``:
no process, no real time, and a 30-second timeout costs nothing under
``autojump_clock``.  A policy is ``async def policy(wire, request) -> None``
and writes whatever it likes, which is how these tests make every mistake on
purpose and at a chosen moment.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import trio
import trio.testing

from protocol.framing import LineFramer
from referee.transport.connection import Connection
from referee.transport.session import BotSession, open_stream_bot
from referee.transport.timecontrol import TimeControl

Message = dict[str, Any]


class FakeWire:
    """The bot's end: every message it read, and ways to write (or stop)."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.received: list[Message] = []
        self.transcript: list[str] = []  # "< line" read, "> line" written, as in SPEC.md 15
        self.requests = 0
        self.closed = False

    async def send(self, message: Message) -> None:
        await self.raw(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    async def raw(self, data: bytes) -> None:
        self.transcript.extend(
            f"> {line.decode(errors='replace')}" for line in data.split(b"\n") if line
        )
        await self.stream.send_all(data)

    async def reply(self, request: Message, choice: object) -> None:
        await self.send({"type": "reply", "id": request["id"], "choice": choice})

    async def close(self) -> None:
        self.closed = True
        await self.stream.aclose()

    def of_type(self, kind: str) -> list[Message]:
        return [message for message in self.received if message["type"] == kind]

    def events(self) -> list[Message]:
        return [event for batch in self.of_type("events") for event in batch["events"]]


Policy = Callable[[FakeWire, Message], Awaitable[None]]


def random_choice(request: Message, rng: random.Random) -> object:
    decision = request["decision"]
    if decision in ("lead", "dead_hand"):
        return rng.choice(request["legal"])
    if decision == "bid":
        return rng.randint(0, request["max_bid"])
    amounts = [0] * len(request["boodle_cards"])
    for _ in range(request["stake_total"]):
        amounts[rng.randrange(len(amounts))] += 1
    return amounts


def randomly(seed: int = 0) -> Policy:
    rng = random.Random(seed)

    async def policy(wire: FakeWire, request: Message) -> None:
        await wire.reply(request, random_choice(request, rng))

    return policy


async def by_default(wire: FakeWire, request: Message) -> None:
    await wire.reply(request, request["default"])


async def fake_bot(
    stream: trio.abc.Stream,
    wire: FakeWire,
    policy: Policy,
    *,
    name: str,
    ready: Message | None = None,
) -> None:
    """Handshake (``ready`` overrides the ready line), then ``policy`` for each request."""
    framer = LineFramer()
    try:
        while not wire.closed:
            data = await stream.receive_some(65536)
            if not data:
                return
            for line in framer.feed(data):
                wire.transcript.append(f"< {line.decode()}")
                message = json.loads(line)
                wire.received.append(message)
                kind = message["type"]
                if kind == "hello":
                    await wire.send(ready or {"type": "ready", "name": name, "protocol": 1})
                elif kind == "request":
                    wire.requests += 1
                    await policy(wire, message)
                elif kind == "shutdown":
                    return
                if wire.closed:
                    return
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        return


@asynccontextmanager
async def fake_table(
    policies: Sequence[Policy],
    control: TimeControl,
    *,
    ready: Sequence[Message | None] | None = None,
    names: Sequence[str] | None = None,
    lockstep: bool = False,
    sockets: bool = False,
) -> AsyncIterator[tuple[list[BotSession], list[FakeWire]]]:
    """Sessions for fake bots, one per policy, and each bot's wire (what it saw).

    With ``lockstep`` a write completes only when the bot has read it, as if
    pipes had no buffer: a bot that stops reading blocks the referee's writes.
    With ``sockets`` each bot is at the other end of a socket pair, so the
    referee's connection takes its file-descriptor road (``referee.transport.connection``).
    """
    async with trio.open_nursery() as nursery, AsyncExitStack() as stack:
        sessions: list[BotSession] = []
        wires: list[FakeWire] = []
        for index, policy in enumerate(policies):
            pair = (
                _socket_stream_pair
                if sockets
                else trio.testing.lockstep_stream_pair
                if lockstep
                else trio.testing.memory_stream_pair
            )
            referee_end, bot_end = pair()
            wire = FakeWire(bot_end)
            wires.append(wire)
            line = ready[index] if ready is not None else None
            name = names[index] if names is not None else f"bot{index}"
            nursery.start_soon(_run_bot, bot_end, wire, policy, name, line)
            session = await stack.enter_async_context(open_stream_bot(referee_end, name, control))
            sessions.append(session)
        yield sessions, wires
        await stack.aclose()
        await trio.testing.wait_all_tasks_blocked()  # let each bot read its shutdown
        nursery.cancel_scope.cancel()


def _socket_stream_pair() -> tuple[trio.SocketStream, trio.SocketStream]:
    left, right = trio.socket.socketpair()
    return trio.SocketStream(left), trio.SocketStream(right)


async def _run_bot(
    stream: trio.abc.Stream,
    wire: FakeWire,
    policy: Policy,
    name: str,
    ready: Message | None,
) -> None:
    await fake_bot(stream, wire, policy, name=name, ready=ready)


def pipe_pair() -> tuple[Connection, Connection]:
    """Two connections over two real pipes (the descriptors' road): what one sends, the
    other receives."""
    a_read, b_write = os.pipe()
    b_read, a_write = os.pipe()
    a = Connection(
        trio.StapledStream(trio.lowlevel.FdStream(a_write), trio.lowlevel.FdStream(a_read))
    )
    b = Connection(
        trio.StapledStream(trio.lowlevel.FdStream(b_write), trio.lowlevel.FdStream(b_read))
    )
    return a, b
