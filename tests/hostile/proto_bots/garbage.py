"""Answers every request with a line that is not JSON (bytes that are not even UTF-8)."""

from tests.hostile.proto_bots._wire import Message, Wire, run


def policy(wire: Wire, request: Message) -> None:
    wire.raw(b"\xff\xfe garbage {{{ not json\n")


if __name__ == "__main__":
    run(policy, name="garbage")
