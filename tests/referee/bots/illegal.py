"""Leads a card it may not lead (one not in ``legal``) whenever it can."""

from tests.referee.bots._loop import Message, Wire, play_randomly, run

DECK = [rank + suit for suit in "CDHS" for rank in "23456789TJQKA"]


def policy(wire: Wire, request: Message) -> None:
    if request["decision"] == "lead":
        wrong = next(card for card in DECK if card not in request["legal"])
        wire.reply(request, wrong)
        return
    play_randomly(wire, request)


if __name__ == "__main__":
    run(policy, name="illegal")
