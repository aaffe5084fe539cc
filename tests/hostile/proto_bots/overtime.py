"""Tries to buy time past its deadline at its first request (stdio only).

It shrinks its input pipe to a page and fills it itself (through
``/proc/self/fd/0``), then, a second before its deadline, sends a reply to a
request that does not exist: a ``protocol`` fault, whose message the referee
cannot write into the full pipe.  While the referee waits on that write, the
bot answers the real request two seconds after its deadline and only then
drains its input, so the referee's next look for a reply comes after the
deadline with the reply already there.  That reply must be judged late.

Times are argument 1 (the request's limit, move time plus margin, in seconds).
"""

import fcntl
import json
import os
import sys
import time

from tests.hostile.proto_bots._wire import Message, Wire, arg, play_randomly, random_choice, run

LIMIT = float(arg(1, "6.5"))
F_SETPIPE_SZ = 1031  # Linux
NOISE = json.dumps({"type": "noise"}).encode() + b"\n"  # lines run() reads and ignores


def fill_own_input() -> None:
    fcntl.fcntl(0, F_SETPIPE_SZ, 4096)
    writer = os.open("/proc/self/fd/0", os.O_WRONLY | os.O_NONBLOCK)
    try:
        while True:
            os.write(writer, NOISE)
    except BlockingIOError:
        pass
    finally:
        os.close(writer)


def policy(wire: Wire, request: Message) -> None:
    if wire.requests > 1:
        play_randomly(wire, request)
        return
    received = time.monotonic()
    fill_own_input()
    time.sleep(max(0.0, received + LIMIT - 1.5 - time.monotonic()))
    wire.send({"type": "reply", "id": request["id"] + 1000, "choice": request["default"]})
    time.sleep(max(0.0, received + LIMIT + 2.0 - time.monotonic()))
    choice = random_choice(request)
    wire.reply(request, choice)
    print(f"overtime {request['id']} {choice}", file=sys.stderr, flush=True)
    # Returning drains the input (run() reads the noise), which lets the referee's write end.


if __name__ == "__main__":
    run(policy, name="overtime")
