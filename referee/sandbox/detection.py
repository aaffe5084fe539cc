"""What this machine supports, found by trying each protection once.

Detection runs the real thing (a cgroup made and removed, ``unshare --net``,
a bubblewrap sandbox, ``/bin/sh``'s ``ulimit`` read back) rather than reading
versions, because containers and distributions differ in what they permit.
``detect()`` caches the answer for the process; ``levels.resolve`` turns it
and a level into a ``Sandbox``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from referee.sandbox.cgroups import sweep_stale
from referee.sandbox.isolation import Isolation, detect_isolation, failure_of
from referee.sandbox.setting import Limits
from referee.sandbox.shell import ULIMIT_FLAGS

# (A core size is only ever set to 0; a hard core limit of 0, as containers often have, must not
# fail the probe.  fsize's probe checks the 512-byte unit the two share.)
_ULIMIT_PROBE = {"core": (0, 0), "cpu": (7, 8), "fsize": (1536, 1536), "nofile": (99, 99)}
_ULIMIT_PROBE["as"] = (1 << 30, 1 << 30)
_LIMITS_NAMES = {
    "Max core file size": "core",
    "Max cpu time": "cpu",
    "Max file size": "fsize",
    "Max open files": "nofile",
    "Max address space": "as",
}

# bubblewrap with the whole filesystem as it is and only the network taken away; the bot
# dies with bwrap (which stays as its parent, in the same process group).
BWRAP_NO_NETWORK = ("--dev-bind", "/", "/", "--unshare-net", "--die-with-parent", "--")


@dataclasses.dataclass(frozen=True)
class Support:
    """What this machine offers, found by trying it; each ``*_why`` says why not, if not."""

    prlimit: str | None  # the prlimit program
    prlimit_why: str
    cgroup_v1: Mapping[str, Path]  # controller -> a directory we may create cgroups in
    cgroup_v2: Path | None  # a cgroup2 directory we may create cgroups in (cgroup.kill)
    cgroup_why: str
    netns: tuple[str, ...] | None  # the prefix that runs a program without network
    netns_why: str
    root: bool
    isolation: Isolation | None = None
    isolation_why: str = "not tried"
    shell_limits: bool = False  # /bin/sh's ulimit sets what prlimit would, in the units we use

    @property
    def memory_cgroup(self) -> bool:
        return "memory" in self.cgroup_v1

    @property
    def pids_cgroup(self) -> bool:
        return "pids" in self.cgroup_v1

    @property
    def cgroup_kill(self) -> bool:
        return self.cgroup_v2 is not None  # only kept by detection if a child has cgroup.kill


@functools.cache
def detect() -> Support:
    """What this machine supports (tried once per process, then remembered)."""
    if not sys.platform.startswith("linux"):
        why = f"not on Linux ({sys.platform})"
        return Support(None, why, {}, None, why, None, why, os.geteuid() == 0)
    prlimit = shutil.which("prlimit")
    prlimit_why = "" if prlimit else "the prlimit program (util-linux) is not installed"
    v1, v2, cgroup_why = _detect_cgroups()
    for parent in [*v1.values(), *([v2] if v2 is not None else [])]:
        sweep_stale(parent)
    netns, netns_why = _detect_netns()
    root = os.geteuid() == 0
    isolation, isolation_why = detect_isolation(root, Limits().scratch_bytes)
    return Support(
        prlimit,
        prlimit_why,
        v1,
        v2,
        cgroup_why,
        netns,
        netns_why,
        root,
        isolation,
        isolation_why,
        _detect_shell_limits(),
    )


def _detect_shell_limits(shell: str = "/bin/sh") -> bool:
    """Whether ``shell``'s ``ulimit`` sets each limit as ``ULIMIT_FLAGS`` says, exactly.

    Set through the shell, read back from ``/proc/self/limits`` of the program it
    execs: a shell with other units or flags (or none) leaves the limits to prlimit.
    """
    script = []
    for name, (soft, hard) in _ULIMIT_PROBE.items():
        flag, unit = ULIMIT_FLAGS[name]
        script += [f"ulimit -S -{flag} {soft // unit}", f"ulimit -H -{flag} {hard // unit}"]
    try:
        done = subprocess.run(
            [shell, "-c", " && ".join(script) + " && exec cat /proc/self/limits"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    seen: dict[str, tuple[int, int]] = {}
    for line in done.stdout.splitlines():
        for title, name in _LIMITS_NAMES.items():
            fields = line[len(title) :].split()
            if line.startswith(title) and len(fields) >= 2 and fields[0].isdigit():
                seen[name] = (int(fields[0]), int(fields[1]))
    return done.returncode == 0 and seen == _ULIMIT_PROBE


def _own_cgroups() -> tuple[dict[str, str], str | None]:
    """The referee's own cgroup path per v1 controller, and its v2 path."""
    v1: dict[str, str] = {}
    v2: str | None = None
    with contextlib.suppress(OSError), open("/proc/self/cgroup") as handle:
        for line in handle:
            number, controllers, path = line.rstrip("\n").split(":", 2)
            if number == "0" and not controllers:
                v2 = path
            for controller in controllers.split(","):
                if controller:
                    v1[controller] = path
    return v1, v2


