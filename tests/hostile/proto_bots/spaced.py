"""Replies with JSON whitespace in the places a log's tightening must tell apart.

One spelling per request, in this order, then plain replies: spaces inside a string and
outside it; spaces only inside a string; exactly 64 bytes of spaces outside; 65; then
three malformed lines with a thousand spaces each (not JSON, not UTF-8, nested past the
protocol's limit).  The string is a first ``choice`` the duplicate key after it
overrides (msgspec keeps the last), so the reply is still legal.
"""

import json

from tests.hostile.proto_bots._wire import Message, Wire, random_choice, run

INSIDE = " " * 40


def spellings(request: Message) -> list[bytes]:
    head = f'{{"type":"reply","id":{request["id"]}'
    c = json.dumps(random_choice(request))
    pad = " " * 1000
    return [
        f'{head},"choice":"{INSIDE}",{" " * 100}"choice":{c}}}'.encode(),
        f'{head},"choice":"{INSIDE}",{" " * 40}"choice":{c}}}'.encode(),
        f'{head},{" " * 64}"choice":{c}}}'.encode(),
        f'{head},{" " * 65}"choice":{c}}}'.encode(),
        f'{head},"choice":{c}{pad}'.encode(),
        f'{head},"choice":{c},"x":"'.encode() + b"\xff\xfe" + f'"{pad}}}'.encode(),
        f'{head},"choice":{c},"x":{"[" * 40}{pad}{"]" * 40}}}'.encode(),
    ]


def policy(wire: Wire, request: Message) -> None:
    options = spellings(request)
    if wire.requests <= len(options):
        wire.raw(options[wire.requests - 1] + b"\n")
    else:
        wire.send({"type": "reply", "id": request["id"], "choice": random_choice(request)})


if __name__ == "__main__":
    run(policy, name="spaced")
