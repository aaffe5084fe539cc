"""Answers with valid JSON of the wrong shape, a different one each time.

1: an array; 2: a reply whose id is a string; 3: a reply with an unknown field.
"""

import json

from tests.hostile.proto_bots._wire import Message, Wire, run


def shape(number: int, request: Message) -> object:
    if number % 3 == 1:
        return [request["id"], request["default"]]
    if number % 3 == 2:
        return {"type": "reply", "id": str(request["id"]), "choice": request["default"]}
    return {"type": "reply", "id": request["id"], "card": request["default"]}


def policy(wire: Wire, request: Message) -> None:
    wire.raw(json.dumps(shape(wire.requests, request)).encode() + b"\n")


if __name__ == "__main__":
    run(policy, name="wrong_shape")
