"""The leaderboard's full refit with the organiser's exclusions, against none, on one database.

    .venv/bin/python benchmarks/refit_exclusions.py                  # 50,000 matches
    .venv/bin/python benchmarks/refit_exclusions.py --matches 10000 --db-dir /tmp/fit-dbs

The organiser's ban, withdrawal or re-run (``referee.server.organiser``) asks
the server for a fit from the first result, reading only the matches not
excluded (``CompetitionStore.played_since``).  This times that first
leaderboard (``benchmarks/fit.py --server``'s child: wall, CPU, peak memory)
three ways on the same generated database: no exclusion (the query as
before), one group excluded (the filter's cost over nearly every match), and
one version excluded (its matches leave the fit).  Each twice; the load
average before and after each.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.fit import competition_db, first_board, load

CASES = (
    ("no exclusion", ()),
    ("one group excluded", (("group", 1),)),
    ("one version excluded", (("version", 1),)),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=50_000)
    parser.add_argument("--db-dir", help="keep the generated database here, and reuse it")
    parser.add_argument("--bots", type=int, default=16)
    parser.add_argument("--table", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.db_dir or scratch).resolve()
        config, _written = competition_db(folder, args.matches, args)
        database = config.parent / "cup-data" / "competition.sqlite"
        for label, rows in CASES:
            with sqlite3.connect(database) as raw:
                raw.execute("CREATE TABLE IF NOT EXISTS fit_exclusions (kind, target, why, at)")
                raw.execute("DELETE FROM fit_exclusions")
                raw.executemany(
                    "INSERT INTO fit_exclusions VALUES (?, ?, 'benchmark', 0)", list(rows)
                )
            for _ in range(2):
                before = load()
                print(f"{label}: {first_board(sys.executable, config)}; load {before} -> {load()}")


if __name__ == "__main__":
    main()
