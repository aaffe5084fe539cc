"""Forks at its first request until the system refuses (at most argv[1] children), then plays on.

Each child sleeps (holding a process slot).  Bounded, so that a machine
without a process limit is not brought down by the test that shows it.
"""

import os
import sys
import time

from tests.hostile.os_bots._play import Message, choice, run, say, send

CAP = int(sys.argv[1]) if len(sys.argv) > 1 else 400


def bomb(request: Message) -> None:
    children = 0
    refusal = "none"
    while children < CAP:
        try:
            pid = os.fork()
        except OSError as error:
            refusal = str(error)
            break
        if pid == 0:
            time.sleep(3600)
            os._exit(0)
        children += 1
    say(f"forked {children} children; refused: {refusal}")
    send({"type": "reply", "id": request["id"], "choice": choice(request)})


run(bomb, name="fork_bomb")
