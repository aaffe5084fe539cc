"""The sandbox's cheaper start-up gives every bot exactly the limits it was given.

An isolated stdio bot's rlimits are set by the shell that puts its pipes back
(its ``ulimit``), not by a ``prlimit`` exec of their own, where detection found
``/bin/sh`` exact; every other start keeps ``prlimit``.  A bot reads its own
``/proc/self/limits`` from inside the real sandbox, so units or a dropped limit
would show.
"""

from __future__ import annotations

import dataclasses
import shutil
import sys
from pathlib import Path

import pytest
import trio

from referee.process import clean_environment, start_process
from referee.sandbox import MIB, Limits, Support, _detect_shell_limits, detect, resolve
from referee.sandbox.isolation import Isolation

SUPPORT = detect()
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
