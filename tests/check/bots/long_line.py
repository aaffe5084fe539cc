"""Breaks SPEC.md 4: its 2nd reply is padded with spaces past the 65 536-byte line limit."""

from tests.check.bots._base import Message, Wire, answer_default, run


def answer(wire: Wire, request: Message) -> None:
    if wire.requests == 2:
        padding = " " * 70_000
        line = f'{{"type":"reply","id":{request["id"]},{padding}"choice":"x"}}\n'
        wire.raw(line.encode())
    else:
        answer_default(wire, request)


if __name__ == "__main__":
    run(answer, name="long-line")
