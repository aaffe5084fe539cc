"""A TCP bot that opens two connections for its seat, both with the right token.

Both connect first and then both send ``ready``, so the referee sees two
complete handshakes for one seat.  The bot plays on whichever connection
gets ``match_start`` and records, in the file named by ``HOSTILE_REPORT``,
every line the other connection received before it was closed.
"""

import json
import os
import select
import socket
import sys

from tests.hostile.proto_bots._wire import Message, connect, random_choice, ready_line


def main() -> None:
    report = open(os.environ["HOSTILE_REPORT"], "w")  # noqa: SIM115  # kept until exit
    socks = [connect(), connect()]
    for sock in socks:
        sock.sendall(ready_line("second"))
    readers = {sock: sock.makefile("rb") for sock in socks}
    seen: dict[socket.socket, list[str]] = {sock: [] for sock in socks}
    open_socks = list(socks)
    playing: socket.socket | None = None
    while open_socks:
        readable, _, _ = select.select(open_socks, [], [], 120)
        if not readable:
            break
        for sock in readable:
            line = readers[sock].readline()
            if not line:
                open_socks.remove(sock)
                if sock is not playing:
                    json.dump({"closed": seen[sock]}, report)
                    report.write("\n")
                    report.flush()
                continue
            message: Message = json.loads(line)
            seen[sock].append(message["type"])
            if message["type"] == "match_start":
                playing = sock
            elif message["type"] == "request":
                reply = {"type": "reply", "id": message["id"], "choice": random_choice(message)}
                sock.sendall(json.dumps(reply).encode() + b"\n")
            elif message["type"] == "shutdown":
                return
    print("second: gave up waiting", file=sys.stderr)


if __name__ == "__main__":
    main()
