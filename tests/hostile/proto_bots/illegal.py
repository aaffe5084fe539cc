"""Answers every request with a well-formed choice the rules forbid.

A lead of a card it does not hold, a dead-hand choice that does not exist in
these rules' offer ("buy" without the purchase rule), a bid above its chips,
or stakes that do not add up to the stake total.
"""

from tests.hostile.proto_bots._wire import Message, Wire, run

ALL = [rank + suit for suit in "CDHS" for rank in "23456789TJQKA"]


def illegal(request: Message) -> object:
    decision = request["decision"]
    if decision == "lead":
        return next(card for card in ALL if card not in request["hand"])
    if decision == "dead_hand":
        return next(word for word in ("buy", "auction", "exchange") if word not in request["legal"])
    if decision == "bid":
        return request["max_bid"] + 1
    return [request["stake_total"] + 1] + [0] * (len(request["boodle_cards"]) - 1)


def policy(wire: Wire, request: Message) -> None:
    wire.reply(request, illegal(request))


if __name__ == "__main__":
    run(policy, name="illegal")
