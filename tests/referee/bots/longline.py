"""At its ``N``-th request (argument 1), writes ``BYTES`` (argument 2) without a newline."""

import time

from tests.referee.bots._loop import Message, Wire, arg, play_randomly, run

WHICH = int(arg(1, "1"))
SIZE = int(arg(2, "200000"))


def policy(wire: Wire, request: Message) -> None:
    if wire.requests == WHICH:
        wire.raw(b"x" * SIZE)
        time.sleep(60)  # keeps running: the verdict must not wait for it
    play_randomly(wire, request)


if __name__ == "__main__":
    run(policy, name="longline")
