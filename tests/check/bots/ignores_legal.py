"""Breaks SPEC.md 11.4: leads the lowest card of the first suit in its hand, worked out
by itself, instead of a card from ``legal``; right until a rule restricts the suit."""

from tests.check.bots._base import Message, Wire, answer_default, run


def answer(wire: Wire, request: Message) -> None:
    if request["decision"] == "lead":
        wire.reply(request, request["hand"][0])  # hands are sorted by suit, then rank
    else:
        answer_default(wire, request)


if __name__ == "__main__":
    run(answer, name="ignores-legal")
