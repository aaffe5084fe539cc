"""A bot that behaves through its admission, then attacks its table from inside a match.

Its admission (``newmarket check``, then matches played exactly as a table
plays them) cannot be told from play, so the test arms the attack once the
version is admitted: it writes ``armed`` into the bot's own directory (which
the bot sees, read-only), holding a mark.  While it is there, at its first
request of a match, the bot starts 20 children that leave its process group
(``setsid``) and sleep an hour under the mark as their name (``argv[0]``,
which the test looks for afterwards), tries to write into its own directory,
SIGKILLs its parent (the table worker refereeing it, were it not for the
sandbox's pid namespace), and burns CPU for a few seconds.  It says each step
on stderr, which the match log keeps, so the test knows the attack ran.  The
server must go on, and nothing the bot started may outlive its match.
"""

import json
import os
import sys
import time


def say(text: str) -> None:
    sys.stderr.write(f"ATTACK {text}\n")
    sys.stderr.flush()


def attack(mark: str) -> None:
    children: list[int] = []
    for _ in range(20):
        try:
            pid = os.fork()
        except OSError as error:
            say(f"fork refused: {error.strerror}")
            break
        if pid == 0:
            os.setsid()
            os.execvp("sleep", [mark, "3600"])
        children.append(pid)
    say(f"started {len(children)} children as {mark}")
    try:
        with open("attack.pids", "a") as pids:
            pids.write("".join(f"{pid}\n" for pid in children))
    except OSError as error:
        say(f"write into its own directory refused: {error.strerror}")
    else:
        say("write into its own directory succeeded")
    try:
        os.kill(os.getppid(), 9)
    except OSError as error:
        say(f"SIGKILL to its parent refused: {error.strerror}")
    else:
        say("SIGKILL sent to its parent")
    until = time.monotonic() + 3
    while time.monotonic() < until:
        pass
    say("done")
    sys.exit(0)


for line in sys.stdin:
    message = json.loads(line)
    kind = message.get("type")
    if kind == "hello":
        print(json.dumps({"type": "ready", "name": "attack", "protocol": 1}), flush=True)
    elif kind == "request":
        try:
            with open("armed") as armed:
                attack(armed.read().strip())
        except FileNotFoundError:
            pass
        print(
            json.dumps({"type": "reply", "id": message["id"], "choice": message["default"]}),
            flush=True,
        )
    elif kind == "shutdown":
        break
