"""Breaks SPEC.md 8.2: answers its 2nd request with an id the referee never issued."""

from tests.check.bots._base import Message, Wire, answer_default, run


def answer(wire: Wire, request: Message) -> None:
    if wire.requests == 2:
        wire.send({"type": "reply", "id": request["id"] + 1000, "choice": request["default"]})
    answer_default(wire, request)


if __name__ == "__main__":
    run(answer, name="wrong-id")
