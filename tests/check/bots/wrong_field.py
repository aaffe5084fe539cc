"""Breaks SPEC.md 8.2: its 2nd reply calls the choice ``card`` instead of ``choice``."""

from tests.check.bots._base import Message, Wire, answer_default, run


def answer(wire: Wire, request: Message) -> None:
    if wire.requests == 2:
        wire.send({"type": "reply", "id": request["id"], "card": request["default"]})
    else:
        answer_default(wire, request)


if __name__ == "__main__":
    run(answer, name="wrong-field")
