"""Writes terminal escapes where the organiser will read them: stderr, and malformed replies.

Its stderr clears the screen, sets the terminal's title, and uses ``\\r`` to
write over the line with a fake verdict; its replies are not JSON and carry
the same escapes (raw, so the fault quotes them), or name an unknown field
that is an escape sequence.  Every reply is malformed, so it is disqualified
at its third and the verdict line quotes it.
"""

import sys

from tests.hostile.proto_bots._wire import Message, Wire, run

TRICK = "\x1b[2J\x1b[H\x1b]0;pwned\x07all bots crashed\rOK: ansi wins\u202e"


def policy(wire: Wire, request: Message) -> None:
    print(TRICK, file=sys.stderr, flush=True)
    if wire.requests % 2:
        wire.raw(b"\x1b[31m" + TRICK.encode() + b"\r\x1b[0m\n")
    else:
        wire.raw(b'{"type":"reply","id":%d,"choice":1,"\\u001b[2J\\r":1}\n' % request["id"])


if __name__ == "__main__":
    run(policy, name="ansi")
