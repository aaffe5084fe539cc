"""The usual first Python bot: ``print`` without ``flush=True``, so ready waits in its buffer.

Its output is a pipe, not a terminal, so Python buffers it in blocks and the
ready line never leaves the process while it waits for the referee's next
line, which comes only after ready (argument 1 ``partial``: flushes half a line
instead, with no end of line).  With ``NEWMARKET_CONNECT`` set it connects and
writes its ready into the socket's buffered file, unflushed, in the same way.
"""

import json
import os
import socket
import sys

from tests.referee.bots._loop import arg

READY = json.dumps({"type": "ready", "name": "unflushed", "protocol": 1}) + "\n"

if __name__ == "__main__":
    connect = os.environ.get("NEWMARKET_CONNECT", "")
    if connect:
        host, _, port = connect.rpartition(":")
        sock = socket.create_connection((host.strip("[]"), int(port)))
        writer = sock.makefile("w")
        writer.write(READY)
        for _line in sock.makefile("r"):
            pass
    elif arg(1, "") == "partial":
        sys.stdout.write('{"type":"ready","name":"half"')
        sys.stdout.flush()
    else:
        print(READY, end="")
    for _line in sys.stdin:
        pass
