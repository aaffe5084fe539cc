"""Walks the edges of the referee's line reading, one per request, then loses its seat.

1. A valid reply exactly ``MAX_LINE_BYTES`` long (padded with JSON spaces), written
   in 1 KiB pieces, each flushed: no read of the referee sees the whole line, the
   single-line fast path never applies, and the reply must be played.
2. A reply with a raw NUL byte inside its JSON string: malformed.
3. In one write: a reply whose choice is a lone UTF-16 surrogate (``"\\ud800"``), then
   a line one byte over the cap.  The first is malformed; the second ends the seat
   as ``line_too_long`` (the whole line before it was judged first).

It prints ``played <id> <choice>`` for the first request, for the test to compare.
"""

import json
import sys
import time

from tests.hostile.proto_bots._wire import Message, Wire, random_choice, run

MAX_LINE_BYTES = 65536  # protocol.framing's cap (bots do not import the referee)


def padded(reply: Message, length: int) -> bytes:
    """``reply`` as one JSON line of exactly ``length`` bytes before its newline."""
    text = json.dumps(reply).encode()
    return text[:-1] + b" " * (length - len(text)) + b"}"


def policy(wire: Wire, request: Message) -> None:
    if wire.requests == 1:
        choice = random_choice(request)
        line = padded({"type": "reply", "id": request["id"], "choice": choice}, MAX_LINE_BYTES)
        assert len(line) == MAX_LINE_BYTES
        for start in range(0, len(line), 1024):
            wire.raw(line[start : start + 1024])
        wire.raw(b"\n")
        print(f"played {request['id']} {choice}", file=sys.stderr, flush=True)
    elif wire.requests == 2:
        wire.raw(b'{"type":"reply","id":%d,"choice":"A\x00S"}\n' % request["id"])
    elif wire.requests == 3:
        surrogate = b'{"type":"reply","id":%d,"choice":"\\ud800"}\n' % request["id"]
        over = padded({"type": "reply", "id": request["id"], "choice": "x"}, MAX_LINE_BYTES + 1)
        wire.raw(surrogate + over + b"\n")
        time.sleep(600)  # keeps running: the verdict must not wait for it


if __name__ == "__main__":
    run(policy, name="edges")
