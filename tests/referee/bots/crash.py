"""Exits with status ``CODE`` (argument 2) at its ``N``-th request (argument 1).

A negative ``CODE`` kills itself with that signal instead; ``N`` of 0 exits
before the handshake.
"""

import os
import sys

from tests.referee.bots._loop import Message, Wire, arg, play_randomly, run

WHICH = int(arg(1, "1"))
CODE = int(arg(2, "3"))


def die() -> None:
    print("crash.py: dying on purpose", file=sys.stderr, flush=True)
    if CODE < 0:
        os.kill(os.getpid(), -CODE)
    os._exit(CODE)


def policy(wire: Wire, request: Message) -> None:
    if wire.requests == WHICH:
        die()
    play_randomly(wire, request)


if __name__ == "__main__":
    if WHICH == 0:
        die()
    run(policy, name="crash")
