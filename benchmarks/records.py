"""What a match's log costs on disk, full and as a compact record, and what reading one back costs.

    python benchmarks/records.py [--league examples/quick.toml] [--rounds R] [--report]

Plays the league once (by default ``examples/quick.toml``: 280 four-seat matches of
ten hands, every bundled bot but ``search``) keeping full logs, then for every match:

* **bytes**: the full log's size, and its compact record's (``referee.match.compact``);
* **keep**: the table worker's work after a match: compacting the log and showing the
  record gives it back (``referee.match.archive.keep_log``), CPU ms;
* **rebuild + verify**: ``newmarket replay``'s work on the record: rebuild the log by
  the engine and verify every line (``verify_log`` on the record), CPU ms;
* **verify**: the same verification of the full log, the floor: a record costs this
  plus its rebuild.

Rounds repeat the timings over every match, alternating the two readings; the figures
are per match (median of rounds of the per-match median, and the slowest match), with
the machine's load.  ``--report`` also builds the league's report site from each form
and gives its size (every file, as ``du --apparent-size`` counts it).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from referee.match.archive import keep_log
from referee.match.compact import compact
from referee.tools.replay import verify_log

REPO = Path(__file__).resolve().parent.parent


def play(league: Path, scratch: Path) -> Path:
    """The league played into ``scratch`` with full logs; its logs directory."""
    text = re.sub(r"(?m)^logs = .*$", 'logs = "bench-logs"', league.read_text())
    config = scratch / "league.toml"
    config.write_text(text.replace("[league]\n", '[league]\nmatch_logs = "full"\n', 1))
    command = [sys.executable, "-m", "referee.cli", "league", str(config), "--sandbox", "none"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the league failed: {done.stderr[-2000:]}")
    logs = [path for path in scratch.iterdir() if path.is_dir() and path.name.endswith("logs")]
    return logs[0]


def cpu_ms(run: Callable[[Path], object], path: Path) -> float:
    started = time.process_time()
    run(path)
    return (time.process_time() - started) * 1000


def keep_copy(full: Path) -> object:
    """``keep_log`` on a copy of ``full`` (the original stays for the next round)."""
    copy = full.with_name(f"keep-{full.name}")
    shutil.copyfile(full, copy)
    kept = keep_log(copy, "compact")
    kept.unlink()
    return kept


def site_bytes(league: Path, logs: Path, out: Path) -> tuple[int, int]:
    """(bytes, files) of the report site built from ``logs``."""
    command = [sys.executable, "-m", "referee.cli", "report", str(league)]
    command += ["--logs", str(logs), "--out", str(out)]
    subprocess.run(command, check=True, cwd=REPO, stdout=subprocess.DEVNULL)
    files = [path for path in out.rglob("*") if path.is_file()]
    return sum(path.stat().st_size for path in files), len(files)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--league", type=Path, default=REPO / "examples" / "quick.toml")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the timings")
    parser.add_argument("--report", action="store_true", help="build the report from each form")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as directory:
        scratch = Path(directory)
        logs = play(args.league.resolve(), scratch)
        fulls = sorted(logs.glob("*.jsonl"))
        records = scratch / "records"
        records.mkdir()
        full_bytes, record_bytes = [], []
        for full in fulls:
            record = records / full.with_suffix(".nmr").name
            record.write_bytes(compact(full.read_bytes()))
            full_bytes.append(full.stat().st_size)
            record_bytes.append(record.stat().st_size)
        timings: dict[str, list[list[float]]] = {"keep": [], "rebuild + verify": [], "verify": []}
        for number in range(args.rounds):
            keep = [cpu_ms(keep_copy, full) for full in fulls]
            pair: list[tuple[str, Path]] = [("rebuild + verify", records), ("verify", logs)]
            for name, where in pair if number % 2 == 0 else pair[::-1]:
                suffix = ".nmr" if where == records else ".jsonl"
                timings[name].append(
                    [cpu_ms(verify_log, where / f"{full.stem}{suffix}") for full in fulls]
                )
            timings["keep"].append(keep)
        print(
            f"python {sys.version.split()[0]}, load average {load_before:.2f} before, "
            f"{os.getloadavg()[0]:.2f} after; {args.league.name}: {len(fulls)} matches, "
            f"{args.rounds} rounds"
        )
        print(
            f"bytes per match: full log {statistics.mean(full_bytes):,.0f} "
            f"(max {max(full_bytes):,}), compact record {statistics.mean(record_bytes):,.0f} "
            f"(max {max(record_bytes):,}): {sum(full_bytes) / sum(record_bytes):.0f}x smaller"
        )
        for name, rounds in timings.items():
            medians = [statistics.median(values) for values in rounds]
            worst = max(max(values) for values in rounds)
            each = ", ".join(f"{median:.1f}" for median in medians)
            print(
                f"{name:17}: {statistics.median(medians):6.1f} ms of CPU per match "
                f"(median of rounds: {each}; slowest match {worst:.1f})"
            )
        ratios = [
            statistics.median(r) / statistics.median(v)
            for r, v in zip(timings["rebuild + verify"], timings["verify"], strict=True)
        ]
        print(f"rebuild + verify / verify: {', '.join(f'{ratio:.2f}x' for ratio in ratios)}")
        kept = [
            statistics.median(k) / statistics.median(v)
            for k, v in zip(timings["keep"], timings["verify"], strict=True)
        ]
        print(f"keep / verify: {', '.join(f'{ratio:.2f}x' for ratio in kept)}")
        if args.report:
            for name, where in (("full logs", logs), ("compact records", records)):
                size, files = site_bytes(scratch / "league.toml", where, scratch / f"site-{name}")
                print(f"report from {name}: {size / 1e6:.1f} MB in {files} files")
        print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
