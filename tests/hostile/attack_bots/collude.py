"""Two colluding bots in separate sandboxes try to pass a secret through what they share.

``signal``: holds ``flock`` on /etc/ld.so.cache and a POSIX record lock on byte SECRET of
/etc/ld.so.conf (read-only opens are enough for both), leaves the secret as a key in its
session and user keyrings (which a later bot given the same uid might share), listens
on an abstract Unix socket and on 127.0.0.1 (shared only with a shared network
namespace), says ``held`` with what the kernel answered, and, when told ``open`` on
stdin, opens and reads /etc/ld.so.cache (an inotify event for any watcher).  ``listen``:
asks about both locks, watches /etc/ld.so.cache with inotify, says ``watching``, and when
told ``report`` searches the keyrings, tries both sockets and prints what it learned.
Run by tests/hostile/test_collusion.py, only ever inside the sandbox (x86_64: the key
calls are made by number).
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import select
import socket
import struct
import sys

SECRET = 4242  # the byte offset the signaller locks: what the listener must not learn
LIBC = ctypes.CDLL(None, use_errno=True)
IN_OPEN, IN_ACCESS = 0x20, 0x01
ADD_KEY, KEYCTL, KEYCTL_SEARCH = 248, 250, 10  # x86_64 system calls; keyctl's command
KEYRINGS = {"session": -3, "user": -4}  # KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING
KEY = b"newmarket-collude"
ABSTRACT = b"\0newmarket-collude"
PORT = 47474


def say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def attempt(what: str, action: object) -> str:
    try:
        action()  # type: ignore[operator]
    except OSError as error:
        return f"{what}: refused ({error.strerror})"
    return f"{what}: ok"


def signal() -> None:
    shared = open("/etc/ld.so.cache", "rb")  # noqa: SIM115 (held for the bot's life)
    record = open("/etc/ld.so.conf", "rb")  # noqa: SIM115
    held = [
        attempt("flock", lambda: fcntl.flock(shared, fcntl.LOCK_EX)),
        attempt("lockf", lambda: fcntl.lockf(record, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, SECRET)),
    ]
    for name, ring in KEYRINGS.items():
        added = LIBC.syscall(ADD_KEY, b"user", KEY, str(SECRET).encode(), 4, ring)
        held.append(f"{name} key: " + ("ok" if added >= 0 else "refused"))
    listeners = []
    for family, address in ((socket.AF_UNIX, ABSTRACT), (socket.AF_INET, ("127.0.0.1", PORT))):
        server = socket.socket(family, socket.SOCK_STREAM)
        server.bind(address)
        server.listen(1)
        listeners.append(server)
    say("held " + "; ".join(held))
    for line in sys.stdin:
        if line.strip() == "open":
            with open("/etc/ld.so.cache", "rb") as again:
                again.read()
            say("opened")


def listen() -> None:
    learned = []
    shared = open("/etc/ld.so.cache", "rb")  # noqa: SIM115
    try:
        fcntl.flock(shared, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        learned.append("LEARNED: flock on /etc/ld.so.cache is held by another bot")
    except OSError as error:
        learned.append(f"flock: refused ({error.strerror})")
    record = open("/etc/ld.so.conf", "rb")  # noqa: SIM115
    query = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
    try:
        answer = struct.unpack("hhqqi", fcntl.fcntl(record, fcntl.F_GETLK, query))
        if answer[0] != fcntl.F_UNLCK:
            learned.append(f"LEARNED: a lock on /etc/ld.so.conf at byte {answer[2]}")
    except OSError as error:
        learned.append(f"F_GETLK: refused ({error.strerror})")
    watch = LIBC.inotify_init1(os.O_NONBLOCK)
    if watch < 0:
        learned.append(f"inotify: refused ({os.strerror(ctypes.get_errno())})")
    elif LIBC.inotify_add_watch(watch, b"/etc/ld.so.cache", IN_OPEN | IN_ACCESS) < 0:
        learned.append(f"inotify watch: refused ({os.strerror(ctypes.get_errno())})")
    say("watching")
    for line in sys.stdin:
        if line.strip() == "report":
            if watch >= 0 and select.select([watch], [], [], 0)[0]:
                learned.append("LEARNED: /etc/ld.so.cache was opened by another bot")
            for name, ring in KEYRINGS.items():
                if LIBC.syscall(KEYCTL, KEYCTL_SEARCH, ring, b"user", KEY, 0) >= 0:
                    learned.append(f"LEARNED: the other bot's key in the {name} keyring")
            for family, address in (
                (socket.AF_UNIX, ABSTRACT),
                (socket.AF_INET, ("127.0.0.1", PORT)),
            ):
                with socket.socket(family, socket.SOCK_STREAM) as client:
                    if client.connect_ex(address) == 0:
                        learned.append(f"LEARNED: the other bot listens at {address!r}")
            say("report " + "; ".join(learned))
            return


if __name__ == "__main__":
    signal() if sys.argv[1:] == ["signal"] else listen()