def _cgroup_mounts() -> tuple[dict[str, Path], Path | None]:
    v1: dict[str, Path] = {}
    v2: Path | None = None
    with contextlib.suppress(OSError), open("/proc/self/mounts") as handle:
        for line in handle:
            fields = line.split()
            if len(fields) < 4:
                continue
            if fields[2] == "cgroup2" and v2 is None:
                v2 = Path(fields[1])
            elif fields[2] == "cgroup":
                for option in fields[3].split(","):
                    if option in ("memory", "pids", "cpuacct"):
                        v1[option] = Path(fields[1])
    return v1, v2


def _try_mkdir(parent: Path) -> str:
    """'' if a child cgroup can be made (and removed) in ``parent``, else why not."""
    probe = parent / f"newmarket-probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError as error:
        return f"cannot create a cgroup in {parent}: {error.strerror or error}"
    with contextlib.suppress(OSError):
        probe.rmdir()
    return ""


def _detect_cgroups() -> tuple[dict[str, Path], Path | None, str]:
    own_v1, own_v2 = _own_cgroups()
    mounts_v1, mount_v2 = _cgroup_mounts()
    usable: dict[str, Path] = {}
    problems: list[str] = []
    for controller in ("memory", "pids", "cpuacct"):
        mount = mounts_v1.get(controller)
        if mount is None:
            problems.append(f"no cgroup v1 {controller} controller mounted")
            continue
        parent = mount / own_v1.get(controller, "/").lstrip("/")
        why = _try_mkdir(parent)
        if why:
            problems.append(why)
        else:
            usable[controller] = parent
    v2: Path | None = None
    if mount_v2 is not None and own_v2 is not None:
        parent = mount_v2 / own_v2.lstrip("/")
        why = _try_mkdir(parent)
        if why:
            problems.append(why)
        elif _v2_has_kill(parent):
            v2 = parent
        else:
            problems.append("cgroup v2 without cgroup.kill (Linux < 5.14)")
    elif mount_v2 is None:
        problems.append("no cgroup v2 hierarchy mounted")
    return usable, v2, "; ".join(problems)


def _v2_has_kill(parent: Path) -> bool:
    probe = parent / f"newmarket-probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        return (probe / "cgroup.kill").exists()
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


def _detect_netns() -> tuple[tuple[str, ...] | None, str]:
    problems: list[str] = []
    unshare = shutil.which("unshare")
    if unshare is None:
        problems.append("unshare (util-linux) is not installed")
    else:
        why = failure_of([unshare, "--net", "--", "true"])
        if not why:
            return (unshare, "--net", "--"), ""
        problems.append(f"unshare --net: {why}")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        problems.append("bubblewrap is not installed")
    else:
        prefix = (bwrap, *BWRAP_NO_NETWORK)
        why = failure_of([*prefix, "true"])
        if not why:
            return prefix, ""
        problems.append(f"bwrap --unshare-net: {why}")
    return None, "; ".join(problems)
