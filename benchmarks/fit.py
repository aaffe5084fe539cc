"""The standings' and the leaderboard's fit from 10^3 to 10^6 matches: summaries against the batch.

    .venv/bin/python benchmarks/fit.py                          # 10^3, 10^4, 10^5, 10^6 matches
    .venv/bin/python benchmarks/fit.py --sizes 1000 10000 --old-up-to 10000
    .venv/bin/python benchmarks/fit.py --standings 10000 50000  # `newmarket standings` on a db

No match is played: the results are generated, as a duplicate round robin
of ``--bots`` bots (16) at tables of ``--table`` (4) plays them: every table's
rotations share a deal, each cycle seats each table in a seeded order, and a
seat's chips are its cards' value plus its holder's skill plus noise.  Each
size runs in a child process of its own, so its peak memory (the child's
maximum resident set, as ``/usr/bin/time -v`` reports it) is its own.  Per
size:

* **feed**: the summary (``referee.scoring.summary.FitSummary``) fed the
  results one match at a time, as the server's leaderboard is (µs a match);
* **fit**: the standings' fit from the summary, scores, intervals, ranks and
  LOS (1,000 resamples at 16 bots), three times;
* **update**: 1,000 more results, each added and the point estimate solved
  again (what a new result costs before the bootstrap): median and worst;
* **old fit**: where it finishes in reasonable time (``--old-up-to``), the
  batch fit the standings used before, every group's equations and a
  bootstrap over groups (``referee.scoring.intervals.bootstrap``), in a child
  of its own.

``--standings N``: a league database of N generated matches, then
``newmarket standings --db FILE --json`` in a child process (its wall time
and peak memory), and where the time goes inside it.  The load average is
printed before and after every row: the machine is shared.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from referee.scoring.duplicate import GroupMatch  # noqa: E402

HANDS = 4
Result = tuple[tuple[int, tuple[int, ...]], GroupMatch[int], bool]  # (group label, match, last)


def results(bots: int, table: int, seed: int = 1) -> Iterator[Result]:
    """Every match of a duplicate round robin, cycle after cycle, forever."""
    rng = random.Random(seed)
    skill = [rng.gauss(0, 0.5) for _ in range(bots)]
    tables = list(itertools.combinations(range(bots), table))
    deal = 0
    while True:
        for members in tables:
            order = list(members)
            rng.shuffle(order)
            cards = [rng.gauss(0, 3) for _ in range(table)]
            deal += 1
            label = (deal, members)
            for rotation in range(table):
                holders = [order[(seat + rotation) % table] for seat in range(table)]
                mean = sum(skill[h] for h in holders) / table
                nets = [
                    round(HANDS * (cards[s] + skill[h] - mean + rng.gauss(0, 1.5)))
                    for s, h in enumerate(holders)
                ]
                yield label, GroupMatch(holders, nets, HANDS), rotation == table - 1


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_new(matches: int, bots: int, table: int) -> dict[str, object]:
    from referee.scoring.summary import FitSummary

    summary = FitSummary()
    stream = results(bots, table)
    fed = 0.0
    for label, match, last in itertools.islice(stream, matches):
        started = time.perf_counter()
        summary.add(label, match)
        if last:
            summary.close(label)
        fed += time.perf_counter() - started
    everyone = list(range(bots))
    fits = []
    for _ in range(3):
        started = time.perf_counter()
        fitted = summary.bootstrap(everyone)
        fits.append(time.perf_counter() - started)
    updates = []
    for label, match, last in itertools.islice(stream, 1000):
        started = time.perf_counter()
        summary.add(label, match)
        if last:
            summary.close(label)
        summary.strengths(everyone)
        updates.append(time.perf_counter() - started)
    return {
        "matches": matches,
        "groups": summary.groups,
        "classes": summary.classes,
        "draws": "groups" if summary.draws_groups else "classes",
        "resamples": fitted.resamples,
        "feed_us": 1e6 * fed / matches,
        "fit_s": fits,
        "update_ms_median": 1000 * statistics.median(updates),
        "update_ms_max": 1000 * max(updates),
        "peak_mb": peak_mb(),
    }


def child_old(matches: int, bots: int, table: int) -> dict[str, object]:
    from referee.scoring.fit import equations
    from referee.scoring.intervals import bootstrap

    groups: dict[tuple[int, tuple[int, ...]], list[GroupMatch[int]]] = {}
    for label, match, _last in itertools.islice(results(bots, table), matches):
        groups.setdefault(label, []).append(match)
    started = time.perf_counter()
    fitted = bootstrap(bots, [equations(group) for group in groups.values()])
    return {
        "matches": matches,
        "resamples": fitted.resamples,
        "fit_s": [time.perf_counter() - started],
        "peak_mb": peak_mb(),
    }


def run_child(kind: str, matches: int, args: argparse.Namespace) -> dict[str, object]:
    command = [sys.executable, __file__, "--child", kind, str(matches)]
    command += ["--bots", str(args.bots), "--table", str(args.table)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{kind} at {matches} matches failed:\n{done.stderr}")
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def fit_rows(args: argparse.Namespace) -> None:
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores; {args.bots} bots at tables "
        f"of {args.table}, duplicate round robin, {HANDS} hands a match"
    )
    for matches in args.sizes:
        before = load()
        new = run_child("new", matches, args)
        fits = ", ".join(f"{s:.3f}" for s in new["fit_s"])  # type: ignore[attr-defined]
        print(
            f"{matches:>9,} matches: {new['groups']:,} groups in {new['classes']:,} classes "
            f"(draws {new['draws']}, {new['resamples']} resamples); feed "
            f"{new['feed_us']:.1f} us a match; fit {fits} s; update median "
            f"{new['update_ms_median']:.2f} ms, worst {new['update_ms_max']:.2f} ms; peak "
            f"{new['peak_mb']:.0f} MB; load {before} -> {load()}",
            flush=True,
        )
        if matches <= args.old_up_to:
            before = load()
            old = run_child("old", matches, args)
            seconds = old["fit_s"][0]  # type: ignore[index]
            print(
                f"{'':>9}  old batch fit: {seconds:.3f} s ({old['resamples']} resamples), peak "
                f"{old['peak_mb']:.0f} MB; load {before} -> {load()}",
                flush=True,
            )


LEAGUE = """
[league]
name = "fit benchmark"
seed = 1
table_size = {table}
hand_limit = {hands}
match = "fixed_hands"
[schedule]
cycles = 1000
"""


def standings_rows(args: argparse.Namespace) -> None:
    from referee.league.config import parse_config
    from referee.league.ratings import rate
    from referee.league.standings import fit_summary, head_to_head
    from referee.league.store import LeagueStore, MatchKey
    from referee.match import MatchResult, SeatResult

    for matches in args.standings:
        with tempfile.TemporaryDirectory() as folder:
            text = LEAGUE.format(table=args.table, hands=HANDS) + "".join(
                f'[[bots]]\nname = "b{i}"\ncommand = "random"\n' for i in range(args.bots)
            )
            path = Path(folder) / "league.toml"
            path.write_text(text)
            config = parse_config(text, path)
            db = Path(folder) / "league.db"
            started = time.perf_counter()
            with LeagueStore.for_league(db, config) as store:
                for ordinal, (label, match, _last) in enumerate(
                    itertools.islice(results(args.bots, args.table), matches)
                ):
                    order = sorted(range(args.table), key=lambda s: -match.nets[s])
                    seats = [
                        SeatResult(
                            seat=s,
                            name=f"b{bot}",
                            place=order.index(s) + 1,
                            chips=1000 + int(match.nets[s]),
                            status="ok",
                            faults=[],
                            net_chips=int(match.nets[s]),
                            boodle_chips=0,
                            hands_won=0,
                        )
                        for s, bot in enumerate(match.holders)
                    ]
                    mid = f"m{ordinal}"
                    key = MatchKey(mid, ordinal, 1, label[0], 0, label[0], tuple(match.holders),
                                   (1000,) * args.table)  # fmt: skip
                    store.record(key, MatchResult(mid, label[0], {}, HANDS, seats, None, "limit"))
            written = time.perf_counter() - started
            before = load()
            started = time.perf_counter()
            child = subprocess.Popen(
                [sys.executable, "-m", "referee.cli", "standings", "--db", str(db), "--json"],
                stdout=subprocess.DEVNULL,
            )
            _pid, status, usage = os.wait4(child.pid, 0)
            wall = time.perf_counter() - started
            if status:
                raise SystemExit(f"newmarket standings failed at {matches} matches")
            with LeagueStore.open_existing(db) as store:
                names = store.bot_names()
                t0 = time.perf_counter()
                stored = store.matches()
                t1 = time.perf_counter()
                rate(names, [([names[b] for b in m.key.bots], [s.place for s in m.result.seats])
                             for m in stored])  # fmt: skip
                t2 = time.perf_counter()
                fit_summary(stored).bootstrap(list(range(len(names))))
                t3 = time.perf_counter()
                head_to_head(names, stored)
                t4 = time.perf_counter()
            print(
                f"newmarket standings, {matches:,} matches (written in {written:.0f} s): "
                f"{wall:.2f} s, peak {usage.ru_maxrss / 1024:.0f} MB; inside: read "
                f"{t1 - t0:.2f} s, openskill {t2 - t1:.2f} s, fit {t3 - t2:.2f} s, head to "
                f"head {t4 - t3:.2f} s; load {before} -> {load()}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10**3, 10**4, 10**5, 10**6])
    parser.add_argument("--old-up-to", type=int, default=10**5, help="the old fit's largest size")
    parser.add_argument("--standings", type=int, nargs="*", default=[])
    parser.add_argument("--bots", type=int, default=16)
    parser.add_argument("--table", type=int, default=4)
    parser.add_argument("--child", nargs=2, metavar=("KIND", "MATCHES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, matches = args.child[0], int(args.child[1])
        work = child_new if kind == "new" else child_old
        print(json.dumps(work(matches, args.bots, args.table)))
        return
    if args.sizes:
        fit_rows(args)
    if args.standings:
        standings_rows(args)


if __name__ == "__main__":
    main()
