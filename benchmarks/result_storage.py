"""What the competition's database grows by a match: its results, kept for ever.

    .venv/bin/python -m benchmarks.result_storage                  # packed results
    .venv/bin/python -m benchmarks.result_storage --json-text      # as JSON text (before)

``--matches`` real 4-seat matches (``retention_storage.played``: the bundled
tracker and random alternately, ``--hands`` hands, no sandbox) give their
results, read from their logs' last lines; a competition database then
records ``--stored`` of them in turn, each in a group of its own (a table's
group, seats and all, as the server records it), and the file's size over the
matches stored is the figure.
``--json-text`` stores each result as the JSON text a server kept before
results were packed, for the comparison (the same rows otherwise).  The
machine's load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from benchmarks.retention_storage import played
from referee.match import packed_result
from referee.match.log import read_records
from referee.match.records import ResultRecord
from referee.match.result import MatchResult, enc_hook
from referee.server import competition_db
from referee.server.competition_db import CompetitionStore


def result_of(log: Path) -> MatchResult:
    """A log's result: its last line."""
    *_, (_, last) = read_records(log)
    assert isinstance(last, ResultRecord), f"{log}: no result at the end"
    return last.result()


def as_json_text(result: MatchResult) -> str:
    """The form a server kept before results were packed."""
    return msgspec.json.encode(result, enc_hook=enc_hook).decode()


def stored_bytes(results: list[MatchResult], stored: int, json_text: bool) -> tuple[int, int]:
    """The database file's bytes after ``stored`` matches, and the packed results' own."""
    if json_text:
        competition_db.pack = as_json_text  # type: ignore[attr-defined,assignment]
    with tempfile.TemporaryDirectory() as folder:
        store = CompetitionStore.open(Path(folder) / "cup.sqlite")
        versions = []
        for name in ("ann", "bea", "cal", "dee"):
            participant, _token = store.add_participant(name)
            version = store.add_version(participant.id, "python3", "main.py", "", 1)
            store.decide(version.id, "admitted", "ok", "", {"name": name, "command": ["x"]})
            versions.append(version.id)
        batch = []
        for number in range(stored):
            group = store.plan_group(number, versions, "benchmark")
            result = results[number % len(results)]
            result = msgspec.structs.replace(result, match_id=competition_db.match_id(group.id, 0))
            batch.append((group, 0, versions, result, None, number))
            if len(batch) == 1000:
                store.record_many(batch)
                batch.clear()
        store.record_many(batch)
        store.close()
        own = sum(len(packed_result.pack(result)) for result in results)
        return os.path.getsize(Path(folder) / "cup.sqlite"), own // len(results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=8)
    parser.add_argument("--hands", type=int, default=10)
    parser.add_argument("--stored", type=int, default=20000)
    parser.add_argument("--json-text", action="store_true", help="store results as JSON text")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}", flush=True)
    results = played(args.matches, args.hands, result_of)
    text = [len(as_json_text(result)) for result in results]
    started = time.process_time()
    size, packed = stored_bytes(results, args.stored, args.json_text)
    cpu = time.process_time() - started
    form = "JSON text" if args.json_text else "packed"
    print(
        f"results of {args.matches} real matches: JSON text {sum(text) // len(text):,} bytes "
        f"a result, packed {packed:,}"
    )
    print(
        f"database of {args.stored:,} matches, results {form}: {size / 1e6:.1f} MB, "
        f"{size / args.stored:,.0f} bytes a match ({cpu:.1f} s of CPU to store them)"
    )
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
