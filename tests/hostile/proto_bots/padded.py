"""Every reply valid, and padded to nearly the line cap with JSON whitespace drawn at random.

Spaces, tabs and carriage returns in a random order: a reply a bot may send, which
no compressor can squeeze much (about 1.6 bits a byte), written at every request.
``padded.py BYTES`` sets the line's length (default: 65,000).
"""

import json
import random

from tests.hostile.proto_bots._wire import Message, Wire, arg, random_choice, run

LENGTH = int(arg(1, "65000"))
DRAW = random.Random(7)


def policy(wire: Wire, request: Message) -> None:
    reply = json.dumps({"type": "reply", "id": request["id"], "choice": random_choice(request)})
    room = max(0, LENGTH - len(reply))
    padding = "".join(DRAW.choice(" \t\r") for _ in range(room))
    wire.raw((reply[:-1] + padding + "}\n").encode())


if __name__ == "__main__":
    run(policy, name="padded")
