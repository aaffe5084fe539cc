"""Breaks SPEC.md 11.4: leads the highest card it holds that is not in ``legal``."""

from tests.check.bots._base import Message, Wire, answer_default, log, run


def answer(wire: Wire, request: Message) -> None:
    illegal = [card for card in request["hand"] if card not in request["legal"]]
    if request["decision"] == "lead" and illegal:
        log(f"leading {illegal[-1]}, the last card of my hand")
        wire.reply(request, illegal[-1])
    else:
        answer_default(wire, request)


if __name__ == "__main__":
    run(answer, name="illegal-lead")
