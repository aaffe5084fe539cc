"""At its first request, answers it, then floods valid reply lines to it for ever.

Every line after the first is a well-formed second reply (a ``protocol``
fault); the bot never stops writing and never reads again.
"""

import json

from tests.hostile.proto_bots._wire import Message, Wire, run


def policy(wire: Wire, request: Message) -> None:
    reply = {"type": "reply", "id": request["id"], "choice": request["default"]}
    line = json.dumps(reply).encode() + b"\n"
    wire.raw(line)
    batch = line * 1000
    try:
        while True:
            wire.raw(batch)
    except OSError:
        return


if __name__ == "__main__":
    run(policy, name="flood")
