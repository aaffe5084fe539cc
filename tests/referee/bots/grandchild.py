"""Starts a grandchild that holds stdout and stderr open and sleeps, then plays.

Argument 1 ``crash``: exits at its first request, leaving the grandchild
holding the pipes, so the referee must see the exit without an end of stream.
Argument 2 ``term``: both ignore SIGTERM (only SIGKILL ends them).
"""

import os
import signal
import subprocess
import sys

from tests.referee.bots._loop import Message, Wire, arg, play_randomly, run

MODE = arg(1, "play")
if arg(2, "") == "term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

SLEEPER = (
    "import signal, time\nif {ign}: signal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(600)"
)


def policy(wire: Wire, request: Message) -> None:
    if MODE == "crash":
        os._exit(4)
    play_randomly(wire, request)


if __name__ == "__main__":
    code = SLEEPER.format(ign=arg(2, "") == "term")
    subprocess.Popen([sys.executable, "-c", code])  # inherits stdout and stderr
    print(f"grandchild.py: started a grandchild in group {os.getpgrp()}", file=sys.stderr)
    sys.stderr.flush()
    run(policy, name="grandchild")
