"""Sleeps ``SECONDS`` (argument 2) before answering its ``N``-th request (argument 1; 0: every)."""

import time

from tests.referee.bots._loop import Message, Wire, arg, play_randomly, run

WHICH = int(arg(1, "1"))
SECONDS = float(arg(2, "5"))


def policy(wire: Wire, request: Message) -> None:
    if WHICH in (0, wire.requests):
        time.sleep(SECONDS)
    play_randomly(wire, request)


if __name__ == "__main__":
    run(policy, name="slow")
