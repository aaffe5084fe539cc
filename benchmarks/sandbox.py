"""A bot's start-up under each sandbox level, as a ratio to its unsandboxed start in the same run.

    .venv/bin/python benchmarks/sandbox.py                # 20 starts per level and bot
    .venv/bin/python benchmarks/sandbox.py --runs 5 --bots c,random

Each start is a real ``open_bot`` (start the process, hello, ready) and its
end (shutdown, the tree ended, cgroups removed).  The levels are those of
``--sandbox``, plus ``auto`` without the bubblewrap isolation, so the
isolation's own cost shows next to the cgroups' and rlimits'.  ``auto`` is a
start whose sandbox is made for it (each start gets an environment of its
own, so none was made ahead); ``auto, made ready`` the same command started
again, as a league does every rotation, whose sandbox the referee made ready
ahead of it (``referee.transport.process``).  That making is waited for after each such
start, outside any measurement.  The making overlaps the start it follows
and its end, so their CPU columns include part of it; below the table, the
whole of it per start, next to a start from scratch.  The bots are
one per runtime: the bundled C bot (a compiled binary: the sandbox's cost
is most of its start), the Python bot ``random`` (an interpreter and the SDK
to import), the node bot ``js`` and the ``bash`` bot, those this machine can
run.  The runs of all levels are interleaved, each round in a new order, so a
machine that gets busier or quieter during the run, and whatever a start
leaves the kernel to finish after it, falls on each level alike.

Two figures per start, both medians, each also as a ratio to level ``none``:

* wall: from the start of the process to its ``ready``, what the start-up
  limit is measured against.  On a loaded machine this is mostly waiting for
  a core, so it moves with the load (printed before and after).
* CPU: user + system time of everything the start ran (the referee's own
  work for it, every process of the sandbox's chain, the bot) up to its
  ``ready``; and, in the last column, what its end cost (shutdown, the tree
  ended, cgroups removed).  It hardly moves with the load.  It is read from a
  cgroup of the benchmark's own where this process may make one (root), or
  from the one ``--cpu-from`` names; otherwise the columns say n/a.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

# This directory holds engine.py and referee.py benchmarks, which would shadow the packages.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trio

from referee.bots import BotSpec, resolve_bot
from referee.sandbox import Sandbox, detect, resolve
from referee.transport.process import end_ready_sandboxes, wait_for_ready_sandboxes
from referee.transport.session import open_bot
from referee.transport.timecontrol import TimeControl

CONTROL = TimeControl(startup_time=60.0)
BOTS = ("c", "random", "js", "bash")
READY = "auto, made ready"


@dataclasses.dataclass
class Start:
    wall: float  # seconds from the start to ready
    cpu: float | None  # CPU seconds up to ready, where they can be read
    end_cpu: float | None  # CPU seconds of its end
    ahead: float | None = None  # made ready: CPU seconds its next sandbox's making took after


def levels() -> dict[str, Sandbox]:
    auto = resolve("auto")
    out: dict[str, Sandbox] = {
        "none": resolve("none"),
        "basic": resolve("basic"),
        "auto without isolation": dataclasses.replace(auto, isolation=None),
        "auto": auto,
    }
    if auto.isolation is None:
        del out["auto without isolation"]
    return out


@contextlib.contextmanager
def cpu_meter(given: Path | None) -> Iterator[Callable[[], float] | None]:
    """A reader of the CPU seconds of this process and everything it starts, reaped or not.

    ``given`` is the usage file (``cpuacct.usage`` or ``cpu.stat``) of a cgroup
    this process runs alone in, made by whoever started it (the way to measure a
    non-root run).  Otherwise this process moves into a cgroup of its own
    (cgroup v2, else v1 cpuacct) before the sandbox is detected, so the bots'
    cgroups are made inside it.  None where neither can be had: ``getrusage``
    is no substitute, since a bot killed with its pid namespace is reaped by
    the kernel for an init that is gone, and its time never reaches us.
    """
    if given is not None:
        yield functools.partial(_usage, given)
        return
    own: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        own["v2" if number == "0" and not controllers else controllers] = path
    mounts = [line.split() for line in Path("/proc/self/mounts").read_text().splitlines()]
    places = [
        (Path(m[1]) / own["v2"].lstrip("/"), "cpu.stat")
        for m in mounts
        if m[2] == "cgroup2" and "v2" in own
    ]
    places += [
        (Path(m[1]) / own[c].lstrip("/"), "cpuacct.usage")
        for m in mounts
        for c in own
        if m[2] == "cgroup" and "cpuacct" in m[3].split(",") and "cpuacct" in c.split(",")
    ]
    for parent, counter in places:
        mine = parent / f"newmarket-bench-{os.getpid()}"
        try:
            mine.mkdir()
            (mine / "cgroup.procs").write_text(str(os.getpid()))
        except OSError:
            with contextlib.suppress(OSError):
                mine.rmdir()
            continue
        try:
            yield functools.partial(_usage, mine / counter)
        finally:
            with contextlib.suppress(OSError):
                (parent / "cgroup.procs").write_text(str(os.getpid()))
                mine.rmdir()
        return
    yield None


def _usage(path: Path) -> float:
    text = path.read_text()
    if path.name == "cpuacct.usage":
        return int(text) / 1e9
    fields = dict(line.split() for line in text.splitlines())
    return int(fields["usage_usec"]) / 1e6


async def start_once(spec: BotSpec, sandbox: Sandbox, cpu: Callable[[], float] | None) -> Start:
    used = 0.0 if cpu is None else cpu()
    started = time.perf_counter()
    async with open_bot(spec, CONTROL, sandbox=sandbox) as session:
        ready = time.perf_counter() - started
        at_ready = 0.0 if cpu is None else cpu()
        if not session.handshaken:
            raise SystemExit(f"{spec.name} did not start: {session.death}")
    if cpu is None:
        return Start(ready, None, None)
    return Start(ready, at_ready - used, cpu() - at_ready)


async def made_ahead(cpu: Callable[[], float] | None) -> float | None:
    """Wait until the next sandbox made ahead is ready; the CPU that took from now on."""
    used = 0.0 if cpu is None else cpu()
    if not await trio.to_thread.run_sync(wait_for_ready_sandboxes, 120.0):
        raise SystemExit("a sandbox made ahead was not ready within two minutes")
    return None if cpu is None else cpu() - used


async def measure(
    bots: list[str], runs: int, cpu: Callable[[], float] | None
) -> dict[tuple[str, str], list[Start]]:
    """Each start by (bot, level)."""
    sandboxes = levels()
    times: dict[tuple[str, str], list[Start]] = {}
    order = random.Random(1)
    fresh = 0
    for bot in bots:
        spec = resolve_bot(bot)
        await start_once(spec, sandboxes["none"], cpu)  # warm: the C bot's build, the page cache
        names = list(sandboxes)
        if "auto without isolation" in sandboxes:  # (isolation, so sandboxes are made ahead)
            names.append(READY)
            for _ in range(2):  # the second start of a command makes its third's sandbox
                await start_once(spec, sandboxes["auto"], cpu)
            await made_ahead(cpu)
        for _ in range(runs):
            order.shuffle(names)
            for level in names:
                if level == READY:
                    start = await start_once(spec, sandboxes["auto"], cpu)
                    start.ahead = await made_ahead(cpu)
                elif level == "auto":
                    fresh += 1
                    env = {"NEWMARKET_BENCH_START": str(fresh)}
                    start = await start_once(
                        dataclasses.replace(spec, env=env), sandboxes[level], cpu
                    )
                else:
                    start = await start_once(spec, sandboxes[level], cpu)
                times.setdefault((bot, level), []).append(start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--bots", default=",".join(BOTS), help="comma-separated bundled bots")
    parser.add_argument(
        "--cpu-from",
        type=Path,
        help="the usage file of a cgroup this run is alone in (cpuacct.usage or cpu.stat)",
    )
    args = parser.parse_args()
    bots = [name for name in args.bots.split(",") if not resolve_bot(name).unavailable]
    with cpu_meter(args.cpu_from) as cpu:
        support = detect()
        print(f"root: {support.root}; isolation: {support.isolation_why or 'available'}")
        print(resolve("auto").describe())
        print(f"load average before: {os.getloadavg()}")
        times = trio.run(measure, bots, args.runs, cpu)
        end_ready_sandboxes()  # (their cgroups are inside this run's, which goes next)
        print(f"load average after:  {os.getloadavg()}")
    print(f"{'bot':7} {'level':23} {'wall ms':>8} {'min':>6} {'max':>6} {'x none':>7}", end="")
    print(f" {'CPU ms':>7} {'x none':>7} {'end CPU':>8}")
    for bot in bots:
        floor = times[(bot, "none")]
        for level in [*levels(), READY]:
            starts = times.get((bot, level))
            if starts is None:
                continue
            wall = statistics.median(start.wall for start in starts)
            ratio = wall / statistics.median(start.wall for start in floor)
            fastest = min(start.wall for start in starts) * 1000
            slowest = max(start.wall for start in starts) * 1000
            line = f"{bot:7} {level:23} {wall * 1000:8.1f} {fastest:6.1f} {slowest:6.1f}"
            print(f"{line} {ratio:7.2f}{_cpu_columns(starts, floor)}")
    _print_ahead(times)


def _print_ahead(times: dict[tuple[str, str], list[Start]]) -> None:
    """For each bot: what a start made ready and its end cost with the next one's making (which
    overlaps them), next to a start from scratch and its end."""
    for (bot, level), starts in times.items():
        if level != READY:
            continue
        whole = [
            start.cpu + start.end_cpu + start.ahead
            for start in starts
            if start.cpu is not None and start.end_cpu is not None and start.ahead is not None
        ]
        fresh = [
            start.cpu + start.end_cpu
            for start in times[(bot, "auto")]
            if start.cpu is not None and start.end_cpu is not None
        ]
        if whole and fresh:
            print(
                f"{bot}: CPU of a start made ready, its end and the next one's making"
                f" {statistics.median(whole) * 1000:.1f} ms; of a start from scratch and its"
                f" end {statistics.median(fresh) * 1000:.1f} ms (medians)"
            )


def _cpu_columns(starts: list[Start], floor: list[Start]) -> str:
    used = [start.cpu for start in starts if start.cpu is not None]
    base = [start.cpu for start in floor if start.cpu is not None]
    ends = [start.end_cpu for start in starts if start.end_cpu is not None]
    if not used or not base or not ends:
        return f" {'n/a':>7} {'n/a':>7} {'n/a':>8}"
    median = statistics.median(used)
    end = statistics.median(ends) * 1000
    return f" {median * 1000:7.1f} {median / statistics.median(base):7.2f} {end:8.1f}"


if __name__ == "__main__":
    main()
