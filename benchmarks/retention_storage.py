"""Bytes a competition stores per day and after a month, with and without retention.

    .venv/bin/python -m benchmarks.retention_storage               # 5 real matches measured
    .venv/bin/python -m benchmarks.retention_storage --matches 3 --flat-out 42

First the size of a match's record in today's format is measured: ``--matches``
real matches of ``newmarket match`` (4 bundled bots, tracker and random
alternately, ``--hands`` hands, no sandbox) each write their log, and the
mean of their sizes is the bytes a match stores.  Then, for the two paces a
server plays at (flat out: ``--flat-out`` matches a second, the 39 to 45 two
tables of short bundled bots play in docs/speed.md; settled: the pace's
default 2 a minute), the bytes stored a day, and what is on the disk after
``--days`` days: everything (no retention, as before) against the retention
window (``--keep-days``, default 7) plus the records kept for ever (each of
``--versions`` versions' first 2 groups of 4 matches).  The load average is
printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
DAY = 86400
GB = 1e9


def played(matches: int, hands: int, keep: Callable[[Path], T]) -> list[T]:
    """``keep`` of each log of ``matches`` real matches (4 bundled bots, tracker and random
    alternately, ``hands`` hands, no sandbox), read before the logs are removed."""
    kept = []
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(1, matches + 1):
            log = Path(folder) / f"m{seed}.jsonl"
            bots = ["--bot", "tracker", "--bot", "random"] * 2
            options = ["--hands", str(hands), "--seed", str(seed), "--sandbox", "none"]
            subprocess.run(
                [sys.executable, "-m", "referee.cli", "match", *bots, *options, "--log", str(log)],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=300,
            )
            kept.append(keep(log))
    return kept


def measure(matches: int, hands: int) -> list[int]:
    """The log sizes of ``matches`` real matches, in bytes."""
    return played(matches, hands, lambda log: log.stat().st_size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=5)
    parser.add_argument("--hands", type=int, default=10)
    parser.add_argument("--flat-out", type=float, default=42.0, help="matches/s")
    parser.add_argument("--settled-per-minute", type=float, default=2.0)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--keep-days", type=float, default=7.0)
    parser.add_argument("--versions", type=int, default=100)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}", flush=True)
    sizes = measure(args.matches, args.hands)
    per_match = statistics.mean(sizes)
    print(
        f"a 4-seat {args.hands}-hand match's log: {', '.join(f'{s:,}' for s in sizes)} bytes; "
        f"mean {per_match:,.0f}"
    )
    kept = args.versions * 2 * 4 * per_match
    print(
        f"| pace | matches a day | stored a day | after {args.days} days, no retention "
        f"| after {args.days} days, {args.keep_days:g}-day retention |"
    )
    print("|---|---|---|---|---|")
    for name, per_day in (
        ("flat out", args.flat_out * DAY),
        ("settled", args.settled_per_minute * 1440),
    ):
        daily = per_day * per_match
        window = min(args.days, args.keep_days)
        print(
            f"| {name} | {per_day:,.0f} | {daily / GB:,.2f} GB | {daily * args.days / GB:,.1f} GB "
            f"| {(daily * window + kept) / GB:,.1f} GB |"
        )
    print(f"(kept for ever: {args.versions} versions' first groups, {kept / GB:.2f} GB)")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
