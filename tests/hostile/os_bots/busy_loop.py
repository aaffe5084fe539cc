"""Spins on the CPU for ever at its first request."""

from tests.hostile.os_bots._play import Message, run


def spin(request: Message) -> None:
    while True:
        pass


run(spin, name="busy_loop")
