"""Breaks SPEC.md 3.3: dies at its 5th request, with a traceback on stderr, as a bug would."""

from tests.check.bots._base import Message, Wire, answer_default, run


def answer(wire: Wire, request: Message) -> None:
    if wire.requests == 5:
        raise KeyError("max_bid")  # exits 1 with a traceback on stderr
    answer_default(wire, request)


if __name__ == "__main__":
    run(answer, name="crash")
