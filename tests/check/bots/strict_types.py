"""Breaks SPEC.md 2: dies on a message type it does not know, instead of ignoring it."""

from tests.check.bots._base import Message, Wire, run

KNOWN = {"hello", "match_start", "events", "request", "fault", "match_end", "shutdown"}


def insist(wire: Wire, message: Message) -> None:
    if message.get("type") not in KNOWN:
        raise ValueError(f"unknown message type {message.get('type')!r}")


if __name__ == "__main__":
    run(name="strict-types", on_message=insist)
