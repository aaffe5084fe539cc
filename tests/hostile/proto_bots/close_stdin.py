"""At its first request: answers it, closes its input, and keeps running, silent.

The referee's next write to it fails at once (the direct write's EPIPE): the
seat is lost as ``eof`` with the reason, never a hang or a crash of the referee.
"""

import os
import sys
import time

from tests.hostile.proto_bots._wire import Message, Wire, random_choice, run


def policy(wire: Wire, request: Message) -> None:
    choice = random_choice(request)
    wire.reply(request, choice)
    print(f"played {request['id']} {choice}", file=sys.stderr, flush=True)
    os.close(0)
    time.sleep(600)


if __name__ == "__main__":
    run(policy, name="close_stdin")
