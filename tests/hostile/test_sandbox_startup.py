"""The sandbox's cheaper start-up gives every bot exactly the limits it was given.

An isolated stdio bot's rlimits are set by the shell that puts its pipes back
(its ``ulimit``), not by a ``prlimit`` exec of their own, where detection found
``/bin/sh`` exact; every other start keeps ``prlimit``.  A bot reads its own
``/proc/self/limits`` from inside the real sandbox, so units or a dropped limit
would show.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio

from referee.sandbox import (
    MIB,
    Limits,
    Sandbox,
    Support,
    detect,
    resolve,
)
from referee.sandbox.detection import _detect_shell_limits
from referee.sandbox.isolation import UID_BASE, Isolation
from referee.transport.process import clean_environment, start_process, wait_for_ready_sandboxes

SUPPORT = detect()
REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")
NEEDS_ISOLATION = pytest.mark.skipif(
    SUPPORT.isolation is None, reason=f"no isolation on this machine: {SUPPORT.isolation_why}"
)

# Everything, /bin/sh's ulimit included (the paths are never run: only the argv is looked at).
EVERYTHING = Support(
    prlimit="/usr/bin/prlimit",
    prlimit_why="",
    cgroup_v1={"memory": Path("/cg/memory"), "pids": Path("/cg/pids")},
    cgroup_v2=Path("/cg/unified"),
    cgroup_why="",
    netns=("/usr/bin/unshare", "--net", "--"),
    netns_why="",
    root=True,
    isolation=Isolation("/usr/bin/bwrap", "/usr/bin/setpriv", 64 * MIB, seccomp=b"a filter"),
    isolation_why="",
    shell_limits=True,
)


def chain(limits: Limits, *, stdio: bool = True, support: Support = EVERYTHING) -> list[str]:
    sandbox = resolve("auto", limits, support=support)
    procs = [Path("/cg/pids/b/cgroup.procs")]
    return sandbox.wrap(["bot"], stdio=stdio, cgroup_procs=procs, uid=1900000003)


def test_an_isolated_stdio_bot_gets_its_limits_from_the_shell_before_it_not_a_prlimit() -> None:
    argv = chain(Limits(cpu_seconds=5, open_files=64, file_size_bytes=MIB))
    assert "/usr/bin/prlimit" not in argv
    (script,) = [word for word in argv if "exec <&3 >&4" in word]  # the shell just before the bot
    assert script.index("ulimit -S -t 5 && ulimit -H -t 6") < script.index("exec <&3")
    assert "ulimit -H -n 64" in script and "ulimit -H -f 2048" in script  # 512-byte blocks
    assert argv[-1] == "bot" and argv[-5:-1] == ["/bin/sh", "-c", script, "newmarket-stdio"]
    # One shell before bubblewrap joins the cgroups and sets the pipes aside.
    assert argv[:2] == ["/bin/sh", "-c"] and argv[6] == "/usr/bin/bwrap"
    assert "exec 3<&0 4>&1" in argv[2] and argv.count("/bin/sh") == 2


def test_limits_the_shell_cannot_say_exactly_stay_with_prlimit() -> None:
    # A size that is no whole number of the shell's blocks, a TCP bot (no shell before it),
    # a shell whose ulimit detection found inexact.
    odd = chain(Limits(file_size_bytes=1000))
    assert "--fsize=1000:1000" in odd and not any("ulimit" in word for word in odd)
    tcp = chain(Limits(), stdio=False)
    assert "/usr/bin/prlimit" in tcp and not any("ulimit" in word for word in tcp)
    plain = chain(Limits(), support=dataclasses.replace(EVERYTHING, shell_limits=False))
    assert "/usr/bin/prlimit" in plain and not any("ulimit" in word for word in plain)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_a_shell_whose_ulimit_counts_other_units_is_not_trusted_with_limits() -> None:
    # bash outside POSIX mode counts file sizes in KiB where POSIX shells count 512 bytes.
    bash = shutil.which("bash")
    assert bash is not None
    assert not _detect_shell_limits(bash)
    assert _detect_shell_limits("/bin/sh") == SUPPORT.shell_limits


async def limits_seen(limits: Limits) -> dict[str, tuple[str, str]]:
    """What a bot under ``auto`` with ``limits`` reads in its ``/proc/self/limits``."""
    bot = await start_process(
        ["/bin/cat", "/proc/self/limits"],
        cwd=None,
        env=clean_environment(),
        stdio=True,
        sandbox=resolve("auto", limits),
    )
    assert bot.process.stdout is not None
    output = b""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(bot.watch)
        nursery.start_soon(bot.drain_stderr)
        with trio.fail_after(60):
            while data := await bot.process.stdout.receive_some(65536):
                output += data
        await bot.end()
        nursery.cancel_scope.cancel()
    seen = {}
    for line in output.decode().splitlines()[1:]:
        name, soft, hard = line[:26].strip(), *line[26:].split()[:2]
        seen[name] = (soft, hard)
    assert seen, bot.stderr.text()
    return seen


@NEEDS_ISOLATION
@pytest.mark.parametrize(
    ("size", "space"),
    [(3 * MIB, 4 << 30), (1000, None)],  # in the shell's units, and not: prlimit's
)
async def test_an_isolated_bot_has_exactly_the_limits_it_was_given(
    size: int, space: int | None
) -> None:
    limits = Limits(cpu_seconds=77, open_files=99, file_size_bytes=size, address_space_bytes=space)
    seen = await limits_seen(limits)
    assert seen["Max cpu time"] == ("77", "78")
    assert seen["Max open files"] == ("99", "99")
    assert seen["Max file size"] == (str(size), str(size))
    assert seen["Max core file size"] == ("0", "0")
    expected = "unlimited" if space is None else str(space)
    assert seen["Max address space"] == (expected, expected)


async def output_of(argv: list[str]) -> bytes:
    """What ``argv`` under ``auto`` writes on its stdout."""
    bot = await start_process(
        argv, cwd=None, env=clean_environment(), stdio=True, sandbox=resolve("auto")
    )
    assert bot.process.stdout is not None
    output = b""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(bot.watch)
        nursery.start_soon(bot.drain_stderr)
        with trio.fail_after(60):
            while data := await bot.process.stdout.receive_some(65536):
                output += data
        await bot.end()
        nursery.cancel_scope.cancel()
    return output


@NEEDS_ISOLATION
async def test_a_bot_argument_longer_than_a_file_name_is_passed_not_refused() -> None:
    # The view looks for files among the arguments; one that cannot be a file is no error.
    word = "x" * 300
    assert await output_of(["/bin/echo", word]) == f"{word}\n".encode()


# ---------------------------------------------------------------- sandboxes made ready ahead

# A bot that says what it sees: its first line of input, its scratch, its environment, its
# uid and whether it is pid 2 of its namespace (its init is 1); then leaves a mark.
LOOK = (
    'read line; echo "line $line"; echo "tmp $(ls -A /tmp | tr "\\n" " ")"; echo "env $NM_LOOK"; '
    'echo "uid $(id -u)"; echo "pid $$"; touch /tmp/mark'
)


def children() -> set[int]:
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        found.update(int(pid) for pid in (task / "children").read_text().split())
    return found


async def look(sandbox: Sandbox, marker: str) -> tuple[int, dict[str, str]]:
    """Start LOOK, give it its first line; (its host pid, what it said, word by first word)."""
    env = clean_environment({"NM_LOOK": marker})
    bot = await start_process(
        ["/bin/sh", "-c", LOOK], cwd=None, env=env, stdio=True, sandbox=sandbox
    )
    assert bot.process.stdin is not None and bot.process.stdout is not None
    output = b""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(bot.watch)
        nursery.start_soon(bot.drain_stderr)
        await bot.process.stdin.send_all(b"first\n")
        with trio.fail_after(60):
            while data := await bot.process.stdout.receive_some(65536):
                output += data
        await bot.end()
        nursery.cancel_scope.cancel()
    said = dict(line.split(" ", 1) for line in output.decode().splitlines())
    assert said, bot.stderr.text()
    return bot.pid, said


@NEEDS_ISOLATION
async def test_a_command_started_again_finds_its_sandbox_ready_fresh_and_unused() -> None:
    sandbox = resolve("auto")
    marker = secrets.token_hex(4)
    first_pid, first = await look(sandbox, marker)
    await look(sandbox, marker)  # its second start: the third one's sandbox is made now
    assert await trio.to_thread.run_sync(wait_for_ready_sandboxes, 60)
    waiting = children()
    pid, said = await look(sandbox, marker)
    assert pid in waiting  # it was there before this start: made ready ahead
    # And nothing in it tells it from a sandbox made for it: the first line is the referee's
    # first line to the bot, the scratch is empty (the earlier bots left a mark in theirs),
    # the environment is its own, it is its namespace's pid 2 and runs as a bot uid.
    assert said == {**first, "uid": said["uid"]}
    assert said["line"] == "first" and said["tmp"] == "" and said["env"] == marker
    assert said["pid"] == "2"
    assert SUPPORT.root is False or int(said["uid"]) >= UID_BASE
    assert first_pid not in children()


# A referee that starts one command twice, so that the next one's sandbox is made ready, and
# says its pid, the waiting sandbox's (its one child) and its cgroups; then, when its stdin
# ends, exits, or hangs (to be killed), or forks.
REFEREE = """
import os, sys, time, trio
from referee.transport.process import clean_environment, start_process, wait_for_ready_sandboxes
from referee.sandbox import resolve

