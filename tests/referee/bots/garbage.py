"""Before each reply, writes a line that is not a protocol message (argument 1: the line)."""

from tests.referee.bots._loop import Message, Wire, arg, play_randomly, run

LINE = arg(1, "this is not JSON").encode() + b"\n"


def policy(wire: Wire, request: Message) -> None:
    wire.raw(LINE)
    play_randomly(wire, request)


if __name__ == "__main__":
    run(policy, name="garbage")
