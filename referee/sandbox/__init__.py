"""Per-bot limits and isolation: what this machine supports, and how a bot is started under it.

A bot is started by ``referee.transport.process.start_process`` and nowhere else; this
module gives that one place its protections.  The referee asks ``detect()``
once what the machine supports, then ``resolve(level, limits)`` turns a
``--sandbox`` level into a ``Sandbox``: the protections that will really be
applied, and a plain line for each one that will not.

How each protection is applied, and why that way:

* **rlimits** (CPU seconds, open files, file size, processes, optionally
  address space; core dumps off) by an exec wrapper, util-linux ``prlimit
  --LIMIT=N -- argv``, which sets the limits on itself and then execs the
  bot.  Not ``preexec_fn``: Python code between fork and exec is unsafe in a
  process with threads (trio's worker threads, a Dask worker's), because a
  lock held by another thread at the fork stays held for ever in the child.
  Not ``prlimit(pid)`` after the start either: a bot could fork before the
  limit lands.  An isolated stdio bot already has a shell just before it (it
  puts the bot's pipes back on 0 and 1): that shell sets the limits with its
  own ``ulimit`` instead, one exec fewer, where detection found ``/bin/sh``'s
  ``ulimit`` exact (its units are the shell's: ``bash`` outside POSIX mode
  counts file sizes in KiB, ``dash`` in 512-byte blocks).
* **cgroups** (memory, pids, CPU accounting, and ``cgroup.kill``): one
  cgroup per bot in each hierarchy, created beneath the referee's own cgroup
  (so a bot stays inside whatever limits the referee itself runs under).
  The bot joins them *before* its program runs: the first wrapper is
  ``/bin/sh -c 'echo $$ > .../cgroup.procs ...; exec "$@"'`` (the argv is
  passed as arguments, never parsed by the shell), so not even the bot's
  first fork escapes.
* **no network** for stdio bots: a new, empty network namespace (``unshare
  --net``, which keeps the pid, or bubblewrap's ``--unshare-net`` where
  ``unshare`` is not permitted).  TCP bots need the network to reach the
  referee and are never given this.

The process group (``start_new_session``) is always used, at every level: it
is how ``BotProcess.end`` signals the tree.  A cgroup adds what a group
cannot: a grandchild that calls ``setsid()`` leaves the group but never the
cgroup, and ``cgroup.kill`` (or, on cgroup v1, SIGKILL to every member until
none is left) ends it too.

* **isolation** (``referee.sandbox.isolation``): bubblewrap namespaces, a
  read-only view of the machine with a private scratch tmpfs, and, when the
  referee is root, an unprivileged uid of its own per bot process.  Where it
  applies, the bot's network namespace is its own too (the ``unshare --net``
  prefix above is the fallback where bubblewrap is missing).

Levels: ``none`` (the process group only), ``basic`` (+ rlimits), ``strict``
(+ cgroups, isolation and no network; refused with a clear error naming what
is missing where the machine cannot give them), ``auto`` (everything this
machine supports, and a plain line for what it does not).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from referee.sandbox.isolation import Isolation, UidLease, detect_isolation, failure_of

Level = Literal["none", "basic", "strict", "auto"]
LEVELS: tuple[Level, ...] = ("none", "basic", "strict", "auto")
DEFAULT_LEVEL: Level = "auto"

MIB = 1 << 20

ENV_SANDBOX = "NEWMARKET_SANDBOX"
"""How a league hands its sandbox setting to its table workers (local or Dask):
``{"level": ..., "limits": {...}}`` as JSON, or just a level.  Each worker
resolves it on its own machine, since that is where the bots run."""

# The shell prelude that puts the bot into its cgroups before anything of it runs (and sets an
# isolated bot's pipes aside): one shell for both, as every exec costs about a millisecond of
# CPU (benchmarks/sandbox.py).  Arguments: the cgroup.procs files, then "--", then the argv.
_JOIN_CGROUPS = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; '
_EXEC = 'exec "$@"'

# prlimit's name of a limit -> the flag of the shell's ulimit, and its unit in bytes (512 for
# file and core sizes in POSIX shells, KiB for address space; detect() checks /bin/sh's).
_ULIMIT_FLAGS = {"core": ("c", 512), "cpu": ("t", 1), "nofile": ("n", 1), "fsize": ("f", 512)}
_ULIMIT_FLAGS["as"] = ("v", 1024)
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

# An isolated bot's pipes travel as fds 3 and 4 through the bubblewrap chain, whose monitor
# processes close every fd above 2 but keep 0 and 1: on 0 and 1 the referee would see no end
# of output when the bot closes its stdout, only when the whole chain exits.
_PIPES_ASIDE = "exec 3<&0 4>&1 </dev/null >/dev/null; "
_PIPES_BACK = 'exec <&3 >&4 3<&- 4>&-; exec "$@"'

# The shell just before an isolated stdio bot reads this line from the bot's stdin before the
# bot runs: a sandbox is made ready ahead of its bot (referee.transport.process) and waits
# here.  read takes a pipe byte by byte, so the bot's first byte is the first after the line;
# at the end of stdin (its referee gone) the shell exits and nothing of the bot ever ran.
START_LINE = b"start\n"
_AWAIT_START = 'read -r line <&3 && [ "$line" = start ] || exit 125; '

# bubblewrap with the whole filesystem as it is and only the network taken away; the bot
# dies with bwrap (which stays as its parent, in the same process group).
BWRAP_NO_NETWORK = ("--dev-bind", "/", "/", "--unshare-net", "--die-with-parent", "--")


class SandboxError(ValueError):
    """A level this machine cannot give (``strict`` without cgroups, say), or bad limits."""


@dataclasses.dataclass(frozen=True)
class Limits:
    """Per-bot limits; ``None`` leaves one unlimited.

    ``cpu_seconds`` is per bot *process*, over its whole life: a league keeps
    one process for many matches, and restarts a bot killed by the limit
    before its next match, so a long league loses at most one match to it.
    ``processes`` is the cgroup's ``pids.max`` (RLIMIT_NPROC counts every
    process of the user and root ignores it: see ``resolve``).
    ``address_space_bytes`` (RLIMIT_AS) is opt-in: the JVM and V8 reserve far
    more address space than they use and fail to start under it.
    """

    cpu_seconds: int | None = 3600
    open_files: int | None = 256
    file_size_bytes: int | None = 256 * MIB
    processes: int | None = 128
    memory_bytes: int | None = 2048 * MIB
    address_space_bytes: int | None = None
    scratch_bytes: int | None = 64 * MIB  # the isolated bot's tmpfs; None: tmpfs's own default

    def to_json(self) -> dict[str, int | None]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Limits:
        fields = {field.name for field in dataclasses.fields(cls)}
        values: dict[str, int | None] = {}
        for key, value in data.items():
            if key not in fields:
                raise SandboxError(f"sandbox limits: unknown limit {key!r}")
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise SandboxError(f"sandbox limits: {key} must be a whole number or none")
            if value is not None and value < 1:
                raise SandboxError(f"sandbox limits: {key} must be at least 1, got {value}")
            values[key] = value
        return cls(**values)


# ---------------------------------------------------------------- what the machine has


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
    """Whether ``shell``'s ``ulimit`` sets each limit as ``_ULIMIT_FLAGS`` says, exactly.

    Set through the shell, read back from ``/proc/self/limits`` of the program it
    execs: a shell with other units or flags (or none) leaves the limits to prlimit.
    """
    script = []
    for name, (soft, hard) in _ULIMIT_PROBE.items():
        flag, unit = _ULIMIT_FLAGS[name]
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


def sweep_stale(parent: Path) -> None:
    """Remove the cgroups a referee that is gone left behind, ending any bot still in one.

    A referee killed with SIGKILL cannot remove its bots' cgroups (nor end
    their trees): the next referee on the machine does, for each
    ``newmarket-<pid>-<n>`` whose ``<pid>`` no longer runs.
    """
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            parts = entry.name.split("-")
            if len(parts) != 3 or parts[0] != "newmarket" or not parts[1].isdigit():
                continue
            if _pid_runs(int(parts[1])):
                continue
            _remove_stale(Path(entry.path))


def _remove_stale(path: Path) -> None:
    """SIGKILL what is left in a dead referee's cgroup and remove it, if it can go now."""
    with contextlib.suppress(OSError, ValueError):
        for pid in (path / "cgroup.procs").read_text().split():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(pid), signal.SIGKILL)
    with contextlib.suppress(OSError):
        path.rmdir()  # EBUSY while a killed member is still exiting: next time


