"""A bot's process: started from an explicit argv into a clean environment, ended whole.

Three rules shape this module, each one a way referees have been hurt:

* Nothing of the referee's environment leaks into a bot by accident: the
  environment is built from a short allow-list plus what the bot's spec asks
  for, the argv is never given to a shell, and the working directory is
  explicit.
* The bot runs in its own session (``start_new_session``), so its process
  group holds it and every child it forks; ending a bot signals the group
  (SIGTERM, a short grace, then SIGKILL) and no grandchild survives it.
* A bot started under a sandbox (``referee.sandbox``) also has rlimits, its
  own cgroups and no network, as the level and the machine allow; its
  cgroups are how a grandchild that left the process group is still ended,
  and how its CPU time is measured.
* The referee never waits on a pipe: a stray grandchild can hold stdout or
  stderr open for ever.  Exit is observed with ``Process.wait()`` (which
  watches the process, not its pipes), and the stderr drain is cancelled,
  not awaited to its end.

stderr is the bot's own log.  It is always drained (a bot that fills a pipe
nobody reads would hang) into a ``StderrBuffer`` that keeps the first and the
last bytes up to a cap and counts what it dropped in between.

An isolated bot's sandbox takes tens of milliseconds to make (both
bubblewraps, their namespaces, the cgroups' join), most of a compiled bot's
start.  A command started a second time (a league starts each bot afresh
at every rotation) gets the sandbox of its next start made ahead, on the
forking thread, waiting in the shell just before the bot until its start
line comes (``_ReadySandboxes``): that start then costs the bot's own.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import dataclasses
import functools
import itertools
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import trio

from protocol.timing import DEFAULT_STDERR_CAP_BYTES
from protocol.transports import ENV_CONNECT, parse_connect
from referee.sandbox import START_LINE, BotCgroups, Sandbox
from referee.sandbox.isolation import ENV_SHARED_DIR, SCRATCH, UidLease, data_pipe, etc_pipes

FORWARD_SCRIPT = Path(__file__).resolve().parents[1] / "sandbox" / "forward.py"
REFEREE_SOCKET = "/.referee.sock"  # where an isolated TCP bot's relay finds the referee

# What a bot inherits from the referee's environment; everything else it must be given.
INHERITED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ", "USER", "LOGNAME")
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
TERM_GRACE = 0.5  # seconds between SIGTERM and SIGKILL
STDERR_END_WAIT = 0.5  # seconds the end waits for stderr's last bytes to be read
KILL_WAIT = 2.0  # at most this long for SIGKILLed members of the group to be gone


class ChildProcess:
    """A started bot program: its pid, its pipes as trio streams, and an awaitable exit.

    Why not ``trio.lowlevel.open_process``: it forks from a trio worker thread,
    and Linux ties ``PR_SET_PDEATHSIG`` (bubblewrap's ``--die-with-parent``) to
    the *thread* that forked, not to the process.  trio retires a worker thread
    after 10 s idle, and every isolated bot forked from it was then SIGKILLed
    mid-match: a bot thinking about a second per move died about 10 s into its
    life.  Bots are forked by ``_FORKER`` instead, a thread that lives as long
    as the referee, so "dies with its parent" means dies with the referee.
    """

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        stdin: trio.lowlevel.FdStream | None,
        stdout: trio.lowlevel.FdStream | None,
        stderr: trio.lowlevel.FdStream | None,
    ) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self._pidfd: int | None
        try:
            self._pidfd = os.pidfd_open(popen.pid)
        except (AttributeError, OSError):
            self._pidfd = None

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    async def wait(self) -> int:
        """Wait for the exit without ever reading a pipe; reap it; its ``Popen`` status."""
        if self._popen.returncode is None:
            if self._pidfd is not None:
                await trio.lowlevel.wait_readable(self._pidfd)
            else:
                await trio.to_thread.run_sync(self._popen.wait, abandon_on_cancel=True)
        status = self._popen.wait()  # at once: it has exited
        if self._pidfd is not None:
            trio.lowlevel.notify_closing(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        return status

    def poll(self) -> int | None:
        """The exit status if it has ended (reaping it), else None."""
        return self._popen.poll()

    def kill(self) -> None:
        self._popen.kill()  # Popen ignores a process it has already reaped


class _Forker:
    """One long-lived thread that forks every bot (see ``ChildProcess`` for why).

    It also prepares sandboxes ahead of their bots (``_ReadySandboxes``): work that
    waits until no start someone is waiting for is left.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._order = itertools.count()
        # (lane, order, work): lane 0 is a start a caller waits for, lane 1 work that can wait.
        self._requests: queue.PriorityQueue[tuple[int, int, Callable[[], None]]] = (
            queue.PriorityQueue()
        )

    def popen(self, start: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
        """Run ``start`` on the forking thread and return its result (blocks: call in a thread)."""
        done: concurrent.futures.Future[subprocess.Popen[bytes]] = concurrent.futures.Future()

        def work() -> None:
            try:
                done.set_result(start())
            except BaseException as error:  # handed to the waiting caller, which raises it
                done.set_exception(error)

        self._submit(0, work)
        return done.result()

    def later(self, work: Callable[[], None]) -> None:
        """Run ``work`` on the forking thread when no start is waiting; its errors are dropped."""

        def quietly() -> None:
            with contextlib.suppress(Exception):
                work()

        self._submit(1, quietly)

    def _submit(self, lane: int, work: Callable[[], None]) -> None:
        with self._lock:
            # After a fork (a league's worker process) the thread object says it is not alive.
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._serve, name="newmarket-forker", daemon=True
                )
                self._thread.start()
            self._requests.put((lane, next(self._order), work))

    def _serve(self) -> None:
        while True:
            _, _, work = self._requests.get()
            work()

    def _forget(self) -> None:
        # In a forked child the thread is gone, and a lock it held at the fork stays held.
        self._lock = threading.Lock()
        self._thread = None
        self._requests = queue.PriorityQueue()


_FORKER = _Forker()
os.register_at_fork(after_in_child=_FORKER._forget)


def _child_pipes(stdio: bool) -> tuple[list[int], list[int]]:
    """(ours, theirs): stdin's write and stdout's read end (with ``stdio``), stderr's read end;
    and the ends the child gets, in the same order."""
    ours: list[int] = []
    theirs: list[int] = []
    try:
        if stdio:
            stdin_read, stdin_write = os.pipe()
            stdout_read, stdout_write = os.pipe()
            ours += [stdin_write, stdout_read]
            theirs += [stdin_read, stdout_write]
        stderr_read, stderr_write = os.pipe()
        ours.append(stderr_read)
        theirs.append(stderr_write)
    except BaseException:
        for fd in (*ours, *theirs):
            os.close(fd)
        raise
    return ours, theirs


def _starter(
    command: Sequence[str],
    *,
    stdio: bool,
    theirs: Sequence[int],
    cwd: Path | str | None,
    env: Mapping[str, str],
    pass_fds: Sequence[int],
) -> Callable[[], subprocess.Popen[bytes]]:
    """What starts ``command`` in its own session on ``theirs`` (run it on ``_FORKER``)."""

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            list(command),
            stdin=theirs[0] if stdio else subprocess.DEVNULL,
            stdout=theirs[1] if stdio else subprocess.DEVNULL,
            stderr=theirs[-1],
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
            pass_fds=tuple(pass_fds),
        )

    return start


