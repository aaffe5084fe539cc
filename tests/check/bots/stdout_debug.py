"""Breaks SPEC.md 3.1: prints a debugging line to standard output at its 3rd request."""

from tests.check.bots._base import Message, Wire, answer_default, run


def answer(wire: Wire, request: Message) -> None:
    if wire.requests == 3:
        wire.raw(f"thinking about {request['legal']}...\n".encode())
    answer_default(wire, request)


if __name__ == "__main__":
    run(answer, name="stdout-debug")
