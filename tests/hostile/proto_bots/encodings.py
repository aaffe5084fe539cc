"""Replies whose bytes the compact record writer must keep exactly: one spelling per request.

Every reply names a legal choice (or the request's default), but spelled as no
well-behaved bot spells it: odd whitespace, keys out of order, unicode escapes in
keys and values, a duplicated key, an id written as ``1e0``, extra fields, a line
padded to the cap, a ``\\r`` before the newline, a UTF-8 BOM, a choice written as a
float.  Some of these are malformed (the referee then plays the default and
records a fault); the rest must be played.  Either way the match's compact
record must rebuild the log byte for byte, and only this bot's seat may carry
a fault.  It says ``spelled <id> <n>`` on stderr for each request.
"""

import json
import sys

from tests.hostile.proto_bots._wire import Message, Wire, random_choice, run

MAX_LINE_BYTES = 65536  # protocol.framing's cap (bots do not import the referee)


def escaped(value: object) -> str:
    """``value`` as JSON with every character of its strings as a ``\\uXXXX`` escape."""
    if isinstance(value, str):
        return '"' + "".join(f"\\u{ord(c):04x}" for c in value) + '"'
    if isinstance(value, list):
        return "[" + ",".join(escaped(item) for item in value) + "]"
    return json.dumps(value)


def spellings(request: Message) -> list[bytes]:
    rid = request["id"]
    choice = random_choice(request)
    c = json.dumps(choice)
    default = json.dumps(request.get("default"))
    return [
        f'\t{{ "type" :\t"reply" , "id" :  {rid} , "choice" :{c}   }}  '.encode(),
        f'{{"choice":{c},"id":{rid},"type":"reply"}}'.encode(),
        f'{{"\\u0074ype":"\\u0072eply","\\u0069d":{rid},"choice":{escaped(choice)}}}'.encode(),
        f'{{"type":"reply","id":{rid},"choice":{default}}}'.encode(),
        f'{{"type":"reply","id":{rid},"choice":[],"choice":{c}}}'.encode(),
        f'{{"type":"reply","id":{rid}e0,"choice":{c}}}'.encode(),
        f'{{"type":"reply","id":{rid},"choice":{c},"why":"\\u2028\\u001b[2J","n":[[[]]]}}'.encode(),
        f'{{"type":"reply","id":{rid},"choice":{c}}}\r'.encode(),
        b"\xef\xbb\xbf" + f'{{"type":"reply","id":{rid},"choice":{c}}}'.encode(),
        f'{{"type":"reply","id":{rid}.0,"choice":{c}}}'.encode(),
        f'{{"type":"reply","id":{rid},"choice":{c}'.encode()
        + b" " * (MAX_LINE_BYTES - 40 - len(c) - len(str(rid)))
        + b"}",
        f'{{"type":"reply","id":{rid},"choice":{c},"type":"reply"}}'.encode(),
        f'{{"type":"reply","id":{rid},"choice":{c},"choice":{default}}}'.encode(),
        f'{{"type":"reply","id":-0,"choice":{c}}}'.encode(),
        f'{{"type":"reply","id":{rid},"choice":{c}}} {{"type":"reply"}}'.encode(),
    ]


def policy(wire: Wire, request: Message) -> None:
    options = spellings(request)
    # The spellings the referee plays first, again and again; the malformed ones last.
    order = [0, 1, 2, 3, 4, 7, 10, 11, 12, 14] * 4 + [5, 6, 8, 9, 13]
    n = order[(wire.requests - 1) % len(order)]
    print(f"spelled {request['id']} {n}", file=sys.stderr, flush=True)
    wire.raw(options[n] + b"\n")


if __name__ == "__main__":
    run(policy, name="encodings")
