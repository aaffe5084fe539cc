"""Answers its first request late: only when the second arrives, just before answering that.

The late reply carries the second request's *last* legal choice and the
on-time reply its *first*, so a referee that applied the late line to the
later request would play a different card than the log's reply.
"""

from tests.referee.bots._loop import Message, Wire, play_randomly, run

held: list[Message] = []


def policy(wire: Wire, request: Message) -> None:
    if wire.requests == 1:
        held.append(request)  # no answer now: the referee times out
        return
    if held:
        first = held.pop()
        late = request["legal"][-1] if request["legal"] else request["default"]
        wire.reply(first, late)
        on_time = request["legal"][0] if request["legal"] else request["default"]
        wire.reply(request, on_time)
        return
    play_randomly(wire, request)


if __name__ == "__main__":
    run(policy, name="late")