async def twice():
    for _ in range(2):
        bot = await start_process(["/bin/cat"], cwd=None, env=clean_environment(), stdio=True,
                                  sandbox=resolve("auto"))
        await bot.end()

trio.run(twice)
assert wait_for_ready_sandboxes(60)
(waiting,) = [int(p) for t in os.listdir("/proc/self/task")
              for p in open(f"/proc/self/task/{t}/children").read().split()]
from referee.transport import process
(ready,) = process._READY._ready.values()
print(os.getpid(), waiting, *(ready.cgroups.dirs.values() if ready.cgroups else ()), flush=True)
sys.stdin.read()
if sys.argv[1] == "hang":
    time.sleep(600)
elif sys.argv[1] == "fork":
    stdin = ready.ours[0]
    child = os.fork()
    if child == 0:
        # The child holds no copy of the waiting sandbox's stdin, and would make its own.
        try:
            os.fstat(stdin)
            held = "held"
        except OSError:
            held = "closed"
        print("child", len(process._READY._ready), held, flush=True)
        os._exit(0)
    os.waitpid(child, 0)
"""


def sandbox_processes(pid: int) -> list[int]:
    """``pid`` and its descendants that still run."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        with contextlib.suppress(OSError):
            if Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            found.append(current)
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(child) for child in (task / "children").read_text().split()]
    return found


