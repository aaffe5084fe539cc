"""The other seats of a scripted table: tiny bots in the referee's own process.

An opponent is a policy (a function from a request to a choice, or ``HangUp``)
run by ``play_opponent`` on one end of an in-memory stream: no process to
start, nothing that can be slow, and whatever a scenario needs (an
auctioneer, a bot that hangs up so that the bot under test sees
``seat_disqualified``, uniformly random choices for the random matches).
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable
from typing import Any

import msgspec
import trio

from protocol.framing import LineFramer
from protocol.messages import (
    PROTOCOL_VERSION,
    Choice,
    Ready,
    Reply,
    encode,
)

Message = dict[str, Any]


class HangUp:
    """An opponent policy's answer that closes its connection instead of replying."""


Policy = Callable[[Message], "Choice | HangUp"]


def by_default(request: Message) -> Choice | HangUp:
    """Reply with the request's ``default``: always legal, and keeps every run predictable."""
    choice: Choice = request["default"]
    return choice


def auctioneer(request: Message) -> Choice | HangUp:
    """Auction the dead hand whenever allowed and bid 1 chip in every auction."""
    if request["decision"] == "dead_hand" and "auction" in request["legal"]:
        return "auction"
    if request["decision"] == "bid":
        return min(1, int(request["max_bid"]))
    return by_default(request)


def hang_up(request: Message) -> Choice | HangUp:
    """Close the connection at the first request (the referee disqualifies the seat: eof)."""
    return HangUp()


def random_policy(rng: random.Random) -> Policy:
    """Any legal choice, uniformly (a bid: any whole number allowed); stakes by default."""

    def choose(request: Message) -> Choice | HangUp:
        legal = request.get("legal")
        if isinstance(legal, list) and legal:
            choice: Choice = rng.choice(legal)
            return choice
        if request["decision"] == "bid":
            return rng.randint(int(request["min_bid"]), int(request["max_bid"]))
        return by_default(request)

    return choose


async def play_opponent(stream: trio.abc.Stream, name: str, policy: Policy) -> None:
    """A scripted bot on one end of a stream: ready, then ``policy`` for each request."""
    framer = LineFramer()
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        while True:
            data = await stream.receive_some(65536)
            if not data:
                return
            for line in framer.feed(bytes(data)):
                message = msgspec.json.decode(line)
                kind = message.get("type") if isinstance(message, dict) else None
                if kind == "hello":
                    await stream.send_all(encode(Ready(name=name, protocol=PROTOCOL_VERSION)))
                elif kind == "request":
                    choice = policy(message)
                    if isinstance(choice, HangUp):
                        await stream.aclose()
                        return
                    await stream.send_all(encode(Reply(id=message["id"], choice=choice)))
                elif kind == "shutdown":
                    return
