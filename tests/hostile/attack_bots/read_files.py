"""Reads the referee's secrets by absolute path and through /proc, and tries to write them.

The league database, league file, tokens file, the match logs, a victim bot's
directory; ``/proc/<referee>/fd/*`` (the live match log); then tries to write
the database and to fill the league's directory.
"""

import os

from _attack import TARGETS, read, run, say, tried


def attack() -> None:
    for path in TARGETS.get("files", []):
        tried(f"read {path}", lambda path=path: read(path))
    for directory in TARGETS.get("dirs", []):
        names = tried(f"list {directory}", lambda d=directory: os.listdir(d))
        for name in names or []:
            full = os.path.join(directory, str(name))
            if os.path.isfile(full):
                tried(f"read {full}", lambda full=full: read(full))
    for pid in TARGETS.get("pids", []):
        fds = tried(f"list /proc/{pid}/fd", lambda pid=pid: os.listdir(f"/proc/{pid}/fd"))
        for fd in fds or []:
            tried(f"read /proc/{pid}/fd/{fd}", lambda pid=pid, fd=fd: read(f"/proc/{pid}/fd/{fd}"))
    for path in TARGETS.get("writable", []):

        def forge(path: str = path) -> None:
            with open(path, "r+b") as handle:
                handle.write(b"forged")

        tried(f"write {path}", forge)
    for directory in TARGETS.get("fill", []):

        def fill(directory: str = directory) -> None:
            with open(os.path.join(directory, "filler"), "wb") as handle:
                for _ in range(64):
                    handle.write(b"\0" * (1 << 20))

        tried(f"fill {directory}", fill)
    say(f"cwd {os.getcwd()} sees {sorted(os.listdir('/'))}")


run(attack, "read_files")