def run_referee(how: str) -> tuple[subprocess.Popen[str], int, list[Path]]:
    """The referee, its waiting sandbox's pid and that sandbox's cgroups."""
    referee = subprocess.Popen(
        [sys.executable, "-c", REFEREE, how],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert referee.stdout is not None
    line = referee.stdout.readline().split()
    assert len(line) >= 2, line
    return referee, int(line[1]), [Path(path) for path in line[2:]]


def gone(pids: list[int]) -> bool:
    """Whether every one of ``pids`` has ended, given a loaded machine a generous minute."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if not any(sandbox_processes(pid) for pid in pids):
            return True
        time.sleep(0.05)
    return False


@NEEDS_ISOLATION
def test_a_waiting_sandbox_ends_with_its_referee_at_exit_and_on_sigkill() -> None:
    for how in ("exit", "hang"):
        referee, waiting, cgroups = run_referee(how)
        chain = sandbox_processes(waiting)
        assert chain  # (the sandbox's processes: its prelude, both bubblewraps, the shell)
        assert referee.stdin is not None
        referee.stdin.close()  # go on
        if how == "hang":
            referee.kill()  # SIGKILL: the sandbox's stdin closes with the referee
        referee.wait(timeout=120)
        assert gone(chain), f"{how}: the waiting sandbox outlived its referee"
        if how == "exit":  # (a SIGKILLed referee's are swept by the next: test_sandbox.py)
            assert not any(path.exists() for path in cgroups), cgroups


@NEEDS_ISOLATION
def test_a_forked_child_never_hands_out_its_parents_waiting_sandbox() -> None:
    referee, waiting, _ = run_referee("fork")
    assert referee.stdin is not None and referee.stdout is not None
    referee.stdin.close()
    said = referee.stdout.read()
    referee.wait(timeout=120)
    assert said.split() == ["child", "0", "closed"]
    assert gone(sandbox_processes(waiting))