def _child(popen: subprocess.Popen[bytes], ours: Sequence[int], stdio: bool) -> ChildProcess:
    streams = [trio.lowlevel.FdStream(fd) for fd in ours]
    if stdio:
        return ChildProcess(popen, streams[0], streams[1], streams[2])
    return ChildProcess(popen, None, None, streams[0])


async def open_child(
    command: Sequence[str],
    *,
    stdio: bool,
    cwd: Path | str | None,
    env: Mapping[str, str],
    pass_fds: Sequence[int] = (),
) -> ChildProcess:
    """Start ``command`` in its own session: stdin/stdout pipes (or /dev/null), stderr a pipe.

    ``pass_fds`` stay open in the child under their numbers (and are the caller's to close).
    """
    ours, theirs = _child_pipes(stdio)
    try:
        start = _starter(command, stdio=stdio, theirs=theirs, cwd=cwd, env=env, pass_fds=pass_fds)
        popen = await trio.to_thread.run_sync(_FORKER.popen, start)
    except BaseException:
        for fd in ours:
            os.close(fd)
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    return _child(popen, ours, stdio)


class StderrBuffer:
    """The first and the last ``cap // 2`` bytes of a stream; what was between is counted."""

    __slots__ = ("_half", "_head", "_tail", "cap", "dropped", "total")

    def __init__(self, cap: int = DEFAULT_STDERR_CAP_BYTES) -> None:
        self.cap = cap
        self._half = max(1, cap // 2)
        self._head = bytearray()
        self._tail = bytearray()
        self.dropped = 0
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self._half - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data:
            return
        self._tail += data
        excess = len(self._tail) - self._half
        if excess > 0:
            del self._tail[:excess]
            self.dropped += excess

    def text(self) -> str:
        """What was kept, as text; a marker line says how much was dropped in between."""
        head = self._head.decode("utf-8", "replace")
        tail = self._tail.decode("utf-8", "replace")
        if self.dropped:
            return f"{head}\n[... {self.dropped} bytes of stderr dropped ...]\n{tail}"
        return head + tail

    def last_line(self, limit: int = 200) -> str:
        """The last non-empty line, ``shortened`` to ``limit`` characters (for one-line
        details: its start and its end, where a traceback's exception is)."""
        for line in reversed(self.text().splitlines()):
            line = line.strip()
            if line:
                return shortened(line, limit)
        return ""

    def take(self) -> StderrBuffer:
        """A copy of what was kept so far, and a fresh start for this buffer."""
        copy = StderrBuffer(self.cap)
        copy._head, copy._tail = self._head, self._tail
        copy.dropped, copy.total = self.dropped, self.total
        self._head, self._tail = bytearray(), bytearray()
        self.dropped = self.total = 0
        return copy


def shortened(text: str, limit: int) -> str:
    """``text``, or its start and its end with the middle left out and counted.

    A bot's stderr line says what went wrong at its end as often as at its start
    (``... ModuleNotFoundError: No module named 'numpy'``), so neither is dropped.
    ``SHORTENED`` finds the marker, for a caller that then says where the whole is.
    """
    if len(text) <= limit:
        return text
    tail = limit // 3
    head = max(limit - tail - 16, 1)  # room for the marker
    return f"{text[:head]} …{len(text) - head - tail} chars… {text[-tail:]}"


SHORTENED = re.compile(r" …\d+ chars… ")


def clean_environment(extra: Mapping[str, str] = {}) -> dict[str, str]:
    """A short allow-list of the referee's environment, ``PATH`` always set, plus ``extra``."""
    env = {key: os.environ[key] for key in INHERITED_ENV if key in os.environ}
    env.setdefault("PATH", DEFAULT_PATH)
    env.update(extra)
    return env


def stat_fields(pid: int | str) -> list[bytes] | None:
    """The fields of ``/proc/PID/stat`` after ``(comm)``: state, ppid, pgrp, ...; None if gone.

    comm may hold spaces and parentheses, so the fields start after its last ``)``.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2 :].split()


def group_members(pgid: int) -> list[int]:
    """The pids of live (not zombie) processes in group ``pgid``, from ``/proc`` (Linux).

    ``killpg(pgid, 0)`` cannot answer this: it also succeeds for a zombie that
    nobody has reaped yet, which no longer runs and holds nothing open.
    """
    members: list[int] = []
    if not os.path.isdir("/proc"):
        return members  # not Linux: nothing to look at, so nothing to wait for
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        fields = stat_fields(entry.name)
        if fields is not None and len(fields) > 2 and int(fields[2]) == pgid and fields[0] != b"Z":
            members.append(int(entry.name))
    return members


def describe_exit(returncode: int) -> str:
    """``exited with status 3`` or ``killed by signal 11 (SIGSEGV)``."""
    if returncode < 0:
        number = -returncode
        try:
            name = signal.Signals(number).name
        except ValueError:
            return f"killed by signal {number}"
        return f"killed by signal {number} ({name})"
    return f"exited with status {returncode}"


class BotProcess:
    """A started bot process: its pipes, its stderr, and how to end its whole tree.

    The leader is not reaped until the tree has been killed: exit is seen on a
    pidfd and its status read with ``waitid(WNOWAIT)``.  While the leader is
    unreaped (a zombie at worst), its pid, which is also the process group's
    id, cannot be reused, so the final SIGKILL to the group can only reach
    this bot's own stragglers, never a stranger that got the number later.
    """

    def __init__(
        self,
        process: ChildProcess,
        stderr: StderrBuffer,
        cgroups: BotCgroups | None = None,
        *,
        isolated: bool = False,
        helpers: Sequence[trio.Process] = (),
        cleanup: Sequence[UidLease | tempfile.TemporaryDirectory[str]] = (),
    ) -> None:
        self.process = process
        self.cgroups = cgroups
        # bubblewrap reports a bot killed by signal N as exit status 128 + N.
        self.isolated = isolated
        self.helpers = list(helpers)  # a TCP bot's relay beside the referee: ended with it
        self.cleanup = list(cleanup)  # its uid lease, its socket's directory: after the end
        leases = [item.uid for item in self.cleanup if isinstance(item, UidLease)]
        self.uid: int | None = leases[0] if leases else None  # its own host uid (root only)
        self._cpu_seen: float | None = None
        self.pid = process.pid
        self.pgid = process.pid  # start_new_session: the bot leads its own session and group
        self.stderr = stderr
        self.match_stderr = StderrBuffer(stderr.cap)
        self.exited = trio.Event()
        self.stderr_ended = trio.Event()  # the drain read stderr to its end (or gave up)
        self._draining = False
        self.status: int | None = None  # as Popen.returncode: negative for a signal
        self._ended = False
        self._reaped = False  # after this, the group's id may be reused: no /proc look
        # A pidfd of its own, beside the ChildProcess's: ``watch`` waits on this one for
        # the whole life of the bot while ``end`` reaps through the other, and trio lets
        # only one task at a time wait for one descriptor to become readable.
        self._pidfd: int | None
        try:
            self._pidfd = os.pidfd_open(process.pid)
        except (AttributeError, OSError):
            self._pidfd = None

    def exit_text(self) -> str:
        text = "still running" if self.status is None else describe_exit(self.status)
        if self.cgroups is not None and self.cgroups.oom_killed():
            text += " (its memory limit was reached)"
        return text

    def cpu_seconds(self) -> float | None:
        """CPU time (user + system) the bot's tree has used since its start, or None.

        From the bot's cgroup where it has one: that counts every process that
        ever ran in it, grandchildren and processes already gone included.
        Otherwise from ``/proc``: the leader and its descendants, each with
        its reaped children (``cutime``/``cstime``); a child that exited
        unreaped, or was reparented, is missed.  (``wait4``'s rusage
        would count only at the very end, and a session plays many matches.)
        The last value seen is kept, so it can still be read once the tree
        is gone.
        """
        value = self.cgroups.cpu_seconds() if self.cgroups is not None else None
        if value is None and not self._reaped:
            value = tree_cpu_seconds(self.pid)
        if value is not None and (self._cpu_seen is None or value > self._cpu_seen):
            self._cpu_seen = value
        return self._cpu_seen

    def stdio(self) -> trio.StapledStream[trio.abc.SendStream, trio.abc.ReceiveStream]:
        """The bot's stdin and stdout as one stream."""
        assert self.process.stdin is not None and self.process.stdout is not None
        return trio.StapledStream(self.process.stdin, self.process.stdout)

    async def watch(self) -> None:
        """Wait for the exit (never on a pipe), note its status, set ``exited``.

        Run as a background task for the life of the process.
        """
        if self._pidfd is None:
            self.status = await self.process.wait()
        else:
            # ClosedResourceError: ``end`` closed the pidfd after reaping.
            with contextlib.suppress(trio.ClosedResourceError):
                await trio.lowlevel.wait_readable(self._pidfd)
            self.status = self._peek_status()
        self.exited.set()

    def _peek_status(self) -> int | None:
        if self.status is not None:
            return self.status
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG)
        except ChildProcessError:
            return None  # already reaped by ``end``, which records the status itself
        if info is None:
            return None
        if info.si_code != os.CLD_EXITED:
            return -info.si_status
        return self._unwrapped(info.si_status)

    def _unwrapped(self, status: int) -> int:
        """The bot's own status: bubblewrap turns death by signal N into exit status 128 + N."""
        if self.isolated and 128 < status < 128 + 65:
            return -(status - 128)
        return status

    async def drain_stderr(self) -> None:
        """Read stderr into the buffers until it ends; a background task, cancelled at the end."""
        stream = self.process.stderr
        if stream is None:
            return
        self._draining = True
        try:
            while True:
                data = await stream.receive_some(65536)
                if not data:
                    return
                self.stderr.feed(bytes(data))
                self.match_stderr.feed(bytes(data))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            return
        finally:
            self.stderr_ended.set()

    def signal_group(self, signum: int) -> None:
        """Send ``signum`` to the bot's process group; a group already gone is fine."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pgid, signum)

    async def end(self, grace: float = TERM_GRACE) -> None:
        """End the whole tree: SIGTERM to the group, ``grace`` seconds, then SIGKILL; reap.

        The group is killed even when the leader has exited, because a child
        may ignore SIGTERM or outlive its parent.  Idempotent, never raises,
        and shielded from the caller's cancellation so a cancelled match cannot
        leave a tree behind.
        """
        if self._ended:
            return
        self._ended = True
        with trio.CancelScope(shield=True):
            if not self.exited.is_set():
                self.signal_group(signal.SIGTERM)
                with trio.move_on_after(grace):
                    await self.exited.wait()
            self.cpu_seconds()  # the last look, while the leader is still there to read
            self.signal_group(signal.SIGKILL)  # the leader is not reaped yet: see the class doc
            if self.cgroups is not None:
                self.cgroups.kill()  # members that left the group (setsid) are still here
            status = await self.process.wait()
            self._reaped = True
            # SIGKILL is delivered, not yet acted on, when killpg returns: wait (briefly)
            # until no member of the group still runs, so "ended" means ended.
            with trio.move_on_after(KILL_WAIT):
                while group_members(self.pgid) or (
                    self.cgroups is not None and self.cgroups.members()
                ):
                    if self.cgroups is not None:
                        self.cgroups.kill()  # a fork that raced the first kill
                    await trio.sleep(0.01)
            if self.cgroups is not None:
                self.cpu_seconds()
                self.cgroups.remove()
            if self.status is None:
                self.status = self._unwrapped(status) if status >= 0 else status
            for helper in self.helpers:
                with contextlib.suppress(OSError):
                    helper.kill()
                await helper.wait()
            for item in self.cleanup:
                if isinstance(item, UidLease):
                    item.release()
                else:
                    with contextlib.suppress(OSError):
                        item.cleanup()
            if self._pidfd is not None:
                trio.lowlevel.notify_closing(self._pidfd)
                os.close(self._pidfd)
                self._pidfd = None
            self.exited.set()
            # What the tree wrote just before it ended may still sit in the pipe: let the
            # drain read it to the end (every writer is gone by now) before the pipe is
            # closed under it, but not for ever, since a stray grandchild may hold it open.
            if self._draining:
                with trio.move_on_after(STDERR_END_WAIT):
                    await self.stderr_ended.wait()
            for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
                if stream is not None:
                    with trio.move_on_after(0.1):
                        await stream.aclose()


Cleanup = UidLease | tempfile.TemporaryDirectory[str]


@dataclasses.dataclass
class _Prepared:
    """A start's wrapped command, and what was made for it: undone if the start fails."""

    command: list[str]
    env: dict[str, str]
    cgroups: BotCgroups | None
    fds: list[int]  # the filter's and the made /etc files' pipes: closed once the child has them

    def close_fds(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []


def _prepare(
    argv: Sequence[str],
    *,
    cwd: Path | None,
    env: dict[str, str],
    stdio: bool,
    sandbox: Sandbox | None,
    writable: Path | None,
    own_dir: bool,
    relay: tuple[list[str], list[tuple[str, str]]] | None,
    cleanup: list[Cleanup],
) -> _Prepared:
    """The command that starts ``argv`` under ``sandbox``, its cgroups made, its uid leased
    (into ``cleanup``); everything it made is undone if it raises.  No awaiting: it also
    runs on the forking thread, for a sandbox made ready ahead (``_ReadySandboxes``)."""
    command = list(argv)
    prepared = _Prepared(command, env, None, [])
    if sandbox is None or sandbox.level == "none":
        return prepared
    isolated = sandbox.isolation is not None
    made: list[Cleanup] = []
    try:
        # The wrappers exec the program, so a missing one would only show as the
        # wrapper's exit status: find it first and fail as an unwrapped start would.
        check_program(command[0], cwd, env)
        procs: list[Path] = []
        if sandbox.uses_cgroups:
            prepared.cgroups = BotCgroups(sandbox)
            try:
                procs = prepared.cgroups.create()
            except OSError as error:
                prepared.cgroups = None
                raise OSError(
                    error.errno, f"cannot create the bot's cgroup: {error.strerror or error}"
                ) from None
        prefix: list[str] = []
        binds: list[tuple[str, str]] = []
        lease: UidLease | None = None
        seccomp_fd: int | None = None  # the filter's pipe, read by the inner bwrap
        etc_fds: dict[str, int] = {}  # the bot's own /etc files, read by the bwrap that mounts
        if isolated:
            env["HOME"] = env["TMPDIR"] = SCRATCH
            lease = sandbox.lease_uid()
            if lease is not None:
                made.append(lease)
            if writable is not None:
                binds.append((str(writable), str(writable)))
                if lease is not None:
                    os.chown(writable, lease.uid, lease.uid)
            if relay is not None:
                prefix, more = relay
                binds += more
            assert sandbox.isolation is not None
            if sandbox.isolation.seccomp is not None:
                seccomp_fd = data_pipe(sandbox.isolation.seccomp)
                prepared.fds.append(seccomp_fd)
            etc_fds = etc_pipes(os.getuid() if lease is None else lease.uid)
            prepared.fds += etc_fds.values()
        prepared.command = sandbox.wrap(
            command,
            stdio=stdio,
            cgroup_procs=procs,
            cwd=cwd,
            env=env,
            uid=None if lease is None else lease.uid,
            inner_prefix=prefix,
            extra_binds=binds,
            own_dir=own_dir,
            seccomp_fd=seccomp_fd,
            etc_fds=etc_fds,
        )
    except BaseException:
        prepared.close_fds()
        if prepared.cgroups is not None:
            prepared.cgroups.remove()
        for item in made:
            _release(item)
        raise
    cleanup += made
    return prepared


def _release(item: Cleanup) -> None:
    if isinstance(item, UidLease):
        item.release()
    else:
        with contextlib.suppress(OSError):
            item.cleanup()


async def start_process(
    argv: Sequence[str],
    *,
    cwd: Path | None,
    env: Mapping[str, str],
    stdio: bool,
    stderr_cap: int = DEFAULT_STDERR_CAP_BYTES,
    sandbox: Sandbox | None = None,
    writable: Path | None = None,
) -> BotProcess:
    """Start ``argv`` in its own session with a clean environment, under ``sandbox``.

    ``writable`` is one directory the program may write besides its scratch
    space (a compiler's output): bound read-write into its sandbox and, on a
    root referee, handed to the program's own uid for its run.

    With ``stdio`` the bot's stdin and stdout are pipes to the referee;
    otherwise (TCP) they are ``/dev/null``.  Raises ``OSError`` when the
    program cannot be started (not found, not executable, bad directory, or
    its cgroup cannot be made).

    An isolated stdio bot's sandbox may have been made ready before this call
    (``_ReadySandboxes``): then only the start line is left to write.
    """
    env = dict(env)
    own_dir = env.pop(ENV_SHARED_DIR, None) is None  # sandbox data, not for the bot
    isolated = sandbox is not None and sandbox.level != "none" and sandbox.isolation is not None
    ready = _READY.request(argv, cwd, env, stdio, sandbox, writable, own_dir)
    if ready is not None:
        check_program(argv[0], cwd, env)  # as a start from scratch would say it
        taken = _READY.take(ready)
        if taken is not None:
            return _READY.hand_over(taken, stderr_cap)
    helpers: list[trio.Process] = []
    cleanup: list[Cleanup] = []
    try:
        relay = None
        if isolated and not stdio and ENV_CONNECT in env:
            relay = await _relay_to_referee(env[ENV_CONNECT], helpers, cleanup)
        prepared = _prepare(
            argv,
            cwd=cwd,
            env=env,
            stdio=stdio,
            sandbox=sandbox,
            writable=writable,
            own_dir=own_dir,
            relay=relay,
            cleanup=cleanup,
        )
        try:
            process = await open_child(
                prepared.command,
                stdio=stdio,
                cwd="/" if isolated else cwd,  # the sandbox changes into the bot's directory
                env=prepared.env,
                pass_fds=prepared.fds,
            )
        except BaseException:
            if prepared.cgroups is not None:
                prepared.cgroups.remove()
            raise
        finally:
            prepared.close_fds()
    except BaseException:
        for helper in helpers:
            with contextlib.suppress(OSError):
                helper.kill()
        for item in cleanup:
            _release(item)
        raise
    if isolated and stdio:
        assert process.stdin is not None
        with contextlib.suppress(trio.BrokenResourceError):  # gone already: its exit will say
            await process.stdin.send_all(START_LINE)
    if ready is not None:
        _READY.started(ready)
    return BotProcess(
        process,
        StderrBuffer(stderr_cap),
        prepared.cgroups,
        isolated=isolated,
        helpers=helpers,
        cleanup=cleanup,
    )


@dataclasses.dataclass
class _Spawned:
    """A sandbox made ready ahead of its bot: the chain waits in the shell just before it."""

    popen: subprocess.Popen[bytes]
    ours: list[int]  # the bot's stdin (write end), stdout and stderr (read ends)
    cgroups: BotCgroups | None
    cleanup: list[Cleanup]

    def close_pipes(self) -> None:
        """Its stdin closes: the shell reads no start line and exits, and the chain with it."""
        for fd in self.ours:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.ours = []

    def discard(self, wait: float) -> None:
        """End it: ``close_pipes``, up to ``wait`` seconds for the chain to exit, then a kill;
        then its cgroups and uid go."""
        self.close_pipes()
        try:
            self.popen.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            if self.cgroups is not None:
                self.cgroups.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=KILL_WAIT)
        if self.cgroups is not None:
            # The chain's first process has exited; the rest of its pid namespace is still
            # being reaped, and a cgroup with members cannot be removed yet.
            deadline = time.monotonic() + KILL_WAIT
            while True:
                self.cgroups.kill()
                self.cgroups.remove()
                left = any(path.exists() for path in self.cgroups.dirs.values())
                if not left or time.monotonic() > deadline:
                    break
                time.sleep(0.01)
        for item in self.cleanup:
            _release(item)


