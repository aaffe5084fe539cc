"""The whole data directory of a competition over a simulated week: records, versions'
files, the operations log and the database, day by day.

    .venv/bin/python -m benchmarks.disk_bounds                     # a week, 7-day retention
    .venv/bin/python -m benchmarks.disk_bounds --keep-days 1 --days 7

First ``--matches`` real matches of ``newmarket match`` (4 bundled bots, tracker
and random alternately, ``--hands`` hands, no sandbox) are played and each
log kept as the server keeps it (a compact record, ``keep_log``): those
records are what the simulated tables store, in turn.  Then the server's own
table and retention loops run for ``--days`` days of virtual time
(tests/server/disk_week.py): one table playing ``--per-minute`` matches a
minute (the settled pace's default is 2), ``--participants`` participants
each uploading a version every ``--upload-hours`` (``--upload-kb`` sent,
``--files-kb`` unpacked and built; one in three rejected, and the organiser
withdraws the version before every fourth one admitted), with the
competition file's retention (``--keep-days``, first groups 2, a pass an
hour, the operations log rotated at 10 MiB with 5 old files).  Each virtual
day the data directory is measured by part, as ``du --apparent-size``
counts.  ``--before`` plays the same without what bounds the versions' files
and the operations log (no version's files removed, no rotation), for the
comparison.  The machine's load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from benchmarks.retention_storage import played
from referee.match.archive import keep_log
from referee.server import version_files
from referee.server.competition import Competition
from tests.server.disk_week import PARTS, Week, simulate

MB = 1e6
BEFORE = " (before: no version's files removed, no log rotation)"


def records(matches: int, hands: int) -> list[bytes]:
    """The compact records of ``matches`` real matches."""
    return played(matches, hands, lambda log: keep_log(log, "compact").read_bytes())


def _none(competition: Competition) -> list[int]:
    """No version's files are removed (``--before``)."""
    return []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=8)
    parser.add_argument("--hands", type=int, default=10)
    parser.add_argument("--days", type=float, default=7.0)
    parser.add_argument("--per-minute", type=float, default=2.0)
    parser.add_argument("--keep-days", type=float, default=7.0)
    parser.add_argument("--participants", type=int, default=20)
    parser.add_argument("--upload-hours", type=float, default=12.0)
    parser.add_argument("--upload-kb", type=int, default=200)
    parser.add_argument("--files-kb", type=int, default=2000)
    parser.add_argument("--before", action="store_true", help="no version files removed")
    args = parser.parse_args()
    if args.before:
        version_files.unused_versions = _none
    print(f"load average before {os.getloadavg()[0]:.2f}", flush=True)
    kept = records(args.matches, args.hands)
    sizes = [len(record) for record in kept]
    print(
        f"a 4-seat {args.hands}-hand match's compact record: "
        f"{', '.join(f'{s:,}' for s in sizes)} bytes; mean {statistics.mean(sizes):,.0f}"
    )
    week = Week(
        days=args.days,
        match_seconds=60.0 / args.per_minute,
        records=kept,
        participants=args.participants,
        upload_hours=args.upload_hours,
        upload_bytes=args.upload_kb * 1000,
        files_bytes=args.files_kb * 1000,
        sample_hours=24.0,
        retention=f"days = {args.keep_days}\nfirst_groups = 2\nevery_minutes = 60"
        + ("\noperations_log_mb = 1048576" if args.before else ""),
    )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        samples = simulate(Path(folder), week)
    seconds = time.perf_counter() - started
    print(
        f"{args.days:g} virtual days at {args.per_minute:g} matches a minute, "
        f"{args.participants} participants uploading every {args.upload_hours:g} h "
        f"({args.upload_kb} kB sent, {args.files_kb} kB built), "
        f"retention {args.keep_days:g} days{BEFORE if args.before else ''}; "
        f"simulated in {seconds:.0f} s"
    )
    print("| day | matches | " + " | ".join(f"{part} MB" for part in PARTS) + " | total MB |")
    print("|---|---|" + "---|" * len(PARTS) + "---|")
    for sample in samples:
        parts = " | ".join(f"{sample.parts[part] / MB:.2f}" for part in PARTS)
        print(
            f"| {sample.hours / 24:.0f} | {sample.matches:,} | {parts} | {sample.total / MB:.1f} |"
        )
    first, last = samples[0], samples[-1]
    if last.matches > first.matches:  # the growth after the first day: no fixed part
        per_match = (last.parts["database"] - first.parts["database"]) / (
            last.matches - first.matches
        )
    else:
        per_match = last.parts["database"] / max(1, last.matches)
    print(
        f"database: {per_match:,.0f} bytes a match (results are kept for ever): "
        f"{per_match * args.per_minute * 1440 / MB:.1f} MB a day at this pace, "
        f"{per_match * 42 * 86400 / 1e9:.1f} GB a day flat out (42 matches/s)"
    )
    print(f"load average after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
