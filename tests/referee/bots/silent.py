"""Starts but never says ready (argument 1 ``exit``: exits with status 2 instead)."""

import sys
import time

from tests.referee.bots._loop import arg

if __name__ == "__main__":
    if arg(1, "") == "exit":
        print("silent.py: no ready from me", file=sys.stderr, flush=True)
        sys.exit(2)
    time.sleep(600)