@dataclasses.dataclass(frozen=True)
class _Request:
    """A start as ``_ReadySandboxes`` sees it: everything its sandbox is made from."""

    argv: tuple[str, ...]
    cwd: Path | None
    env: tuple[tuple[str, str], ...]
    own_dir: bool
    sandbox: Sandbox = dataclasses.field(hash=False)  # (compared, but holds mappings)


class _ReadySandboxes:
    """Sandboxes made ready ahead of their bots, for starts that come again.

    A league starts the same bot afresh at every rotation: from a command's
    second start on, the whole sandbox of its next start (cgroups joined, uid
    leased, both bubblewraps and their namespaces, the view) is made on the
    forking thread, when no start is waiting, and waits in the shell just
    before the bot for a start line on the bot's stdin.  The next start of
    that command (same argv, directory, environment and sandbox) writes the
    line and hands the process over: its bot runs at once.

    Such a sandbox is fresh and unused: nothing but the sandbox's own chain has
    run in it, its cgroups, uid, scratch and pipes were made for it alone, and
    only the referee holds its stdin.  Only isolated stdio starts without a
    writable directory are made ready (a TCP bot's relay is started with the
    bot; a compiler's output directory is its own).  At most one waits per
    command, ``LIMIT`` in all; they end with the referee (their stdin closes:
    at exit, on a SIGKILL, and in a forked child, which drops its copies).
    """

    LIMIT = 8
    SEEN = 256  # commands remembered (their count of starts), the oldest forgotten first

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made = threading.Condition(self._lock)  # notified when one is made (or fails)
        self._ready: dict[_Request, _Spawned] = {}
        self._making: set[_Request] = set()
        self._seen: dict[_Request, int] = {}
        self._closed = False
        self._at_exit = False

    def request(
        self,
        argv: Sequence[str],
        cwd: Path | None,
        env: Mapping[str, str],
        stdio: bool,
        sandbox: Sandbox | None,
        writable: Path | None,
        own_dir: bool,
    ) -> _Request | None:
        """The start's request, or None where no sandbox is ever made ready for it."""
        if not stdio or writable is not None or sandbox is None or sandbox.isolation is None:
            return None
        if sandbox.level == "none":
            return None
        return _Request(tuple(argv), cwd, tuple(sorted(env.items())), own_dir, sandbox)

    def take(self, request: _Request) -> _Spawned | None:
        """The sandbox made ready for ``request``, if one waits (and still does)."""
        with self._lock:
            spawned = self._ready.pop(request, None)
        if spawned is None:
            return None
        if spawned.popen.poll() is not None:  # it ended while it waited (killed, say)
            spawned.discard(wait=0)
            return None
        self.started(request)
        return spawned

    def hand_over(self, spawned: _Spawned, stderr_cap: int) -> BotProcess:
        """The waiting sandbox as the bot's process: its start line written, its bot running."""
        with contextlib.suppress(BrokenPipeError):  # gone already: its exit will say
            os.write(spawned.ours[0], START_LINE)  # an empty pipe: never blocks
        process = _child(spawned.popen, spawned.ours, stdio=True)
        return BotProcess(
            process,
            StderrBuffer(stderr_cap),
            spawned.cgroups,
            isolated=True,
            cleanup=spawned.cleanup,
        )

    def started(self, request: _Request) -> None:
        """Count a start of ``request``; from its second on, make its next sandbox ready."""
        with self._lock:
            if self._closed:
                return
            count = self._seen.pop(request, 0) + 1
            self._seen[request] = count  # (now the newest)
            while len(self._seen) > self.SEEN:
                del self._seen[next(iter(self._seen))]
            waiting = len(self._ready) + len(self._making)
            if count < 2 or request in self._ready or request in self._making:
                return
            if waiting >= self.LIMIT:
                return
            self._making.add(request)
            if not self._at_exit:
                atexit.register(self.close)
                os.register_at_fork(after_in_child=self._forget)
                self._at_exit = True
        _FORKER.later(functools.partial(self._make, request, os.getpid()))

    def _make(self, request: _Request, owner: int) -> None:
        """On the forking thread: make ``request``'s sandbox and keep it ready."""
        spawned: _Spawned | None = None
        try:
            spawned = _spawn_ready(request)
        finally:
            with self._lock:
                self._making.discard(request)
                self._made.notify_all()
                fresh = request not in self._ready and not self._closed
                if spawned is not None and fresh and os.getpid() == owner:
                    self._ready[request] = spawned
                    spawned = None
        if spawned is not None:
            spawned.discard(wait=KILL_WAIT)

    def wait(self, timeout: float) -> bool:
        """Block until no sandbox is being made (True), or for ``timeout`` seconds (False)."""
        with self._made:
            return self._made.wait_for(lambda: not self._making, timeout)

    def close(self) -> None:
        """End every waiting sandbox (at exit): all at once, within ``KILL_WAIT`` in all."""
        with self._lock:
            self._closed = True
            waiting = list(self._ready.values())
            self._ready.clear()
        for spawned in waiting:
            spawned.close_pipes()
        deadline = time.monotonic() + KILL_WAIT
        for spawned in waiting:
            spawned.discard(wait=max(0.0, deadline - time.monotonic()))

    def _forget(self) -> None:
        # A forked child (a league's worker process) must not hand its parent's sandboxes to
        # bots of its own, nor keep their stdin open: it drops its copies of their pipes and
        # leases, and leaves the rest (cgroups, processes) to the parent.
        for spawned in self._ready.values():
            for fd in spawned.ours:
                with contextlib.suppress(OSError):
                    os.close(fd)
            for item in spawned.cleanup:
                if isinstance(item, UidLease):
                    item.release()
        self._lock = threading.Lock()
        self._made = threading.Condition(self._lock)
        self._ready = {}
        self._making = set()
        self._seen = {}


