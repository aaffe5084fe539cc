"""Breaks SPEC.md 11.3: bids one chip more than ``max_bid`` (the chips it has)."""

from tests.check.bots._base import Message, Wire, answer_default, run


def answer(wire: Wire, request: Message) -> None:
    if request["decision"] == "bid":
        wire.reply(request, request["max_bid"] + 1)
    else:
        answer_default(wire, request)


if __name__ == "__main__":
    run(answer, name="greedy-bid")
