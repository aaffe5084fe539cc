"""Answers with valid JSON of the wrong shape: a misspelt field, with the right id."""

from tests.referee.bots._loop import Message, Wire, run


def policy(wire: Wire, request: Message) -> None:
    wire.send({"type": "reply", "id": request["id"], "choise": request["default"]})


if __name__ == "__main__":
    run(policy, name="wrongshape")
