"""Connects to listeners on the host's 127.0.0.1 and setns()es into the referee's netns."""

import ctypes
import os
import socket

from _attack import TARGETS, run, tried


def setns(path: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, 0) != 0:
            error = ctypes.get_errno()
            raise OSError(error, os.strerror(error))
    finally:
        os.close(fd)


def attack() -> None:
    for pid in TARGETS.get("pids", []):
        tried(f"setns /proc/{pid}/ns/net", lambda pid=pid: setns(f"/proc/{pid}/ns/net"))
    for port in TARGETS.get("ports", []):

        def connect(port: int = port) -> None:
            with socket.create_connection(("127.0.0.1", port), timeout=3) as sock:
                sock.sendall(b"NMLEAK\n")

        tried(f"connect 127.0.0.1:{port}", connect)
    tried("resolve example.com", lambda: socket.getaddrinfo("example.com", 80))


run(attack, "net_escape")
