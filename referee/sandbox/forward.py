"""The one way out of an isolated TCP bot's network namespace: to its referee's listener.

A TCP bot started by the referee has a network namespace of its own, with
only a loopback interface: it cannot reach the host's ``127.0.0.1``, the
league's lobby or anything else.  It still connects to the address in
``NEWMARKET_CONNECT`` as a bot always does; two small relays carry that one
route and nothing else:

* ``inside PORT SOCKET -- ARGV``: runs in the sandbox, listens on
  ``127.0.0.1:PORT`` of the bot's namespace, then forks: the child relays
  every connection to the Unix socket ``SOCKET`` (bound into the sandbox),
  the parent execs the bot, so the listener is there before the bot starts.
* ``outside FD HOST PORT``: runs beside the referee, accepts on the Unix
  listening socket ``FD`` (made by the referee, so it exists before either
  relay runs) and relays each connection to the referee's ``HOST:PORT``.

The standard library only, and run as a script (``python -I forward.py``):
inside the sandbox, none of the referee's packages is visible.

Every TCP socket of the relays has ``TCP_NODELAY``: a relay writes what it
read as it comes, often a line in two pieces, and with Nagle's algorithm the
second piece waited for the peer's delayed ACK, about 40 ms on Linux, on a
reply the bot had long sent (docs/speed.md).
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
from collections.abc import Callable

BUFFER = 65536
MAX_CONNECTIONS = 8


def _pump(source: socket.socket, target: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(BUFFER):
            target.sendall(data)
    for sock, how in ((target, socket.SHUT_WR), (source, socket.SHUT_RD)):
        with contextlib.suppress(OSError):
            sock.shutdown(how)


def _no_delay(sock: socket.socket) -> socket.socket:
    """``sock`` with Nagle's algorithm off (a TCP socket; a Unix one has none)."""
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _connection(accepted: socket.socket, target: socket.socket, slots: threading.Semaphore) -> None:
    """Carry one connection both ways until both directions end; then free its slot."""
    back = threading.Thread(target=_pump, args=(target, accepted), daemon=True)
    back.start()
    _pump(accepted, target)
    back.join()
    accepted.close()
    target.close()
    slots.release()


def _serve(listener: socket.socket, open_target: Callable[[], socket.socket]) -> None:
    """Relay each accepted connection; at most ``MAX_CONNECTIONS`` at once, more are closed.

    The bound keeps a bot from making the relay beside the referee (outside its
    cgroups) hold unbounded threads and sockets: the referee itself lets a seat
    have 8 pending connections.
    """
    slots = threading.Semaphore(MAX_CONNECTIONS)
    while True:
        accepted, _ = listener.accept()
        if not slots.acquire(blocking=False):
            accepted.close()
            continue
        try:
            _no_delay(accepted)
            target = _no_delay(open_target())
        except OSError:
            accepted.close()
            slots.release()
            continue
        threading.Thread(target=_connection, args=(accepted, target, slots), daemon=True).start()


def inside(port: int, path: str, argv: list[str]) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(16)

    def open_unix() -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        return sock

    if os.fork() == 0:
        try:
            _serve(listener, open_unix)
        finally:
            os._exit(0)
    listener.close()
    os.execvp(argv[0], argv)


def outside(fd: int, host: str, port: int) -> None:
    listener = socket.socket(fileno=fd)
    _serve(listener, lambda: socket.create_connection((host, port)))


def main(args: list[str]) -> None:
    if args[:1] == ["inside"] and len(args) > 4 and args[3] == "--":
        inside(int(args[1]), args[2], args[4:])
    elif args[:1] == ["outside"] and len(args) == 4:
        outside(int(args[1]), args[2], int(args[3]))
    else:
        sys.exit("usage: forward.py inside PORT SOCKET -- ARGV | outside FD HOST PORT")


if __name__ == "__main__":
    main(sys.argv[1:])
