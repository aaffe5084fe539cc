"""One bot's cgroups (memory, pids, CPU accounting, ``cgroup.kill``), and the sweep of stale ones.

A cgroup holds every process a bot ever starts, even one that left the
process group with ``setsid()``, so ending a bot and counting its CPU time
both go through it.  Each bot gets a ``newmarket-<pid>-<n>`` cgroup beneath
the referee's own; a referee killed with SIGKILL leaves its cgroups behind,
and the next referee on the machine removes them (``sweep_stale``).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.sandbox.protections import Sandbox


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
