"""Sends ten kilobytes of nested JSON (``[[[[...]]]]``): as its reply, or as its ``ready``.

``nested.py reply`` (the default) answers the first request with the nesting
inside a well-formed reply, the second with a bare nested array, and every
later one legally, so its seat must get two ``malformed`` faults and play on.
``nested.py ready`` sends the nesting instead of ``ready`` (a start-up fault).
A recursive decoder raises ``RecursionError`` on either, past its own errors.
"""

from tests.hostile.proto_bots._wire import Message, Wire, arg, play_randomly, ready_line, run

DEPTH = 5000
NESTED = b"[" * DEPTH + b"]" * DEPTH


def policy(wire: Wire, request: Message) -> None:
    if wire.requests == 1:
        wire.raw(b'{"type":"reply","id":%d,"choice":%s}\n' % (request["id"], NESTED))
    elif wire.requests == 2:
        wire.raw(NESTED + b"\n")
    else:
        play_randomly(wire, request)


def nested_ready() -> None:
    wire = Wire()
    for message in wire.messages():
        if message.get("type") == "hello":
            wire.raw(NESTED + b"\n")
            ready_line("unused")  # the real line is never sent
        elif message.get("type") == "shutdown":
            return


if __name__ == "__main__":
    if arg(1, "reply") == "ready":
        nested_ready()
    else:
        run(policy, name="nested")
