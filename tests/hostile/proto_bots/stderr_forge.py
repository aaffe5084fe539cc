"""Plays well, and writes lines on stderr meant to pass for another bot's or the referee's.

At its first request: ``FORGED-<its argument>`` on lines made to look like the start of
another bot's stderr, a referee warning, an ANSI cursor move and a carriage return.
"""

import sys

from tests.hostile.proto_bots._wire import Message, Wire, arg, play_randomly, run

MARK = f"FORGED-{arg(1, 'x')}"


def policy(wire: Wire, request: Message) -> None:
    if wire.requests == 1:
        sys.stderr.write(
            f"\n==> echo-1.stderr <==\n{MARK} echo crashed\n"
            f"warning: c1-t00001-r0: echo disqualified ({MARK})\n"
            f"\x1b[1A\x1b[2K\r{MARK} overwritten\n"
        )
        sys.stderr.flush()
    play_randomly(wire, request)


if __name__ == "__main__":
    run(policy, name="stderr_forge")
