"""A well-behaved bot: random legal choices (the hostile bots' table mates)."""

from tests.hostile.proto_bots._wire import run

if __name__ == "__main__":
    run(name="good")
