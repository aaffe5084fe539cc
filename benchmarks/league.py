"""League throughput: matches/s with --jobs 1 and --jobs 2, and the referee's memory per table.

    .venv/bin/python benchmarks/league.py            # the figures for the README
    .venv/bin/python benchmarks/league.py --quick    # a smaller league, for a smoke test

Each measurement runs in a fresh child process (``--measure JOBS``) so that
one run's memory and warm caches do not flatter the next.  The child plays a
round robin of bundled Python bots (every table of 4 of 6 bots, every seat
rotation: 60 matches; deterministic bots, so both runs play the same games)
through ``run_league``, the code behind ``newmarket league``, and reports:

* matches/s over the whole league, bot start-up included (paid once per bot
  per table worker, as in a real league);
* the cores it kept busy (CPU seconds of the league process, its workers and
  their bots, over the wall time), so that a run on a machine busy with other
  work can be told from a league that does not scale;
* the peak RSS of the league process, of its table workers (each table's
  referee is one worker process) and of the bots they run.

Memory per table is one table worker's RSS and its bots' RSS (with ``--jobs
2``, halved); the league process itself is the same whatever ``--jobs``.

    .venv/bin/python benchmarks/league.py --cluster --bots 8 --rounds 3  # Dask vs --jobs 2

``--cluster`` plays the same league with ``--jobs 2`` and on a Dask
``LocalCluster`` of 2 worker processes (``--cluster local:2``), taking turns
``--rounds`` times, and reports the matches/s of both: the cluster's between
its set-up and its tear-down (the pool's ``start`` and ``aclose``; bot
start-ups are inside, as they are in ``--jobs 2``'s), and with them, and the
round trip of an empty task through the same scheduler (submit, run on a
worker, result back), which a task of matches pays once.

    sudo .venv/bin/python benchmarks/league.py --timeline  # where each table's time goes

``--timeline`` plays ``--measure 1`` and ``--measure 2`` under ``perf record``
of the scheduler's events (root, or a perf_event_paranoid that allows it) and
prints, per table, the time one of its processes was on a core, the time one
was runnable while other work had the cores, and the time none was runnable
(blocked: bot start-ups, the league process, timers), with the CPU of its
worker, its bots and their sandboxes, and how many of each it started.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# This directory holds engine.py and referee.py benchmarks, which would shadow the packages.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trio

from referee.league.league_db import LeagueStore
from referee.league.league_file import LeagueConfig, parse_config
from referee.league.runner import SilentReporter, run_league
from referee.sandbox import ENV_SANDBOX

# The sandbox setting the leagues measured here play under, as ``newmarket league``
# hands its own to the tables: NEWMARKET_SANDBOX=none measures the referee alone.
SANDBOX = os.environ.get(ENV_SANDBOX, "")

BOTS = ("lowest", "longest", "boodle", "tracker", "lowest", "longest")
TARGET_SPEEDUP = 1.7


def league_toml(bots: int, hand_limit: int) -> str:
    lines = [
        "[league]",
        'name = "benchmark"',
        "seed = 99",
        "table_size = 4",
        f"hand_limit = {hand_limit}",
        "logs = false",
        "[time_control]",
        "move_time = 10.0",
    ]
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


def _rss_tree_kib(root: int) -> tuple[int, int]:
    """(table workers, their bots): the summed RSS of this process's children and the rest.

    Walks ``/proc/PID/task/TID/children`` rather than every process, so that
    sampling costs next to nothing.
    """
    workers = bots = 0
    for worker in _children(root):
        try:
            workers += _rss_kib(worker)
            stack = _children(worker)
            while stack:
                pid = stack.pop()
                bots += _rss_kib(pid)
                stack.extend(_children(pid))
        except OSError:
            continue  # it ended while we looked
    return workers, bots


def _cpu_seconds(pid: int) -> float:
    """A process's CPU time so far (user + system), from ``/proc/PID/stat``."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _tree_cpu(root: int, seen: dict[int, float]) -> None:
    """Note the CPU time of every process under ``root`` (the league's workers and bots).

    Kept per pid, highest seen: a process's last sample before it ends is what it
    used (bots live for the whole league, one per bot per table worker).
    """
    stack = _children(root)
    while stack:
        pid = stack.pop()
        try:
            seen[pid] = max(seen.get(pid, 0.0), _cpu_seconds(pid))
            stack.extend(_children(pid))
        except OSError:
            continue  # it ended while we looked


