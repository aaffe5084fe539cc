"""At its first request, writes MEGABYTES (argument 1, default 300) MiB without a newline.

It writes in 1 MiB pieces, so the bot itself stays small; the referee must
give up after 64 KiB without reading, let alone keeping, the rest.
"""

import sys
import time

from tests.hostile.proto_bots._wire import Message, Wire, arg, run

MEGABYTES = int(arg(1, "300"))
PIECE = b"x" * (1 << 20)


def policy(wire: Wire, request: Message) -> None:
    try:
        for _ in range(MEGABYTES):
            wire.writer.write(PIECE)
        wire.writer.flush()
    except (BrokenPipeError, OSError):
        pass
    print("wrote it all", file=sys.stderr, flush=True)
    time.sleep(600)  # keeps running: the verdict must not wait for it


if __name__ == "__main__":
    run(policy, name="huge_line")
