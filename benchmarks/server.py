"""The competition server's page and API latency while its tables play (issue 17: p95 < 100 ms).

    .venv/bin/python benchmarks/server.py             # 30 s per phase, 4 clients
    .venv/bin/python benchmarks/server.py --quick     # 8 s per phase
    .venv/bin/python benchmarks/server.py --remote    # and a third phase with a remote bot

A real ``newmarket serve`` (2 tables, house bots only, short matches so
results land several times a second, i.e. the leaderboard is recomputed
often) is loaded from the loopback by a bounded number of clients, each in
a closed loop (send, wait for the answer, send the next): at most
``--clients`` requests are in flight, so the figure is the server's
latency, not a queue the benchmark built.  The mix: the leaderboard page
and its JSON, a participant page, a match page with its replay, the
OpenAPI document.

Two phases in the same run: **paused** (``newmarket serve pause``: no
table plays; the floor) and **playing** (2 tables).  The report gives p50
and p95 per phase and the playing/paused ratio, and ``/proc/loadavg``,
because other work on the machine shows in the figures.  ``--remote`` adds a
third phase: a remote bot (``newmarket connect`` bridging the bundled
``random`` bot) plays at the remote table, which referees in the server's own
process, beside the 2 tables.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
NEWMARKET = [sys.executable, "-m", "referee.cli"]
COMPETITION = """
[competition]
name = "Latency cup"
house_bots = ["random", "lowest", "longest", "boodle"]
[server]
jobs = 2
secure_cookies = false
[tables]
players = 3
hand_limit = 8
"""


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def load(url: str, paths: list[str], clients: int, seconds: float) -> list[tuple[str, float]]:
    """Closed-loop clients for ``seconds``; every request's path and latency in ms."""
    latencies: list[tuple[str, float]] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(offset: int) -> None:
        mine = []
        with httpx.Client(base_url=url, timeout=30) as http:
            index = offset
            while time.monotonic() < stop:
                path = paths[index % len(paths)]
                index += 1
                started = time.perf_counter()
                response = http.get(path)
                mine.append((path, (time.perf_counter() - started) * 1000))
                if response.status_code != 200:
                    raise SystemExit(f"{path}: HTTP {response.status_code}")
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--remote", action="store_true", help="a third phase: a remote bot plays")
    args = parser.parse_args()
    seconds = 8.0 if args.quick else args.seconds
    phases: list[tuple[str, list[tuple[str, float]]]] = []
    bridge: subprocess.Popen[bytes] | None = None
    with tempfile.TemporaryDirectory(prefix="newmarket-bench-") as tmp:
        config = Path(tmp) / "cup.toml"
        config.write_text(COMPETITION + ("[remote]\nport = 0\nwait = 5\n" if args.remote else ""))
        token = ""
        if args.remote:
            token = subprocess.run(
                [*NEWMARKET, "serve", "add-participant", "far", "-c", str(config)],
                cwd=REPO,
                check=True,
                capture_output=True,
                text=True,
            ).stdout.strip()
        server = subprocess.Popen(
            [*NEWMARKET, "serve", str(config), "--port", "0"],
            cwd=REPO,
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert server.stderr is not None
            url = ""
            while not url:
                line = server.stderr.readline()
                if not line:
                    raise SystemExit("the server exited before it was ready")
                found = re.search(r" at (http://\S+) ", line)
                url = found.group(1) if found else ""
            remote = re.search(r"remote bots on (\S+)\)", line)
            threading.Thread(target=server.stderr.read, daemon=True).start()
            with httpx.Client(base_url=url, timeout=30) as http:
                while http.get("/api/leaderboard").json()["matches"] < 12:
                    time.sleep(0.5)
                match_id = http.get("/api/participants/house:random").json()["matches"][0][
                    "match_id"
                ]
            paths = [
                "/",
                "/api/leaderboard",
                "/p/house:random",
                f"/matches/{match_id}",
                "/api/leaderboard",
                "/api/openapi.json",
            ]
            subprocess.run([*NEWMARKET, "serve", "pause", "-c", str(config)], cwd=REPO, check=True)
            time.sleep(3)  # the groups in progress finish
            paused_timed = load(url, paths, args.clients, seconds)
            subprocess.run([*NEWMARKET, "serve", "resume", "-c", str(config)], cwd=REPO, check=True)
            phases.append(("paused (floor)", paused_timed))
            phases.append(timed_phase("2 tables playing", url, paths, args.clients, seconds))
            if remote is not None:
                bridge = connect_remote(url, remote.group(1), token)
                phases.append(timed_phase("2 + remote table", url, paths, args.clients, seconds))
        finally:
            if bridge is not None:
                bridge.terminate()
                bridge.wait(timeout=60)
            server.terminate()
            server.wait(timeout=60)
    loadavg = Path("/proc/loadavg").read_text().split()[:3]
    print(f"newmarket serve latency, {args.clients} closed-loop clients, {seconds:g} s per phase")
    print(f"load average at the end: {' '.join(loadavg)} ({os.cpu_count()} cores)")
    floor = percentile([ms for _path, ms in phases[0][1]], 0.95)
    for name, timed in phases:
        values = [ms for _path, ms in timed]
        print(
            f"  {name:18} {len(values):6} requests  p50 {percentile(values, 0.5):6.1f} ms  "
            f"p95 {percentile(values, 0.95):6.1f} ms  max {max(values):6.1f} ms  "
            f"mean {statistics.mean(values):6.1f} ms"
        )
        for path in dict.fromkeys(p for p, _ms in timed):
            each = [ms for p, ms in timed if p == path]
            print(
                f"      {path:28} p50 {percentile(each, 0.5):6.1f} ms  "
                f"p95 {percentile(each, 0.95):6.1f} ms"
            )
        if timed is not phases[0][1]:
            p95 = percentile(values, 0.95)
            verdict = "under" if p95 < 100 else "OVER"
            print(f"    p95 / paused p95: {p95 / max(0.001, floor):.2f}x; {verdict} 100 ms")
    for name, count in MATCHES.items():
        print(f"  matches finished during '{name}': {count} ({count / seconds:.1f}/s)")


MATCHES: dict[str, int] = {}  # phase name -> matches finished while it was measured


def timed_phase(
    name: str, url: str, paths: list[str], clients: int, seconds: float
) -> tuple[str, list[tuple[str, float]]]:
    """One phase of load; how many matches finished during it goes to ``MATCHES``."""
    with httpx.Client(base_url=url, timeout=30) as http:
        before = http.get("/api/leaderboard").json()["matches"]
        timed = load(url, paths, clients, seconds)
        MATCHES[name] = http.get("/api/leaderboard").json()["matches"] - before
    return name, timed


def connect_remote(url: str, address: str, token: str) -> subprocess.Popen[bytes]:
    """Register a remote version, connect it, and wait until it has played a group."""
    with httpx.Client(base_url=url, timeout=30) as http:
        made = http.post(
            "/api/versions",
            data={"runtime": "remote"},
            headers={"Authorization": f"Bearer {token}"},
        ).json()
        bot = [sys.executable, "-m", "bots.starters.random"]
        bridge = subprocess.Popen(
            [*NEWMARKET, "connect", address, "--token", made["token"], "--", *bot],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            rows = http.get("/api/leaderboard").json()["rows"]
            if any(r["version"] == made["id"] and r["matches"] >= 3 for r in rows):
                return bridge
            time.sleep(0.5)
    bridge.terminate()
    raise SystemExit("the remote bot did not play a group within 120 s")


if __name__ == "__main__":
    main()
