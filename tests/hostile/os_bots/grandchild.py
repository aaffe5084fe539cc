"""Leaves a grandchild holding stdin, stdout and stderr open, then crashes (exit status 9).

With ``setsid`` as argv[1] the grandchild also leaves the bot's session and
process group, so only a cgroup can still find it.
"""

import os
import sys
import time

from tests.hostile.os_bots._play import Message, run, say


def spawn_and_die(request: Message) -> None:
    if os.fork() == 0:
        if sys.argv[1:] == ["setsid"]:
            os.setsid()
        if os.fork() == 0:
            say(f"grandchild {os.getpid()}")
            time.sleep(3600)  # holding the pipes
            os._exit(0)
        os._exit(0)
    os.wait()
    time.sleep(0.2)  # the grandchild has said its pid
    os._exit(9)


run(spawn_and_die, name="grandchild")
