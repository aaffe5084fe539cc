"""Writes blank lines (skipped by the framer) for SECONDS (argument 1), at its first request
or, with ``before_ready`` (argument 2), right after hello instead of its ready.

No line ever comes whole, so the referee must time the request (or the
handshake) out while bytes keep arriving: a reader that loops on data without
passing trio's scheduler never sees its deadline, and every other seat waits
with it.
"""

import time

from tests.hostile.proto_bots._wire import Message, Wire, arg, run

SECONDS = float(arg(1, "40"))
BLANKS = b"\n" * 65536


def flood(wire: Wire) -> None:
    end = time.monotonic() + SECONDS
    try:
        while time.monotonic() < end:
            wire.raw(BLANKS)
    except OSError:
        return
    time.sleep(600)  # then silent: the verdict must not wait for it


def policy(wire: Wire, request: Message) -> None:
    flood(wire)


if __name__ == "__main__":
    if arg(2, "") == "before_ready":
        wire = Wire()
        wire.reader.readline()  # hello
        flood(wire)
    else:
        run(policy, name="blank_flood")
