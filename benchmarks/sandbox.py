"""A bot's start-up time under each sandbox level: from the start of its process to its ``ready``.

    .venv/bin/python benchmarks/sandbox.py           # median of 20 starts per level and bot
    .venv/bin/python benchmarks/sandbox.py --runs 5  # quicker

Each start is a real ``open_bot`` (start the process, hello, ready) and its
end (shutdown, the tree ended, cgroups removed).  The levels are those of
``--sandbox``, plus ``auto`` without the bubblewrap isolation, so the
isolation's own cost shows next to the cgroups' and rlimits'.  Two bots: the
bundled C bot (a compiled binary: the sandbox's cost is most of its start)
and the bundled Python bot ``random`` (an interpreter and the SDK to import).
The runs of all levels are interleaved, so a machine that gets busier or
quieter during the run affects each level alike; medians, with the load.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path

# This directory holds engine.py and referee.py benchmarks, which would shadow the packages.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trio

from referee.bots import resolve_bot
from referee.sandbox import Sandbox, detect, resolve
from referee.transport.session import open_bot
from referee.transport.timecontrol import TimeControl

CONTROL = TimeControl(startup_time=60.0)


def levels() -> dict[str, Sandbox | None]:
    auto = resolve("auto")
    out: dict[str, Sandbox | None] = {
        "none": resolve("none"),
        "basic": resolve("basic"),
        "auto without isolation": dataclasses.replace(auto, isolation=None),
        "auto": auto,
    }
    if auto.isolation is None:
        del out["auto without isolation"]
    return out


async def start_once(name: str, sandbox: Sandbox | None) -> float:
    spec = resolve_bot(name)
    started = time.perf_counter()
    async with open_bot(spec, CONTROL, sandbox=sandbox) as session:
        ready = time.perf_counter() - started
        if not session.handshaken:
            raise SystemExit(f"{name} did not start: {session.death}")
    return ready


async def measure(runs: int) -> dict[tuple[str, str], list[float]]:
    sandboxes = levels()
    times: dict[tuple[str, str], list[float]] = {}
    for bot in ("c", "random"):
        await start_once(bot, None)  # warm: the C bot's build, the page cache
        for _ in range(runs):
            for level, sandbox in sandboxes.items():
                times.setdefault((bot, level), []).append(await start_once(bot, sandbox))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    support = detect()
    print(f"root: {support.root}; isolation: {support.isolation_why or 'available'}")
    print(f"load average before: {os.getloadavg()}")
    times = trio.run(measure, args.runs)
    print(f"load average after:  {os.getloadavg()}")
    print(f"{'bot':8} {'level':24} {'median ms':>10} {'min ms':>8} {'max ms':>8}")
    floors = {bot: statistics.median(times[(bot, "none")]) for bot in ("c", "random")}
    for (bot, level), values in times.items():
        median = statistics.median(values) * 1000
        ratio = statistics.median(values) / floors[bot]
        print(
            f"{bot:8} {level:24} {median:10.1f} {min(values) * 1000:8.1f} "
            f"{max(values) * 1000:8.1f}   x{ratio:.2f} of none"
        )


if __name__ == "__main__":
    main()
