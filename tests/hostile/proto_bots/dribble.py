"""Writes every reply a byte at a time, each byte flushed, with a pause between bytes.

The referee looks for a quick bot's reply before it sleeps (``Connection.read_soon``'s
spin), then sleeps in ``poll``, then waits the trio way: a reply that takes a few
milliseconds to arrive is seen in pieces by each of those reads in turn, and must
be assembled and played like any other.  Pauses alternate between a tenth of a
millisecond (within a spin) and a millisecond (past it).

It prints ``played <id> <choice>`` for each request, for the test to compare.
"""

import json
import sys
import time

from tests.hostile.proto_bots._wire import Message, Wire, random_choice, run


def policy(wire: Wire, request: Message) -> None:
    choice = random_choice(request)
    line = json.dumps({"type": "reply", "id": request["id"], "choice": choice}).encode()
    for index, byte in enumerate(line + b"\n"):
        wire.raw(bytes([byte]))
        time.sleep(0.0001 if index % 2 else 0.001)
    print(f"played {request['id']} {json.dumps(choice)}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    run(policy, name="dribble")
