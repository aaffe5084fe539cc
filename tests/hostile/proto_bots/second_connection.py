"""A TCP bot that opens two connections for its seat, both with the right token.

Both connect first and then both send ``ready``, so the referee sees two
complete handshakes for one seat.  Each connection is served by its own
thread, which plays if ``match_start`` comes; for a connection that is
closed before it got ``match_start`` (the loser), the message types it
received are written as a JSON line to the file named by ``HOSTILE_REPORT``.
"""

import json
import os
import socket
import threading

from tests.hostile.proto_bots._wire import connect, random_choice, ready_line

LOCK = threading.Lock()


def serve(sock: socket.socket, report: str) -> None:
    seen: list[str] = []
    playing = False
    try:
        for line in sock.makefile("rb"):
            message = json.loads(line)
            seen.append(message["type"])
            if message["type"] == "match_start":
                playing = True
            elif message["type"] == "request":
                reply = {"type": "reply", "id": message["id"], "choice": random_choice(message)}
                with LOCK:
                    sock.sendall(json.dumps(reply).encode() + b"\n")
            elif message["type"] == "shutdown":
                return
    except OSError:
        pass  # reset by the referee: closed all the same
    if not playing:
        with LOCK, open(report, "a") as handle:
            handle.write(json.dumps({"closed": seen}) + "\n")


def main() -> None:
    report = os.environ["HOSTILE_REPORT"]
    socks = [connect(), connect()]
    for sock in socks:
        sock.sendall(ready_line("second"))
    threads = [threading.Thread(target=serve, args=(sock, report)) for sock in socks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


if __name__ == "__main__":
    main()
