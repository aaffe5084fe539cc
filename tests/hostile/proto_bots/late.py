"""Answers each odd request late: only when the next request arrives, just before answering it.

The late reply carries the *next* request's last legal choice and the on-time
reply its first, so a referee that applied the late line to the later request
would play a different choice than the log's reply.  Every request's id is
printed to stderr as ``answered <id> <choice>`` for the test to compare.
"""

import sys

from tests.hostile.proto_bots._wire import Message, Wire, play_randomly, run

held: list[Message] = []


def policy(wire: Wire, request: Message) -> None:
    if wire.requests % 2 == 1:
        held.append(request)  # no answer now: the referee times out
        return
    if held and request["legal"]:
        first = held.pop()
        wire.reply(first, request["legal"][-1])
        wire.reply(request, request["legal"][0])
        print(f"answered {request['id']} {request['legal'][0]}", file=sys.stderr, flush=True)
        return
    held.clear()
    play_randomly(wire, request)


if __name__ == "__main__":
    run(policy, name="late")
