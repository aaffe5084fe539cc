"""Breaks SPEC.md 6.3: exits at ``shutdown`` but not when its input ends without one."""

import time

from tests.check.bots._base import run


def linger() -> None:
    time.sleep(60)


if __name__ == "__main__":
    run(name="no-eof-exit", on_end_of_input=linger)