def _spawn_ready(request: _Request) -> _Spawned:
    """Start ``request``'s sandbox, on the forking thread, up to the shell waiting for its line."""
    cleanup: list[Cleanup] = []
    prepared = _prepare(
        request.argv,
        cwd=request.cwd,
        env=dict(request.env),
        stdio=True,
        sandbox=request.sandbox,
        writable=None,
        own_dir=request.own_dir,
        relay=None,
        cleanup=cleanup,
    )
    ours: list[int] = []
    try:
        ours, theirs = _child_pipes(stdio=True)
        try:
            start = _starter(
                prepared.command,
                stdio=True,
                theirs=theirs,
                cwd="/",
                env=prepared.env,
                pass_fds=prepared.fds,
            )
            popen = start()
        finally:
            for fd in theirs:
                os.close(fd)
    except BaseException:
        for fd in ours:
            os.close(fd)
        if prepared.cgroups is not None:
            prepared.cgroups.remove()
        for item in cleanup:
            _release(item)
        raise
    finally:
        prepared.close_fds()
    return _Spawned(popen, ours, prepared.cgroups, cleanup)


_READY = _ReadySandboxes()


def end_ready_sandboxes() -> None:
    """End every sandbox made ahead and still waiting, and make no more, as exit does: for a
    program that needs them gone before it ends (a benchmark that removes its own cgroup)."""
    _READY.close()


