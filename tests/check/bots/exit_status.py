"""Breaks SPEC.md 6.3: exits with status 3, not 0, at ``shutdown``."""

import sys

from tests.check.bots._base import run


def bad_exit() -> None:
    sys.exit(3)


if __name__ == "__main__":
    run(name="exit-status", on_shutdown=bad_exit)
