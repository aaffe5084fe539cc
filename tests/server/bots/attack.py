"""A bot that behaves through newmarket check, then attacks from inside a league match.

After the check's matches (it counts ``match_start``), at its first request it
starts 20 children that leave its process group (``setsid``) and sleep
(``sleep 120``, which the test looks for afterwards), tries to write into its
own directory, SIGKILLs its parent (the table worker refereeing it, were it
not for the sandbox's pid namespace), and burns CPU for a few seconds.  The
server must go on, and nothing the bot started may outlive its match.
"""

import contextlib
import json
import os
import sys
import time

matches = 0
for line in sys.stdin:
    message = json.loads(line)
    kind = message.get("type")
    if kind == "hello":
        print(json.dumps({"type": "ready", "name": "attack", "protocol": 1}), flush=True)
    elif kind == "match_start":
        matches += 1
    elif kind == "request":
        if matches > 15:  # past the check's matches: a league match
            children = []
            for _ in range(20):
                try:
                    pid = os.fork()
                except OSError:
                    break
                if pid == 0:
                    os.setsid()
                    os.execvp("sleep", ["sleep", "120"])
                children.append(pid)
            with contextlib.suppress(OSError), open("attack.pids", "a") as pids:
                pids.write("".join(f"{pid}\n" for pid in children))
            with contextlib.suppress(OSError):
                os.kill(os.getppid(), 9)
            until = time.monotonic() + 3
            while time.monotonic() < until:
                pass
            sys.exit(0)
        print(
            json.dumps({"type": "reply", "id": message["id"], "choice": message["default"]}),
            flush=True,
        )
    elif kind == "shutdown":
        break
