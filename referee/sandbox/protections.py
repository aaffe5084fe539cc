"""A resolved sandbox: the protections applied to every bot, and the argv that applies them.

``Sandbox`` is plain data (what ``levels.resolve`` found it could give) plus
``wrap``, which builds the one argv a bot process is started with: join the
cgroups, then the isolation, then the rlimits, innermost, on the bot alone.
It also says, in one line, what is active and what is not, for the operator
and the match log's header.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

from referee.sandbox.isolation import Isolation, UidLease
from referee.sandbox.setting import MIB, Level, Limits
from referee.sandbox.shell import (
    AWAIT_START,
    EXEC,
    JOIN_CGROUPS,
    PIPES_ASIDE,
    PIPES_BACK,
    ULIMIT_FLAGS,
)


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
        out = _cgroup_prelude(cgroup_procs, aside=self.isolation is not None and stdio)
        limits: list[str] = []
        if self.rlimits and self.prlimit is not None:
            limits = [self.prlimit, *self._prlimit_options(), "--"]
        if self.isolation is not None:
            back: list[str] = []
            if stdio:
                back, limits = self._stdio_prelude(limits)
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

    def _stdio_prelude(self, limits: list[str]) -> tuple[list[str], list[str]]:
        """The shell before an isolated stdio bot (it awaits the start line and puts the pipes
        back), and the prlimit prefix still needed: none where that shell sets the limits."""
        set_limits = self._ulimit_script() if limits and self.shell_limits else None
        if set_limits is not None:
            limits = []
        script = AWAIT_START + (set_limits or "") + PIPES_BACK
        return ["/bin/sh", "-c", script, "newmarket-stdio"], limits

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
            if name not in ULIMIT_FLAGS:
                return None
            flag, unit = ULIMIT_FLAGS[name]
            if soft % unit or hard % unit:
                return None
            commands += [f"ulimit -S -{flag} {soft // unit}", f"ulimit -H -{flag} {hard // unit}"]
        return " && ".join(commands) + " || exit 125; "


def _cgroup_prelude(cgroup_procs: Sequence[Path], *, aside: bool) -> list[str]:
    """The shell that joins the bot's cgroups (and sets an isolated bot's pipes aside)."""
    if not cgroup_procs and not aside:
        return []
    script = JOIN_CGROUPS + (PIPES_ASIDE if aside else "") + EXEC
    return [
        "/bin/sh",
        "-c",
        script,
        "newmarket-sandbox",
        *(str(path) for path in cgroup_procs),
        "--",
    ]


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
