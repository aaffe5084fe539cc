"""Answers every request twice."""

from tests.referee.bots._loop import Message, Wire, play_randomly, run


def policy(wire: Wire, request: Message) -> None:
    play_randomly(wire, request)
    play_randomly(wire, request)


if __name__ == "__main__":
    run(policy, name="twice")
