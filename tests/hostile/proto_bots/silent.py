"""Handshakes, reads every request, and never answers one."""

from tests.hostile.proto_bots._wire import Message, Wire, run


def ignore(wire: Wire, request: Message) -> None:
    pass


if __name__ == "__main__":
    run(ignore, name="silent")