def _machine_busy_seconds() -> float:
    """CPU seconds all cores of this machine have spent not idle since boot (``/proc/stat``).

    Machine-wide on purpose: the bots run in their own sessions and cgroups and are
    not always reaped in a way ``RUSAGE_CHILDREN`` would count, so this process's own
    accounting misses most of a league's CPU.  Other load shows here too, which is
    why ``load_before`` is printed next to it.
    """
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    busy = user + nice + system + irq + softirq + steal
    return busy / os.sysconf("SC_CLK_TCK")


def bench_league(directory: Path, bots: int, hand_limit: int) -> tuple[LeagueConfig, LeagueStore]:
    """The benchmark's league file and its fresh results database, in ``directory``."""
    path = directory / "bench.toml"
    path.write_text(league_toml(bots, hand_limit))
    config = parse_config(path.read_text(), path)
    return config, LeagueStore.for_league(directory / "bench.db", config)


def measure(jobs: int, bots: int, hand_limit: int) -> dict[str, float]:
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="newmarket-bench-") as directory:
        config, store = bench_league(Path(directory), bots, hand_limit)
        workers_rss = bots_rss = 0
        tree_cpu: dict[int, float] = {}

        async def sample() -> None:
            nonlocal workers_rss, bots_rss
            while True:
                await trio.sleep(0.5)
                workers, bots = _rss_tree_kib(os.getpid())
                workers_rss, bots_rss = max(workers_rss, workers), max(bots_rss, bots)
                _tree_cpu(os.getpid(), tree_cpu)

        async def main() -> float:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(sample)
                started = time.perf_counter()
                run = await run_league(
                    config,
                    store,
                    jobs=jobs,
                    reporter=SilentReporter(),
                    handle_signals=False,
                    sandbox=SANDBOX,
                )
                elapsed = time.perf_counter() - started
                nursery.cancel_scope.cancel()
            assert run.done == run.total, run
            return elapsed

        busy_before = _machine_busy_seconds()
        own_before = time.process_time()
        elapsed = trio.run(main)
        own = time.process_time() - own_before
        busy = _machine_busy_seconds() - busy_before
        matches = store.count()
        store.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {
        "jobs": jobs,
        "matches": matches,
        "seconds": elapsed,
        "matches_per_s": matches / elapsed,
        "cores_busy": busy / elapsed,
        # The league's own CPU (this process, its workers and their bots, sampled
        # twice a second): what a match costs, whatever else the machine runs.
        "cpu_per_match": (own + sum(tree_cpu.values())) / max(matches, 1),
        "reaped_cpu_per_match": _reaped_cpu() / max(matches, 1),
        "load_before": load_before,
        "league_peak_rss_kib": peak,
        "workers_rss_kib": workers_rss,
        "bots_rss_kib": bots_rss,
    }


