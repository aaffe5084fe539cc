"""Every reply legal, but carrying a first ``choice`` of 64 kB of random letters.

JSON leaves a repeated key to the reader; msgspec keeps the last, so the second
``choice``, a legal one, is played and the first is never read.  The line is as
hard to compress as ``padded.py``'s whitespace (about 6 bits a byte), written at
every request.  ``doubled.py BYTES`` sets the line's length (default: 65,000).
"""

import json
import random
import string

from tests.hostile.proto_bots._wire import Message, Wire, arg, random_choice, run

LENGTH = int(arg(1, "65000"))
DRAW = random.Random(7)
LETTERS = string.ascii_letters + string.digits


def policy(wire: Wire, request: Message) -> None:
    choice = json.dumps(random_choice(request))
    head = f'{{"type":"reply","id":{request["id"]},"choice":"'
    tail = f'","choice":{choice}}}'
    room = max(0, LENGTH - len(head) - len(tail))
    junk = "".join(DRAW.choice(LETTERS) for _ in range(room))
    wire.raw((head + junk + tail + "\n").encode())


if __name__ == "__main__":
    run(policy, name="doubled")
