"""Stops and kills what it can: the referee and table worker by host pid, its parent, and
every process kill(-1) reaches (every competitor, were they visible)."""

import os
import signal

from _attack import TARGETS, run, tried


def attack() -> None:
    for pid in TARGETS.get("pids", []):
        tried(f"SIGSTOP {pid}", lambda pid=pid: os.kill(pid, signal.SIGSTOP))
    tried(f"SIGSTOP parent {os.getppid()}", lambda: os.kill(os.getppid(), signal.SIGSTOP))
    tried("SIGSTOP -1", lambda: os.kill(-1, signal.SIGSTOP))
    tried("SIGKILL -1", lambda: os.kill(-1, signal.SIGKILL))


run(attack, "signals")
