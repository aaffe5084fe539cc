"""Plays, then exits with status 0 (as if finished) at its HOSTILE_AT-th request."""

import os

from tests.hostile.os_bots._play import Message, run, say


def leave(request: Message) -> None:
    say("done here")
    os._exit(0)


run(leave, name="exit_zero")