def _reaped_cpu() -> float:
    """CPU seconds of this process and every descendant it (or they) waited for: after a
    league, its workers (Dask's too), their table workers and their bots."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


def measure_cluster(workers: int, bots: int, hand_limit: int) -> dict[str, float]:
    """A league on ``--cluster local:N``: its whole time, its time between the cluster's
    set-up and its tear-down (the pool's ``start`` and ``aclose``), an empty task's trip."""
    from referee.tables.dask_pool import ClusterPool

    load_before = os.getloadavg()[0]
    marks: dict[str, float] = {}
    start, aclose = ClusterPool.start, ClusterPool.aclose

    async def timed_start(pool: ClusterPool) -> None:
        await start(pool)
        client: Any = pool.client
        trips = 50

        def empty_tasks() -> float:
            begun = time.perf_counter()
            for _ in range(trips):
                client.submit(int, 0, pure=False).result()
            return (time.perf_counter() - begun) / trips

        marks["round_trip"] = await trio.to_thread.run_sync(empty_tasks)
        marks["started"] = time.perf_counter()

    async def timed_aclose(pool: ClusterPool) -> None:
        marks["closing"] = time.perf_counter()
        await aclose(pool)

    ClusterPool.start = timed_start  # type: ignore[method-assign, assignment]
    ClusterPool.aclose = timed_aclose  # type: ignore[method-assign, assignment]
    with tempfile.TemporaryDirectory(prefix="newmarket-bench-") as directory:
        config, store = bench_league(Path(directory), bots, hand_limit)
        started = time.perf_counter()
        run = trio.run(
            lambda: run_league(
                config,
                store,
                jobs=1,
                reporter=SilentReporter(),
                handle_signals=False,
                cluster=f"local:{workers}",
                sandbox=SANDBOX,
            )
        )
        elapsed = time.perf_counter() - started - marks["round_trip"] * 50
        assert run.done == run.total, run
        matches = store.count()
        store.close()
    played = marks["closing"] - marks["started"]
    return {
        "reaped_cpu_per_match": _reaped_cpu() / max(matches, 1),
        "matches": matches,
        "seconds": elapsed,
        "matches_per_s": matches / elapsed,
        "played_s": played,
        "played_per_s": matches / played,
        "set_up_s": elapsed - played,
        "round_trip_s": marks["round_trip"],
        "load_before": load_before,
    }


def cluster_main(bots: int, hands: int, rounds: int) -> None:
    """--jobs 2 against --cluster local:2, each in a fresh child process, taking turns."""
    common = ["--bots", str(bots), "--hands", str(hands)]
    ratios, cpus = [], []
    for number in range(1, rounds + 1):
        local = subprocess.run(
            [sys.executable, __file__, "--measure", "2", *common],
            capture_output=True,
            text=True,
            check=True,
        )
        dask = subprocess.run(
            [sys.executable, __file__, "--measure-cluster", "2", *common],
            stdout=subprocess.PIPE,  # its stderr stays visible: a failure says why
            text=True,
            check=True,
        )
        jobs = json.loads(local.stdout.strip().splitlines()[-1])
        cluster = json.loads(dask.stdout.strip().splitlines()[-1])
        matches = cluster["matches"]
        ratio = cluster["played_per_s"] / jobs["matches_per_s"]
        ratios.append(ratio)
        print(
            f"round {number}: league of {matches} matches, {bots} bots at tables of 4, "
            f"hand limit {hands}"
        )
        print(
            f"  --jobs 2:          {jobs['matches_per_s']:.2f} matches/s ({jobs['seconds']:.1f} s; "
            f"load average {jobs['load_before']:.2f})"
        )
        print(
            f"  --cluster local:2: {cluster['played_per_s']:.2f} matches/s between set-up and "
            f"tear-down ({cluster['played_s']:.1f} s), {cluster['matches_per_s']:.2f} with them "
            f"({cluster['seconds']:.1f} s, {cluster['set_up_s']:.1f} s starting and ending the "
            f"cluster; load average {cluster['load_before']:.2f}); an empty task's round trip "
            f"{cluster['round_trip_s'] * 1000:.1f} ms"
        )
        cpu = cluster["reaped_cpu_per_match"] / jobs["reaped_cpu_per_match"]
        cpus.append(cpu)
        print(
            f"  cluster / --jobs 2: {ratio:.2f}x (set-up and tear-down taken out); CPU per "
            f"match of the whole tree {cluster['reaped_cpu_per_match'] * 1000:.0f} ms against "
            f"{jobs['reaped_cpu_per_match'] * 1000:.0f} ms: {cpu:.2f}x"
        )
    ratios.sort()
    cpus.sort()
    print(
        f"CPU per match, cluster / --jobs 2: median {cpus[len(cpus) // 2]:.2f}x, "
        f"{cpus[0]:.2f}x to {cpus[-1]:.2f}x (set-up included)"
    )
    print(
        f"cluster / --jobs 2 over {rounds} rounds: median {ratios[len(ratios) // 2]:.2f}x, "
        f"{ratios[0]:.2f}x to {ratios[-1]:.2f}x; load average now {os.getloadavg()[0]:.2f}"
    )


# ---------------------------------------------------------------- --timeline (perf sched)

_SCHED_EVENTS = (
    "sched:sched_switch",
    "sched:sched_wakeup",
    "sched:sched_wakeup_new",
    "sched:sched_process_fork",
    "sched:sched_process_exit",
)
_PERF_LINE = re.compile(r"^\s*(.+?)\s+(-?\d+)/(-?\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s+(.*)$")


@dataclasses.dataclass
class _Table:
    """One table worker and its descendants, as a timeline of states."""

    running: set[int] = dataclasses.field(default_factory=set)
    runnable: set[int] = dataclasses.field(default_factory=set)
    since: float | None = None
    first: float | None = None
    seconds: dict[str, float] = dataclasses.field(
        default_factory=lambda: {"running": 0.0, "waiting for a core": 0.0, "blocked": 0.0}
    )
    cpu: dict[str, float] = dataclasses.field(default_factory=dict)  # by process kind
    started: dict[str, int] = dataclasses.field(default_factory=dict)

    @property
    def state(self) -> str:
        if self.running:
            return "running"
        return "waiting for a core" if self.runnable else "blocked"

    def advance(self, now: float) -> None:
        if self.since is not None:
            self.seconds[self.state] += now - self.since
        self.since = now
        if self.first is None:
            self.first = now


def timeline(perf_script: list[str], root: int) -> dict[int, _Table]:
    """Each table's time, from ``perf script`` lines of sched events; ``root``: the league.

    Per table (a worker process of ``root`` and everything it started): the
    time with one of its tasks on a core, with one runnable but none on a
    core (other work had the cores), and with none runnable (blocked: waiting
    for a bot's start-up, the league process, a timer); and the CPU of the
    worker, its bots and their sandboxes, with how many of each it started.
    """
    events = [m.groups() for line in perf_script if (m := _PERF_LINE.match(line))]
    tgid: dict[int, int] = {}
    for _comm, pid, tid, *_rest in events:
        tgid.setdefault(int(tid), int(pid))
    parent: dict[int, int] = {}
    for _comm, pid, _tid, _cpu, _t, name, rest in events:
        if name == "sched:sched_process_fork":
            child = int(dict(re.findall(r"(\w+)=(\S+)", rest))["child_pid"])
            if tgid.get(child, child) != int(pid):  # a process, not a thread of its parent
                parent[child] = int(pid)
    owner: dict[int, int | None] = {}

    def table_of(tid: int) -> int | None:
        if tid not in owner:
            process = tgid.get(tid, tid)
            while process in parent and parent[process] != root:
                process = parent[process]
            owner[tid] = process if parent.get(process) == root else None
        return owner[tid]

    tables: dict[int, _Table] = {}
    comms: dict[int, set[str]] = {}
    on_core: dict[int, float] = {}
    cpu_of: dict[int, float] = {}
    for _comm, _pid, _tid, _cpu, t, name, rest in events:
        now = float(t)
        fields = dict(re.findall(r"(\w+)=(\S+)", rest))
        if name == "sched:sched_switch":
            prev, after = int(fields["prev_pid"]), int(fields["next_pid"])
            if prev in on_core:
                cpu_of[tgid.get(prev, prev)] = cpu_of.get(tgid.get(prev, prev), 0.0) + (
                    now - on_core.pop(prev)
                )
            on_core[after] = now
            comms.setdefault(tgid.get(after, after), set()).add(fields["next_comm"])
            for tid, going in ((prev, True), (after, False)):
                number = table_of(tid)
                if number is None:
                    continue
                table = tables.setdefault(number, _Table())
                table.advance(now)
                if going:
                    table.running.discard(tid)
                    if fields["prev_state"].startswith("R"):
                        table.runnable.add(tid)  # preempted
                    else:
                        table.runnable.discard(tid)
                else:
                    table.runnable.discard(tid)
                    table.running.add(tid)
        elif name in ("sched:sched_wakeup", "sched:sched_wakeup_new"):
            tid = int(fields["pid"])
            number = table_of(tid)
            if number is not None:
                table = tables.setdefault(number, _Table())
                table.advance(now)
                if tid not in table.running:
                    table.runnable.add(tid)
        elif name == "sched:sched_process_exit":
            tid = int(fields["pid"])
            number = table_of(tid)
            if number is not None:
                table = tables.setdefault(number, _Table())
                table.advance(now)
                table.running.discard(tid)
                table.runnable.discard(tid)
    for process, number in ((p, table_of(p)) for p in set(parent) | set(tables)):
        if number is None:
            continue
        names = comms.get(process, set())
        kind = (
            "worker"
            if process == number
            else "bots"
            if any("python" in n for n in names)
            else "sandbox"
            if "bwrap" in names
            else "other"
        )
        table = tables.setdefault(number, _Table())
        table.cpu[kind] = table.cpu.get(kind, 0.0) + cpu_of.get(process, 0.0)
        table.started[kind] = table.started.get(kind, 0) + 1
    return {n: t for n, t in tables.items() if t.first is not None and (t.since or 0) - t.first > 1}


def timeline_main(bots: int, hands: int) -> None:
    """``--measure 1`` and ``--measure 2`` under ``perf record`` of the scheduler's events."""
    for jobs in (1, 2):
        with tempfile.TemporaryDirectory(prefix="newmarket-sched-") as directory:
            data = Path(directory) / "perf.data"
            pid_file = Path(directory) / "pid"
            child = f"echo $$ > {pid_file}; exec {sys.executable} {__file__} --measure {jobs}"
            events = [arg for event in _SCHED_EVENTS for arg in ("-e", event)]
            command = ["perf", "record", "-q", "-a", *events, "-o", str(data), "--"]
            command += ["sh", "-c", f"{child} --bots {bots} --hands {hands}"]
            run = subprocess.run(command, capture_output=True, text=True, check=True)
            measured = json.loads(run.stdout.strip().splitlines()[-1])
            script = subprocess.run(
                ["perf", "script", "-i", str(data), "-F", "comm,pid,tid,cpu,time,event,trace"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.splitlines()
            tables = timeline(script, int(pid_file.read_text()))
        print(
            f"--jobs {jobs}: {measured['matches_per_s']:.2f} matches/s "
            f"({measured['seconds']:.1f} s; load average {measured['load_before']:.2f} before)"
        )
        for number, table in sorted(tables.items()):
            wall = sum(table.seconds.values())
            shares = ", ".join(f"{k} {v:.2f} s ({v / wall:.0%})" for k, v in table.seconds.items())
            cpu = ", ".join(
                f"{kind} {seconds:.2f} s ({table.started.get(kind, 0)} processes)"
                if kind != "worker"
                else f"worker {seconds:.2f} s"
                for kind, seconds in sorted(table.cpu.items())
            )
            print(f"  table {number}: {shares}")
            print(f"    CPU: {cpu}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller league")
    parser.add_argument("--measure", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--measure-cluster", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--cluster", action="store_true", help="--cluster local:2 vs --jobs 2")
    parser.add_argument(
        "--timeline", action="store_true", help="where each table's time goes (perf sched)"
    )
    parser.add_argument("--bots", type=int, default=6)
    parser.add_argument("--hands", type=int, default=40, help="hand limit per match")
    parser.add_argument("--rounds", type=int, default=1, help="--cluster: rounds, taking turns")
    args = parser.parse_args()
    bots, hands = (5, 10) if args.quick else (args.bots, args.hands)
    if args.measure is not None:
        print(json.dumps(measure(args.measure, bots, hands)))
        return
    if args.measure_cluster is not None:
        print(json.dumps(measure_cluster(args.measure_cluster, bots, hands)))
        return
    if args.cluster:
        cluster_main(bots, hands, args.rounds)
        return
    if args.timeline:
        timeline_main(bots, hands)
        return
    results = {}
    for jobs in (1, 2):
        argv = [sys.executable, __file__, "--measure", str(jobs), "--bots", str(bots)]
        argv += ["--hands", str(hands)]
        child = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            check=True,
        )
        results[jobs] = json.loads(child.stdout.strip().splitlines()[-1])
    one, two = results[1], results[2]
    speedup = two["matches_per_s"] / one["matches_per_s"]
    per_table_referee = two["workers_rss_kib"] / 2 / 1024
    per_table_bots = two["bots_rss_kib"] / 2 / 1024
    print(f"league: {one['matches']} matches, {bots} bots at tables of 4, hand limit {hands}")
    for jobs in (1, 2):
        r = results[jobs]
        print(
            f"--jobs {jobs}: {r['matches_per_s']:.2f} matches/s ({r['seconds']:.1f} s, "
            f"{r['cores_busy']:.2f} of the machine's {os.cpu_count()} cores busy; "
            f"load average {r['load_before']:.2f} before; "
            f"{r['cpu_per_match'] * 1000:.0f} ms of the league's CPU per match); "
            f"RSS: league process {r['league_peak_rss_kib'] / 1024:.1f} MiB, "
            f"table workers {r['workers_rss_kib'] / 1024:.1f} MiB, "
            f"bots {r['bots_rss_kib'] / 1024:.1f} MiB"
        )
    verdict = "meets" if speedup >= TARGET_SPEEDUP else "misses"
    cores = os.cpu_count() or 1
    if two["cores_busy"] > 0.9 * cores:
        print(
            f"note: --jobs 2 kept {two['cores_busy']:.2f} of {cores} cores busy, and one table "
            f"used {one['cores_busy']:.2f}: the speed-up is bounded by CPU here, at most "
            f"{cores / one['cores_busy']:.2f}x"
        )
    print(f"speed-up with 2 jobs: {speedup:.2f}x ({verdict} the {TARGET_SPEEDUP}x target)")
    # One table is a chain of round trips, so it keeps at most so many cores busy; two
    # tables can do at most cores / (that) times its work.
    table_cores = one["cpu_per_match"] * one["matches_per_s"]
    print(
        f"one table keeps {table_cores:.2f} cores busy with its own work (CPU per match x "
        f"matches/s with --jobs 1): two tables on {cores} cores can give at most "
        f"{min(2.0, cores / max(table_cores, 1e-9)):.2f}x"
    )
    # Where the second core went: the league's own work (its CPU per match times its
    # rate), other work on the machine (busy beyond the league's), and idle time.  With
    # --jobs 2 below the target, this says whether the cores were short (other work) or
    # the two tables left them idle (waiting on wake-ups and bot start-ups).
    for jobs in (1, 2):
        r = results[jobs]
        league_cores = r["cpu_per_match"] * r["matches_per_s"]
        other = max(0.0, r["cores_busy"] - league_cores)
        idle = max(0.0, cores - r["cores_busy"])
        print(
            f"--jobs {jobs}: the league's own work kept {league_cores:.2f} cores busy, "
            f"other work {other:.2f}, idle {idle:.2f} (of {cores})"
        )
    two_tables = two["cpu_per_match"] * two["matches_per_s"]
    free = cores - max(0.0, two["cores_busy"] - two_tables)
    print(
        f"with the cores other work left free ({free:.2f}), two tables could give at most "
        f"{min(2.0, free / max(table_cores, 1e-9)):.2f}x; they used {two_tables:.2f} of them"
    )
    print(
        f"memory per table: its referee (a table worker) {per_table_referee:.1f} MiB, "
        f"its bot processes {per_table_bots:.1f} MiB"
    )


if __name__ == "__main__":
    main()
