"""League cost as the bots grow: CPU per match, bot processes started per match, peak memory.

    nice .venv/bin/python benchmarks/league_scaling.py                 # 8, 16, 32, 64 bots
    nice .venv/bin/python benchmarks/league_scaling.py --bots 8,64 --runs 2
    nice .venv/bin/python benchmarks/league_scaling.py --bot-processes 16

Each league is a duplicate round robin (balanced past 500 tables) of bundled
Python bots (``lowest``, ``longest``, ``boodle``, ``tracker`` in turn) at tables
of 4, matches of ``--hands`` hands (2: short matches, so the bots' start-ups
weigh as much as they can), played by the table pool behind ``newmarket
league`` (``referee.tables.local_pool.open_pool``: ``--jobs`` table workers and
their bots under the sandbox of ``NEWMARKET_SANDBOX``, default ``auto``; the
database left out, whose cost per match does not depend on the bots).  Each
league runs in a fresh child process, the sizes interleaved run by run.

Per league:

* CPU per match: user + system time of the child, its table workers and every
  bot process and sandbox they started, read from a cgroup the child moves
  into (``benchmarks/sandbox.py``'s ``cpu_meter``; root or a cgroup given with
  ``--cpu-from``), else n/a.  Hardly moved by other load, unlike wall time.
* bot processes started per match, and the most one table ran at once (the
  workers' own counts), against ``--bot-processes``, the bound per table.
* peak memory: the summed RSS of the table workers' bot process trees (bots
  and their sandboxes' processes), sampled every second; RSS counts shared
  pages once per process, so it overstates what the machine gives them.

The goal (issue 29): CPU per match at 64 bots within 1.5x of 8 bots; the
ratio is printed against the smallest league of the same run.  The load
average is printed before and after each league.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

# This directory holds engine.py and referee.py benchmarks, which would shadow the packages.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trio

from benchmarks.sandbox import cpu_meter
from engine.rules import Rules
from referee.league.league_file import parse_config
from referee.league.runner import round_robin_jobs
from referee.match.dealkey import DealKey
from referee.match.result import MatchResult
from referee.sandbox import ENV_SANDBOX
from referee.tables.job import TableJob
from referee.tables.local_pool import BOT_PROCESSES, TablePool

BOTS = ("lowest", "longest", "boodle", "tracker")
GOAL = 1.5


def league_toml(bots: int, hands: int) -> str:
    lines = ["[league]", "seed = 99", "table_size = 4", f"hand_limit = {hands}", "logs = false"]
    lines += ["[time_control]", "move_time = 10.0", "startup_time = 60.0"]
    for index in range(bots):
        name = BOTS[index % len(BOTS)]
        lines += ["[[bots]]", f'name = "{name}-{index}"', f'command = "{name}"']
    return "\n".join(lines) + "\n"


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/children") as handle:
            out.extend(int(child) for child in handle.read().split())
    return out


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _bots_rss_kib(root: int) -> int:
    """The summed RSS of every process under the table workers (children of ``root``)."""
    total = 0
    for worker in _children(root):
        try:
            stack = _children(worker)
        except OSError:
            continue
        while stack:
            pid = stack.pop()
            try:
                total += _rss_kib(pid)
                stack.extend(_children(pid))
            except OSError:
                continue  # it ended while we looked
    return total


class Sampler(threading.Thread):
    """The peak of ``_bots_rss_kib`` once a second, and the CPU it cost (taken off the league's)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = 0
        self.cpu = 0.0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(1.0):
            self.peak = max(self.peak, _bots_rss_kib(os.getpid()))
        self.cpu = time.thread_time()


def measure(
    bots: int, hands: int, jobs: int, bot_processes: int, cpu_from: Path | None
) -> dict[str, Any]:
    load_before = os.getloadavg()[0]
    with (
        tempfile.TemporaryDirectory(prefix="newmarket-scale-") as directory,
        cpu_meter(cpu_from) as cpu,
    ):
        path = Path(directory) / "scale.toml"
        path.write_text(league_toml(bots, hands))
        config = parse_config(path.read_text(), path)
        jobs_list = round_robin_jobs(config, 99, DealKey.public())
        done: list[str] = []

        def on_result(job: TableJob, result: MatchResult) -> None:
            done.append(job.key.match_id)

        warnings: list[str] = []

        def warn(text: str) -> None:
            warnings.append(text)
            print(f"warning: {text}", file=sys.stderr)

        async def main() -> tuple[int, int]:
            pool = TablePool(
                config.bots,
                config.time_control,
                jobs,
                on_result,
                None,
                warn,
                sandbox=os.environ.get(ENV_SANDBOX, ""),
                bot_processes=bot_processes,
            )
            try:
                await pool.play(jobs_list)
            finally:
                starts, most = pool.bot_starts, pool.most_bots
                await pool.aclose()
            return starts, most

        sampler = Sampler()
        sampler.start()
        before = 0.0 if cpu is None else cpu()
        started = time.perf_counter()
        starts, most = trio.run(main)
        elapsed = time.perf_counter() - started
        sampler.stop.set()
        sampler.join()
        used = None if cpu is None else cpu() - before - sampler.cpu
    assert len(done) == len(jobs_list), (len(done), len(jobs_list))
    # A bot that cannot start is played by the default policy, far cheaper than a bot.
    assert not warnings, f"the league warned: {warnings[0]}"
    rules: Rules = config.rules
    return {
        "bots": bots,
        "matches": len(done),
        "hands": rules.hand_limit,
        "seconds": elapsed,
        "cpu_per_match": None if used is None else used / len(done),
        "starts": starts,
        "most": most,
        "bots_rss_kib": sampler.peak,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", default="8,16,32,64", help="league sizes, comma-separated")
    parser.add_argument("--runs", type=int, default=1, help="leagues of each size")
    parser.add_argument("--hands", type=int, default=2, help="hands per match")
    parser.add_argument("--jobs", type=int, default=2, help="table workers")
    parser.add_argument("--bot-processes", type=int, default=BOT_PROCESSES, help="per table")
    parser.add_argument("--cpu-from", type=Path, help="the usage file of a cgroup of this run")
    parser.add_argument("--measure", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure is not None:
        figures = measure(args.measure, args.hands, args.jobs, args.bot_processes, args.cpu_from)
        print(json.dumps(figures))
        return
    sizes = [int(size) for size in args.bots.split(",")]
    print(
        f"sandbox {os.environ.get(ENV_SANDBOX) or 'auto'}, --jobs {args.jobs}, "
        f"--bot-processes {args.bot_processes}, {args.hands} hands a match, "
        f"{os.cpu_count()} cores"
    )
    print(
        f"{'bots':>5} {'matches':>8} {'s':>7} {'matches/s':>10} {'CPU ms/match':>13} "
        f"{'x first':>8} {'starts/match':>13} {'most/table':>11} {'bots RSS MiB':>13} "
        f"{'load':>11}"
    )
    cpus: dict[int, list[float]] = {size: [] for size in sizes}
    for run in range(args.runs):
        order = sizes if run % 2 == 0 else sizes[::-1]
        for size in order:
            argv = [sys.executable, __file__, "--measure", str(size), "--hands", str(args.hands)]
            argv += ["--jobs", str(args.jobs), "--bot-processes", str(args.bot_processes)]
            if args.cpu_from is not None:
                argv += ["--cpu-from", str(args.cpu_from)]
            child = subprocess.run(argv, capture_output=True, text=True, check=False)
            if child.returncode != 0:
                print(f"{size} bots: the league failed:\n{child.stderr}", file=sys.stderr)
                continue
            r = json.loads(child.stdout.strip().splitlines()[-1])
            cpu = r["cpu_per_match"]
            if cpu is not None:
                cpus[size].append(cpu)
            floor = cpus[min(sizes)][-1] if cpus[min(sizes)] else None
            ratio = "n/a" if cpu is None or floor is None else f"{cpu / floor:.2f}"
            print(
                f"{size:>5} {r['matches']:>8} {r['seconds']:>7.1f} "
                f"{r['matches'] / r['seconds']:>10.1f} "
                f"{'n/a' if cpu is None else f'{cpu * 1000:.1f}':>13} {ratio:>8} "
                f"{r['starts'] / r['matches']:>13.3f} {r['most']:>11} "
                f"{r['bots_rss_kib'] / 1024:>13.0f} "
                f"{r['load_before']:>5.1f}-{r['load_after']:<5.1f}",
                flush=True,
            )
    smallest, largest = cpus[min(sizes)], cpus[max(sizes)]
    if smallest and largest:
        pairs = zip(smallest, largest, strict=False)
        ratios = ", ".join(f"{big / small:.2f}" for small, big in pairs)
        print(
            f"CPU per match, {max(sizes)} bots / {min(sizes)} bots, run by run: {ratios} "
            f"(goal: within {GOAL}x)"
        )


if __name__ == "__main__":
    main()