def wait_for_ready_sandboxes(timeout: float) -> bool:
    """Block until every sandbox being made ahead of its bot is ready (True) or ``timeout``
    seconds have passed (False).  Blocking: from trio, ``trio.to_thread.run_sync`` it.  For
    benchmarks and tests that must not count a sandbox's making into a later start."""
    return _READY.wait(timeout)


async def _relay_to_referee(
    connect: str,
    helpers: list[trio.Process],
    cleanup: list[UidLease | tempfile.TemporaryDirectory[str]],
) -> tuple[list[str], list[tuple[str, str]]]:
    """Start the outside relay; the prefix that runs the inside one, and the socket to bind.

    The bot keeps connecting to ``NEWMARKET_CONNECT``; in its own network
    namespace that address is the inside relay's, whose only way out is the
    Unix socket bound into the sandbox (``referee.sandbox.forward``).
    """
    host, port = parse_connect(connect)
    directory = tempfile.TemporaryDirectory(prefix="newmarket-relay-")
    cleanup.append(directory)
    path = os.path.join(directory.name, "referee.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)
        os.chmod(path, 0o666)  # the bot's own uid connects to it
        os.chmod(directory.name, 0o755)
        listener.listen(16)
        relay = await trio.lowlevel.open_process(
            [
                sys.executable,
                "-I",
                str(FORWARD_SCRIPT),
                "outside",
                str(listener.fileno()),
                host,
                str(port),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(listener.fileno(),),
        )
    finally:
        listener.close()
    helpers.append(relay)
    inside = [sys.executable, "-I", str(FORWARD_SCRIPT), "inside", str(port), REFEREE_SOCKET, "--"]
    return inside, [(path, REFEREE_SOCKET)]


def check_program(program: str, cwd: Path | None, env: Mapping[str, str]) -> None:
    """Raise the ``OSError`` that starting ``program`` would raise, if it cannot run."""
    if "/" in program:
        path = Path(program) if cwd is None else cwd / program
        if not path.is_file():
            raise FileNotFoundError(2, "No such file or directory", program)
        if not os.access(path, os.X_OK):
            raise PermissionError(13, "Permission denied", program)
        return
    if shutil.which(program, path=env.get("PATH", DEFAULT_PATH)) is None:
        raise FileNotFoundError(2, "No such file or directory", program)


# Arguments with these endings are scripts an interpreter runs: the first one must exist.
SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".sh", ".rb", ".pl", ".lua", ".php", ".jar")


def why_cannot_start(command: Sequence[str], cwd: Path, extra_env: Mapping[str, str]) -> str | None:
    """Why ``command`` could not start in ``cwd`` (one line), or None if it looks able to.

    Asked before a league plays (by the league file's check, and on every
    cluster worker): ``check_program``'s answer in words, plus the first
    script argument an interpreter would be given, which ``start_process``
    cannot see fail (the interpreter starts, then exits).
    """
    if not cwd.is_dir():
        return f"directory {str(cwd)!r} does not exist"
    program = command[0]
    try:
        check_program(os.path.expanduser(program), cwd, clean_environment(extra_env))
    except FileNotFoundError:
        missing = f"does not exist (looked in {cwd})" if "/" in program else "is not on PATH"
        return f"program {program!r} {missing}"
    except PermissionError:
        return f"program {program!r} is not executable"
    for argument in command[1:]:
        if argument.startswith("-"):
            continue
        if argument.endswith(SCRIPT_SUFFIXES) and not (cwd / argument).is_file():
            return f"script {argument!r} does not exist (looked in {cwd})"
        break  # only the first argument can be the script an interpreter runs
    return None


def tree_cpu_seconds(pid: int, limit: int = 4096) -> float | None:
    """User + system CPU of ``pid`` and its descendants, each with its reaped children.

    A walk down ``/proc/PID/task/TID/children`` rather than a scan of all of
    ``/proc``: a few reads per bot instead of one per process on the machine,
    twice per seat per match.  A descendant that was reparented (its parent
    exited) is no longer below ``pid`` and is missed; the cgroup's figure,
    where there is one, has no such gap.
    """
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    found = False
    pending = [pid]
    seen = 0
    while pending and seen < limit:
        current = pending.pop()
        seen += 1
        fields = stat_fields(current)
        # state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
        # cutime cstime: the CPU figures are the last four
        if fields is None or len(fields) < 15:
            continue
        found = True
        total += sum(int(value) for value in fields[11:15])
        with contextlib.suppress(OSError):
            for task in os.scandir(f"/proc/{current}/task"):
                with (
                    contextlib.suppress(OSError, ValueError),
                    open(f"{task.path}/children", "rb") as handle,
                ):
                    pending.extend(int(child) for child in handle.read().split())
    return total / ticks if found else None
