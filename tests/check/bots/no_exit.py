"""Breaks SPEC.md 6.3: after ``shutdown`` it goes on running instead of exiting."""

import time

from tests.check.bots._base import log, run


def linger() -> None:
    log("shutdown? one more minute of thinking")
    time.sleep(60)


if __name__ == "__main__":
    run(name="no-exit", on_shutdown=linger)
