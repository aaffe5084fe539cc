"""Breaks SPEC.md 12: sleeps SECONDS (argument 1, default 3) before its 3rd reply."""

import sys
import time

from tests.check.bots._base import Message, Wire, answer_default, log, run

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0


def answer(wire: Wire, request: Message) -> None:
    if wire.requests == 3:
        log(f"request {request['id']}: thinking for {SECONDS} s with {request['time_left_ms']} ms")
        time.sleep(SECONDS)
    answer_default(wire, request)


if __name__ == "__main__":
    run(answer, name="slow")
