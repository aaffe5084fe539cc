"""Plays, then dies of SIGSEGV at its HOSTILE_AT-th request."""

import os
import signal

from tests.hostile.os_bots._play import Message, run, say


def crash(request: Message) -> None:
    say("segfaulting now")
    os.kill(os.getpid(), signal.SIGSEGV)


run(crash, name="crash_mid")
