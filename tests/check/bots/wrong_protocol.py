"""Breaks SPEC.md 6.1: its ``ready`` claims protocol version 2, which the referee does not speak."""

from tests.check.bots._base import run

if __name__ == "__main__":
    run(name="wrong-protocol", protocol=2)
