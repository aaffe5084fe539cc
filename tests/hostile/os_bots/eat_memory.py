"""At its first request, allocates and touches memory, 16 MiB at a time, up to argv[1] MiB."""

import sys

from tests.hostile.os_bots._play import Message, choice, run, say, send

CAP_MIB = int(sys.argv[1]) if len(sys.argv) > 1 else 1024


def eat(request: Message) -> None:
    hoard = []
    try:
        for _ in range(CAP_MIB // 16):
            hoard.append(b"\x01" * (16 << 20))  # written: every page touched
    except MemoryError:
        say(f"MemoryError after {len(hoard) * 16} MiB")
    say(f"holding {len(hoard) * 16} MiB")
    send({"type": "reply", "id": request["id"], "choice": choice(request)})


run(eat, name="eat_memory")
