"""At its first request, writes a file in directory argv[1], 1 MiB at a time, up to argv[2] MiB."""

import os
import sys

from tests.hostile.os_bots._play import Message, choice, run, say, send

DIRECTORY = sys.argv[1]
CAP_MIB = int(sys.argv[2]) if len(sys.argv) > 2 else 256


def fill(request: Message) -> None:
    written = 0
    with open(os.path.join(DIRECTORY, "filler"), "wb") as handle:
        try:
            for _ in range(CAP_MIB):
                handle.write(b"\0" * (1 << 20))
                handle.flush()
                written += 1
        except OSError as error:
            say(f"write refused after {written} MiB: {error}")
    say(f"wrote {written} MiB")
    send({"type": "reply", "id": request["id"], "choice": choice(request)})


run(fill, name="fill_disk")
