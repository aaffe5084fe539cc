"""The competition server's page and API latency while its tables play (issue 17: p95 < 100 ms).

    .venv/bin/python benchmarks/server.py             # 30 s per phase, 4 clients
    .venv/bin/python benchmarks/server.py --quick     # 8 s per phase

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
because other work on the machine shows in the figures.
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
    args = parser.parse_args()
    seconds = 8.0 if args.quick else args.seconds
    with tempfile.TemporaryDirectory(prefix="newmarket-bench-") as tmp:
        config = Path(tmp) / "cup.toml"
        config.write_text(COMPETITION)
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
            with httpx.Client(base_url=url, timeout=30) as http:
                before = http.get("/api/leaderboard").json()["matches"]
                playing_timed = load(url, paths, args.clients, seconds)
                after = http.get("/api/leaderboard").json()["matches"]
        finally:
            server.terminate()
            server.wait(timeout=60)
    loadavg = Path("/proc/loadavg").read_text().split()[:3]
    print(f"newmarket serve latency, {args.clients} closed-loop clients, {seconds:g} s per phase")
    print(f"load average at the end: {' '.join(loadavg)} ({os.cpu_count()} cores)")
    for name, timed in (("paused (floor)", paused_timed), ("2 tables playing", playing_timed)):
        values = [ms for _path, ms in timed]
        print(
            f"  {name:18} {len(values):6} requests  p50 {percentile(values, 0.5):6.1f} ms  "
            f"p95 {percentile(values, 0.95):6.1f} ms  max {max(values):6.1f} ms"
        )
        for path in dict.fromkeys(p for p, _ms in timed):
            each = [ms for p, ms in timed if p == path]
            print(
                f"      {path:28} p50 {percentile(each, 0.5):6.1f} ms  "
                f"p95 {percentile(each, 0.95):6.1f} ms"
            )
    paused = [ms for _path, ms in paused_timed]
    playing = [ms for _path, ms in playing_timed]
    print(
        f"  matches finished while measuring: {after - before} ({(after - before) / seconds:.1f}/s)"
    )
    ratio = percentile(playing, 0.95) / max(0.001, percentile(paused, 0.95))
    print(f"  p95 playing / paused: {ratio:.2f}x; mean {statistics.mean(playing):.1f} ms")
    verdict = "under" if percentile(playing, 0.95) < 100 else "OVER"
    print(f"  p95 while playing is {verdict} the 100 ms target")


if __name__ == "__main__":
    main()
