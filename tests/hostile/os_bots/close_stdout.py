"""After the handshake, closes its stdout and keeps running (reading stdin, answering nothing)."""

import os
import sys
import time

from tests.hostile.os_bots._play import Message, run, say


def close(request: Message) -> None:
    sys.stdout.flush()
    os.close(1)
    say("stdout closed; still here")
    for _line in sys.stdin:  # keeps reading, so only the closed output can be judged
        pass
    time.sleep(3600)


run(close, name="close_stdout")
