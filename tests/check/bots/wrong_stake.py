"""Breaks SPEC.md 11.1: its stakes add up to one chip more than ``stake_total``."""

from tests.check.bots._base import Message, Wire, answer_default, run


def answer(wire: Wire, request: Message) -> None:
    if request["decision"] == "stake":
        amounts = list(request["default"])
        amounts[0] += 1
        wire.reply(request, amounts)
    else:
        answer_default(wire, request)


if __name__ == "__main__":
    run(answer, name="wrong-stake")
