"""Closes its stdout at its first request but keeps running (and reading)."""

import os
import sys
import time

from tests.referee.bots._loop import Message, Wire, run


def policy(wire: Wire, request: Message) -> None:
    sys.stdout.flush()
    os.close(1)
    time.sleep(600)


if __name__ == "__main__":
    run(policy, name="eof")
