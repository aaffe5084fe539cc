"""Breaks SPEC.md 3.3 and 6: exits (status 0) after its first ``match_end``, as if one
process played one match."""

import sys

from tests.check.bots._base import Message, Wire, run


def leave(wire: Wire, message: Message) -> None:
    if message.get("type") == "match_end":
        sys.exit(0)


if __name__ == "__main__":
    run(name="one-match", on_message=leave)
