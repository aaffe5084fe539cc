"""At its first request: the reply and half a line in one write, then closes stdout.

It keeps running and reading its input, so only the closed output is judged:
the reply is played, and the next read finds the end of the stream after an
unterminated line (``eof``), never a hang.
"""

import json
import os
import sys
import time

from tests.hostile.proto_bots._wire import Message, Wire, random_choice, run


def policy(wire: Wire, request: Message) -> None:
    choice = random_choice(request)
    reply = json.dumps({"type": "reply", "id": request["id"], "choice": choice}).encode()
    reply += b"\n"
    wire.raw(reply + b'{"type":')
    os.close(1)
    print(f"played {request['id']} {choice}", file=sys.stderr, flush=True)
    for _line in sys.stdin:
        pass
    time.sleep(600)


if __name__ == "__main__":
    run(policy, name="reply_then_close")
