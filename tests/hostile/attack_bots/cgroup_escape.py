"""Moves itself out of its cgroups (into the parents' cgroup.procs), then leaves a process
behind that should outlive the match (setsid, double fork, marked ``NMLINGER``)."""

import os
import time

from _attack import TARGETS, read, run, say, tried


def move(path: str) -> None:
    with open(path, "w") as handle:
        handle.write(str(os.getpid()))


def attack() -> None:
    say("own cgroups " + read("/proc/self/cgroup").decode().replace("\n", " "))
    for path in [*TARGETS.get("cgroup_procs", []), "/sys/fs/cgroup/memory/cgroup.procs"]:
        tried(f"write {path}", lambda path=path: move(path))
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execvp("sleep", ["sleep", "600", "NMLINGER"])
        os._exit(0)
    time.sleep(0.1)
    say("TRIED linger: forked")


run(attack, "cgroup_escape")
