"""Answers every request twice in one write: the default, then the same reply again."""

import json

from tests.hostile.proto_bots._wire import Message, Wire, run


def policy(wire: Wire, request: Message) -> None:
    line = json.dumps({"type": "reply", "id": request["id"], "choice": request["default"]})
    wire.raw((line + "\n").encode() * 2)


if __name__ == "__main__":
    run(policy, name="twice")