def _pid_runs(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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


# ---------------------------------------------------------------- a resolved sandbox


@dataclasses.dataclass(frozen=True)
class Sandbox:
    """The protections one referee applies to every bot it starts; see ``resolve``."""

    level: Level
    limits: Limits
    rlimits: bool = False
    cgroups: Mapping[str, Path] = dataclasses.field(default_factory=dict)  # v1 controllers
    cgroup_v2: Path | None = None
    netns: tuple[str, ...] | None = None
    prlimit: str | None = None
    root: bool = False
    missing: tuple[str, ...] = ()  # a plain line for each protection not applied
    isolation: Isolation | None = None
    shell_limits: bool = False  # see Support.shell_limits

    def active(self) -> list[str]:
        """The protections applied, one short phrase each (what the log header records)."""
        limits = self.limits
        out = ["process group"]
        if self.rlimits:
            parts = []
            if limits.cpu_seconds is not None:
                parts.append(f"cpu {limits.cpu_seconds} s")
            if limits.open_files is not None:
                parts.append(f"open files {limits.open_files}")
            if limits.file_size_bytes is not None:
                parts.append(f"file size {_size(limits.file_size_bytes)}")
            if limits.address_space_bytes is not None:
                parts.append(f"address space {_size(limits.address_space_bytes)}")
            if self._nproc_rlimit() is not None:
                parts.append(f"processes {limits.processes} (RLIMIT_NPROC, per user)")
            parts.append("no core dumps")
            out.append("rlimits (" + ", ".join(parts) + ")")
        if "memory" in self.cgroups and limits.memory_bytes is not None:
            out.append(f"memory cgroup {_size(limits.memory_bytes)}")
        if "pids" in self.cgroups and limits.processes is not None:
            out.append(f"pids cgroup {limits.processes}")
        if "cpuacct" in self.cgroups or self.cgroup_v2 is not None:
            out.append("cpu time from the cgroup")
        if self.cgroup_v2 is not None:
            out.append("cgroup.kill")
        if self.isolation is not None:
            out.append(self.isolation.describe())
            out.append("no network (a TCP bot reaches only its referee's listener)")
        elif self.netns is not None:
            tool = "bubblewrap" if "bwrap" in Path(self.netns[0]).name else "unshare"
            out.append(f"no network for stdio bots ({tool})")
        return out

    def describe(self) -> str:
        """One line for the operator: the level, what is active and what is not."""
        text = f"sandbox {self.level}: " + ", ".join(self.active())
        if self.missing:
            text += "; NOT active: " + "; ".join(self.missing)
        return text

    def to_json(self) -> dict[str, object]:
        """For the match log's header."""
        return {
            "level": self.level,
            "active": self.active(),
            "missing": list(self.missing),
            "limits": self.limits.to_json(),
        }

    @property
    def uses_cgroups(self) -> bool:
        return bool(self.cgroups) or self.cgroup_v2 is not None

    def _nproc_rlimit(self) -> int | None:
        # RLIMIT_NPROC counts every process of the real user, and root is exempt; it is
        # used only where no pids cgroup limits the bot, and only for a non-root user.
        if self.limits.processes is None or "pids" in self.cgroups or self.root:
            return None
        return self.limits.processes

    def wrap(
        self,
        argv: Sequence[str],
        *,
        stdio: bool,
        cgroup_procs: Sequence[Path],
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        uid: int | None = None,
        inner_prefix: Sequence[str] = (),
        extra_binds: Sequence[tuple[str, str]] = (),
        own_dir: bool = True,
        seccomp_fd: int | None = None,
        etc_fds: Mapping[str, int] = MappingProxyType({}),
    ) -> list[str]:
        """The argv that starts ``argv`` under this sandbox (``argv`` itself at level none).

        Order: join the cgroups (as the referee), then the isolation (which
        switches to the bot's ``uid`` when the referee is root), then the
        rlimits, innermost, on the bot alone.
        """
        out: list[str] = []
        aside = self.isolation is not None and stdio
        if cgroup_procs or aside:
            script = _JOIN_CGROUPS + (_PIPES_ASIDE if aside else "") + _EXEC
            out += ["/bin/sh", "-c", script, "newmarket-sandbox"]
            out += [str(path) for path in cgroup_procs]
            out.append("--")
        limits: list[str] = []
        if self.rlimits and self.prlimit is not None:
            limits = [self.prlimit, *self._prlimit_options(), "--"]
        if self.isolation is not None:
            back: list[str] = []
            if stdio:
                set_limits = self._ulimit_script() if limits and self.shell_limits else None
                if set_limits is not None:
                    limits = []
                script = _AWAIT_START + (set_limits or "") + _PIPES_BACK
                back = ["/bin/sh", "-c", script, "newmarket-stdio"]
            return out + self.isolation.command(
                argv,
                cwd=cwd,
                env=env or {},
                uid=uid,
                inner_prefix=[*back, *inner_prefix, *limits],
                extra_binds=extra_binds,
                own_dir=own_dir,
                seccomp_fd=seccomp_fd,
                etc_fds=etc_fds,
            )
        if stdio and self.netns is not None:
            out += self.netns
        return out + limits + list(argv)

    def lease_uid(self) -> UidLease | None:
        """The bot's own uid (root only), held until the lease is released."""
        if self.isolation is None or not self.isolation.own_uids:
            return None
        return self.isolation.pool.lease()

    def _rlimit_values(self) -> list[tuple[str, int, int]]:
        """Each rlimit to set: (prlimit's name for it, soft, hard)."""
        limits = self.limits
        values = [("core", 0, 0)]
        if limits.cpu_seconds is not None:
            # SIGXCPU at the soft limit (a bot may catch it), SIGKILL a second later.
            values.append(("cpu", limits.cpu_seconds, limits.cpu_seconds + 1))
        if limits.open_files is not None:
            values.append(("nofile", limits.open_files, limits.open_files))
        if limits.file_size_bytes is not None:
            values.append(("fsize", limits.file_size_bytes, limits.file_size_bytes))
        if limits.address_space_bytes is not None:
            values.append(("as", limits.address_space_bytes, limits.address_space_bytes))
        nproc = self._nproc_rlimit()
        if nproc is not None:
            total = nproc + _user_processes()
            values.append(("nproc", total, total))
        return values

    def _prlimit_options(self) -> list[str]:
        return [f"--{name}={soft}:{hard}" for name, soft, hard in self._rlimit_values()]

    def _ulimit_script(self) -> str | None:
        """Shell commands setting the rlimits (soft before hard, so that a lower hard limit
        never meets a higher soft one), or None if one cannot be said exactly in the shell's
        units (or at all: RLIMIT_NPROC's flag differs between shells)."""
        commands = []
        for name, soft, hard in self._rlimit_values():
            if name not in _ULIMIT_FLAGS:
                return None
            flag, unit = _ULIMIT_FLAGS[name]
            if soft % unit or hard % unit:
                return None
            commands += [f"ulimit -S -{flag} {soft // unit}", f"ulimit -H -{flag} {hard // unit}"]
        return " && ".join(commands) + " || exit 125; "


def _user_processes() -> int:
    """How many processes this user has now (RLIMIT_NPROC counts them against the bot)."""
    uid = os.getuid()
    count = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    if entry.stat().st_uid == uid:
                        count += 1
    return count


def _size(count: int) -> str:
    if count % (1 << 30) == 0:
        return f"{count >> 30} GiB"
    if count % MIB == 0:
        return f"{count // MIB} MiB"
    return f"{count} bytes"


NO_SANDBOX = Sandbox(level="none", limits=Limits())


def resolve(level: str, limits: Limits | None = None, support: Support | None = None) -> Sandbox:
    """The sandbox ``level`` gives on this machine; ``SandboxError`` if ``strict`` cannot be had."""
    if level not in LEVELS:
        raise SandboxError(f"{level!r} is not one of {', '.join(LEVELS)}")
    limits = limits or Limits()
    support = support or detect()
    missing: list[str] = []
    if level == "none":
        return Sandbox(level="none", limits=limits, root=support.root)
    rlimits = support.prlimit is not None
    if not rlimits:
        missing.append(f"rlimits: {support.prlimit_why}")
    if level == "basic":
        if limits.processes is not None and support.root:
            missing.append("process count: RLIMIT_NPROC is not enforced for root (level basic)")
        return Sandbox(
            level="basic",
            limits=limits,
            rlimits=rlimits,
            prlimit=support.prlimit,
            root=support.root,
            missing=tuple(missing),
        )
    cgroups = dict(support.cgroup_v1)
    v2 = support.cgroup_v2 if support.cgroup_kill else None
    for controller, what in (("memory", "memory limit"), ("pids", "process count limit")):
        if controller not in cgroups:
            missing.append(f"{what}: no {controller} cgroup ({support.cgroup_why})")
    if v2 is None:
        missing.append(
            "cgroup.kill: a setsid() escapee is killed only if a v1 cgroup lists it "
            f"({support.cgroup_why or 'no cgroup v2'})"
        )
    isolation = support.isolation
    if isolation is None:
        missing.append(f"isolation: {support.isolation_why}")
    else:
        isolation = dataclasses.replace(isolation, scratch_bytes=limits.scratch_bytes)
        if isolation.seccomp is None:
            missing.append(
                "lock filter: no seccomp filter for this machine's bwrap or architecture: "
                "bots can signal each other through file locks on shared system files"
            )
    if support.netns is None and isolation is None:
        missing.append(f"no-network: {support.netns_why}")
    if level == "strict":
        # A lock filter exists only for x86_64: elsewhere strict would be impossible.
        optional = ("cgroup.kill", "lock filter")
        essential = [line for line in missing if not line.startswith(optional)]
        if essential:
            raise SandboxError(
                "--sandbox strict is not possible on this machine: "
                + "; ".join(essential)
                + " (use --sandbox auto to run with what is available)"
            )
    return Sandbox(
        level="strict" if level == "strict" else "auto",
        limits=limits,
        rlimits=rlimits,
        cgroups=cgroups,
        cgroup_v2=v2,
        netns=support.netns,
        prlimit=support.prlimit,
        root=support.root,
        missing=tuple(missing),
        isolation=isolation,
        shell_limits=support.shell_limits,
    )


# ---------------------------------------------------------------- one bot's cgroups


# Names of this process's cgroups: next() is atomic, and sandboxes are also prepared on the
# referee's forking thread (referee.transport.process), where a += on a global could hand
# out a name twice.
_NUMBERS = itertools.count(1)


class BotCgroups:
    """One bot's cgroups (one per hierarchy): created before its start, removed after its end."""

    def __init__(self, sandbox: Sandbox) -> None:
        name = f"newmarket-{os.getpid()}-{next(_NUMBERS)}"
        self.dirs: dict[str, Path] = {}
        for controller, parent in sandbox.cgroups.items():
            self.dirs[controller] = parent / name
        if sandbox.cgroup_v2 is not None:
            self.dirs["v2"] = sandbox.cgroup_v2 / name
        self.limits = sandbox.limits

    def create(self) -> list[Path]:
        """Make the cgroups and set their limits; the ``cgroup.procs`` files to join.

        Raises ``OSError`` (after removing what it made) if one cannot be made.
        """
        made: list[Path] = []
        try:
            for controller, path in self.dirs.items():
                try:
                    path.mkdir()
                except FileExistsError:
                    # This process's own counter never repeats a name, so the cgroup is a
                    # SIGKILLed referee's whose pid this process now has (pid_max may be
                    # only 32768): sweep_stale skips it, as the pid runs. Reclaim it.
                    _remove_stale(path)
                    path.mkdir()
                made.append(path)
                if controller == "memory" and self.limits.memory_bytes is not None:
                    value = str(self.limits.memory_bytes)
                    (path / "memory.limit_in_bytes").write_text(value)
                    swap = path / "memory.memsw.limit_in_bytes"
                    if swap.exists():  # swap counts too, or the bot swaps instead of dying
                        swap.write_text(value)
                if controller == "pids" and self.limits.processes is not None:
                    (path / "pids.max").write_text(str(self.limits.processes))
        except OSError:
            for path in made:
                with contextlib.suppress(OSError):
                    path.rmdir()
            raise
        return [path / "cgroup.procs" for path in self.dirs.values()]

    def members(self) -> set[int]:
        pids: set[int] = set()
        for path in self.dirs.values():
            with contextlib.suppress(OSError, ValueError):
                pids.update(int(line) for line in (path / "cgroup.procs").read_text().split())
        return pids

    def kill(self) -> None:
        """SIGKILL every process in the cgroups (``cgroup.kill`` where there is one)."""
        v2 = self.dirs.get("v2")
        if v2 is not None:
            with contextlib.suppress(OSError):
                (v2 / "cgroup.kill").write_text("1")
        for pid in self.members():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def cpu_seconds(self) -> float | None:
        """CPU time of every process that ever ran in the cgroup, reaped or not."""
        v2 = self.dirs.get("v2")
        if v2 is not None:
            with contextlib.suppress(OSError, ValueError):
                for line in (v2 / "cpu.stat").read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "usage_usec":
                        return int(value) / 1e6
        cpuacct = self.dirs.get("cpuacct")
        if cpuacct is not None:
            with contextlib.suppress(OSError, ValueError):
                return int((cpuacct / "cpuacct.usage").read_text()) / 1e9
        return None

    def memory_peak(self) -> int | None:
        memory = self.dirs.get("memory")
        if memory is None:
            return None
        with contextlib.suppress(OSError, ValueError):
            return int((memory / "memory.max_usage_in_bytes").read_text())
        return None

    def oom_killed(self) -> bool:
        """Whether the memory limit was hit (the kernel's OOM killer acted in this cgroup)."""
        memory = self.dirs.get("memory")
        if memory is None:
            return False
        with contextlib.suppress(OSError, ValueError):
            for line in (memory / "memory.oom_control").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and int(value) > 0:
                    return True
        return False

    def remove(self) -> None:
        """Remove the (now empty) cgroups; a cgroup still in use is left, never an error."""
        for path in self.dirs.values():
            with contextlib.suppress(OSError):
                path.rmdir()


# ---------------------------------------------------------------- a setting in the environment


def setting_to_env(level: str, limits: Limits) -> str:
    return json.dumps({"level": level, "limits": limits.to_json()})


def setting_from_env(text: str | None = None) -> tuple[str, Limits]:
    """The level and limits in ``NEWMARKET_SANDBOX`` (default: auto, the default limits)."""
    if text is None:
        text = os.environ.get(ENV_SANDBOX, "")
    text = text.strip()
    if not text:
        return DEFAULT_LEVEL, Limits()
    if not text.startswith("{"):
        return text, Limits()
    try:
        data = json.loads(text)
    except ValueError as error:
        raise SandboxError(f"{ENV_SANDBOX}: not JSON: {error}") from None
    if not isinstance(data, dict):
        raise SandboxError(f"{ENV_SANDBOX}: must be a level or a JSON object")
    limits = data.get("limits") or {}
    if not isinstance(limits, dict):
        raise SandboxError(f"{ENV_SANDBOX}: limits must be an object")
    return str(data.get("level", DEFAULT_LEVEL)), Limits.from_json(limits)
