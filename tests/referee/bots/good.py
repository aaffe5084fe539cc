"""Plays random legal choices and nothing else: the well-behaved baseline."""

from tests.referee.bots._loop import run

if __name__ == "__main__":
    run(name="good")
