"""Stops itself with SIGSTOP at its first request (only SIGKILL or SIGCONT move it again)."""

import os
import signal

from tests.hostile.os_bots._play import Message, run, say


def stop(request: Message) -> None:
    say("stopping myself")
    os.kill(os.getpid(), signal.SIGSTOP)


run(stop, name="sigstop")
