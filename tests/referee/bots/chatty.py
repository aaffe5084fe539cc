"""Greets on stdout before its ready (argument 1: blank lines first), as a script for people would.

Argument 2 is the greeting (default ``Loading the model...``).
"""

import json
import sys

from tests.referee.bots._loop import arg

if __name__ == "__main__":
    blank = int(arg(1, "0"))
    sys.stdout.write("\n" * blank + arg(2, "Loading the model...") + "\n")
    sys.stdout.write(json.dumps({"type": "ready", "name": "chatty", "protocol": 1}) + "\n")
    sys.stdout.flush()
    for _line in sys.stdin:
        pass
