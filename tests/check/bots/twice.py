"""Breaks SPEC.md 6.2 (exactly one reply per request): answers its 2nd request twice."""

from tests.check.bots._base import Message, Wire, answer_default, run


def answer(wire: Wire, request: Message) -> None:
    answer_default(wire, request)
    if wire.requests == 2:
        answer_default(wire, request)


if __name__ == "__main__":
    run(answer, name="twice")
