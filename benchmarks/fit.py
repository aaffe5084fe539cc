"""The standings' and the leaderboard's fit from 10^3 to 10^6 matches: summaries against the batch.

    .venv/bin/python benchmarks/fit.py                          # 10^3, 10^4, 10^5, 10^6 matches
    .venv/bin/python benchmarks/fit.py --sizes 1000 10000 --old-up-to 10000
    .venv/bin/python benchmarks/fit.py --sizes --standings 10080 50120 \\
        --db-dir /tmp/fit-dbs --compare ../old-checkout/.venv/bin/python  # `newmarket standings`
    .venv/bin/python benchmarks/fit.py --sizes --server 51606   # the server's first leaderboard
    .venv/bin/python benchmarks/fit.py --sizes --tally 10000 100000  # standings from their tally

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
  again (what a new result costs before the bootstrap): median, 99th
  percentile and worst;
* **old fit**: where it finishes in reasonable time (``--old-up-to``), the
  batch fit the standings used before, every group's equations and a
  bootstrap over groups (``referee.scoring.intervals.bootstrap``), in a child
  of its own.

``--standings N``: a league database of N generated matches, then
``newmarket standings --db FILE --json`` in a child process (its wall time
and peak memory), the same by another checkout's Python (``--compare``: the
old code on the same database, in the same run), and where the time goes
inside it.  ``--server N``: a
competition database of N generated matches, and the time to the server's
first leaderboard over them (every result read and fitted), and over the
same after a restart, from its saved summaries (``--server`` runs it twice).
``--tally N``: a league of N generated results of its real schedule, in the
order the runner plays them; ``newmarket standings`` folding every match
(which saves its tally), again from the tally, and after 1,000 more
matches.  The load average is
printed before and after every row: the machine is shared.

The databases are written 10,000 generated results a transaction
(``record_many``, the rows a league or the server writes, one commit): 10^6
matches in about 2 minutes for a league and 3 for a competition, where one
transaction a match took about 100 minutes.
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
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from referee.match.result import MatchResult, SeatResult  # noqa: E402
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
    """This process's peak resident set since its exec (``VmHWM``: ``ru_maxrss`` would count
    the pages of the process it was forked from)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


T = TypeVar("T")


def chunks(items: Iterable[T], size: int = 10_000) -> Iterator[list[T]]:
    """``items`` in lists of ``size``: generated results are written a chunk a transaction
    (``record_many``), since one a match (a sync to disk each) took 100 minutes for 10^6."""
    it = iter(items)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


# Runs a newmarket command in this process, then prints its peak resident set on stderr.
PEAK = """
import atexit, sys
from pathlib import Path
def peak():
    import time
    print("cpu", time.process_time(), file=sys.stderr)
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            print("peak", int(line.split()[1]) / 1024, file=sys.stderr)
atexit.register(peak)
sys.argv = ["newmarket", *sys.argv[1:]]
from referee.cli import main
main()
"""


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
    groups, classes, draws = summary.groups, summary.classes, summary.draws_groups
    everyone = list(range(bots))
    fits, cpu = [], []
    for _ in range(3):
        started, used = time.perf_counter(), time.process_time()
        fitted = summary.bootstrap(everyone)
        fits.append(time.perf_counter() - started)
        cpu.append(time.process_time() - used)
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
        "groups": groups,
        "classes": classes,
        "draws": "groups" if draws else "classes",
        "resamples": fitted.resamples,
        "feed_us": 1e6 * fed / matches,
        "fit_s": fits,
        "fit_cpu_s": cpu,
        "update_ms_median": 1000 * statistics.median(updates),
        "update_ms_p99": 1000 * sorted(updates)[int(0.99 * len(updates))],
        "update_ms_max": 1000 * max(updates),
        "peak_mb": peak_mb(),
    }


def child_old(matches: int, bots: int, table: int) -> dict[str, object]:
    from referee.scoring.fit import equations
    from referee.scoring.intervals import bootstrap

    groups: dict[tuple[int, tuple[int, ...]], list[GroupMatch[int]]] = {}
    for label, match, _last in itertools.islice(results(bots, table), matches):
        groups.setdefault(label, []).append(match)
    started, used = time.perf_counter(), time.process_time()
    fitted = bootstrap(bots, [equations(group) for group in groups.values()])
    return {
        "matches": matches,
        "resamples": fitted.resamples,
        "fit_s": [time.perf_counter() - started],
        "fit_cpu_s": [time.process_time() - used],
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
        cpu = ", ".join(f"{s:.3f}" for s in new["fit_cpu_s"])  # type: ignore[attr-defined]
        print(
            f"{matches:>9,} matches: {new['groups']:,} groups in {new['classes']:,} classes "
            f"(draws {new['draws']}, {new['resamples']} resamples); feed "
            f"{new['feed_us']:.1f} us a match; fit {fits} s (CPU {cpu} s); update median "
            f"{new['update_ms_median']:.2f} ms, p99 {new['update_ms_p99']:.2f} ms, worst "
            f"{new['update_ms_max']:.2f} ms; peak "
            f"{new['peak_mb']:.0f} MB; load {before} -> {load()}",
            flush=True,
        )
        if matches <= args.old_up_to:
            before = load()
            old = run_child("old", matches, args)
            seconds = old["fit_s"][0]  # type: ignore[index]
            cpu_old = old["fit_cpu_s"][0]  # type: ignore[index]
            print(
                f"{'':>9}  old batch fit: {seconds:.3f} s (CPU {cpu_old:.3f} s, "
                f"{old['resamples']} resamples), peak "
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


def league_db(folder: Path, matches: int, args: argparse.Namespace) -> tuple[Path, float]:
    """A league database of ``matches`` generated results (kept and reused in ``folder``)."""
    from referee.league.league_db import LeagueStore
    from referee.league.league_file import parse_config
    from referee.match.key import MatchKey

    db = folder / f"league-{args.bots}-{args.table}-{matches}.db"
    if db.exists():
        return db, 0.0
    text = LEAGUE.format(table=args.table, hands=HANDS) + "".join(
        f'[[bots]]\nname = "b{i}"\ncommand = "random"\n' for i in range(args.bots)
    )
    path = folder / "league.toml"
    path.write_text(text)
    started = time.perf_counter()
    partial = db.with_suffix(".partial")
    with LeagueStore.for_league(partial, parse_config(text, path)) as store:
        stream = itertools.islice(results(args.bots, args.table), matches)
        for chunk in chunks(enumerate(stream)):
            made = []
            for ordinal, (label, match, _last) in chunk:
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
                               (1000,) * args.table, label[0])  # fmt: skip
                made.append((key, MatchResult(mid, label[0], {}, HANDS, seats, None, "limit")))
            store.record_many(made)
    for suffix in ("", "-wal", "-shm", ".lock"):
        side = Path(f"{partial}{suffix}")
        if side.exists():
            side.rename(f"{db}{suffix}")
    return db, time.perf_counter() - started


def timed_standings(python: str, db: Path) -> tuple[float, float]:
    """``newmarket standings --db DB --json`` run by ``python``: wall seconds and peak MB.

    Run from the database's folder, so that ``python`` imports its own
    checkout's ``referee`` (as installed in its environment), not this one's.
    """
    started = time.perf_counter()
    done = subprocess.run(
        [python, "-c", PEAK, "standings", "--db", str(db), "--json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=db.parent,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"{python}: newmarket standings failed on {db}:\n{done.stderr}")
    words = done.stderr.split()
    CPU_SECONDS[db] = float(words[words.index("cpu") + 1])
    return wall, float(words[-1])


CPU_SECONDS: dict[Path, float] = {}  # the last ``timed_standings`` run's CPU, by database


def standings_rows(args: argparse.Namespace) -> None:
    from referee.league.league_db import LeagueStore
    from referee.league.standings import fit_summary, head_to_head
    from referee.scoring.ratings import rate

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.db_dir or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for matches in args.standings:
            db, written = league_db(folder.resolve(), matches, args)
            before = load()
            wall, peak = timed_standings(sys.executable, db)
            line = f"newmarket standings, {matches:,} matches: {wall:.2f} s, peak {peak:.0f} MB"
            if args.compare:
                old_wall, old_peak = timed_standings(args.compare, db)
                line += f"; {args.compare}: {old_wall:.2f} s, peak {old_peak:.0f} MB"
            with LeagueStore.open_existing(db) as store:
                names = store.bot_names()
                t0 = time.perf_counter()
                stored = store.matches()
                t1 = time.perf_counter()
                rate(names, [([names[b] for b in m.key.bots], [s.place for s in m.result.seats])
                             for m in stored])  # fmt: skip
                t2 = time.perf_counter()
                summary = fit_summary(stored)
                t3 = time.perf_counter()
                summary.bootstrap(list(range(len(names))))
                t4 = time.perf_counter()
                head_to_head(names, stored)
                t5 = time.perf_counter()
            print(
                f"{line}; inside: read {t1 - t0:.2f} s, openskill {t2 - t1:.2f} s, fit "
                f"{t3 - t2:.2f} s summaries + {t4 - t3:.2f} s bootstrap, head to head "
                f"{t5 - t4:.2f} s; load {before} -> {load()}"
                + (f" (database written in {written:.0f} s)" if written else ""),
                flush=True,
            )


FIRST_BOARD = """
import sys, time
from pathlib import Path
import trio
from referee.server.competition import Competition
from referee.server.competition_file import load_config
from referee.server.competition_db import CompetitionStore
config = load_config(Path(sys.argv[1]))
opening = time.process_time()
competition = Competition(config, CompetitionStore.open(config.database))
started, used = time.perf_counter(), time.process_time()
trio.run(competition.refresh_board)
peak = [line for line in Path("/proc/self/status").read_text().splitlines() if "VmHWM" in line]
print(time.perf_counter() - started, time.process_time() - used, competition.board.matches,
      int(peak[0].split()[1]) / 1024, used - opening, time.process_time())
"""


def scheduled_league(folder: Path, matches: int, args: argparse.Namespace) -> Path:
    """A league file whose schedule holds ``matches`` and 1,000 more (whole cycles)."""
    from referee.league.schedule import build_schedule

    per_cycle = len(build_schedule(args.bots, args.table, 1, round_robin_limit=100_000))
    cycles = -(-(matches + 1000) // per_cycle)
    text = LEAGUE.format(table=args.table, hands=HANDS).replace(
        "cycles = 1000", f"cycles = {cycles}\nround_robin_limit = 100000"
    ) + "".join(f'[[bots]]\nname = "b{i}"\ncommand = "random"\n' for i in range(args.bots))
    path = folder / f"tally-{args.bots}-{args.table}-{matches}.toml"
    path.write_text(text)
    return path


def record_scheduled(path: Path, db: Path, start: int, stop: int) -> float:
    """Generated results for the schedule's matches ``start`` to ``stop`` in the order the
    runner plays them (every table's rotation 0 of a cycle, then 1, ...): seconds taken."""
    from referee.league.league_db import LeagueStore
    from referee.league.league_file import load_config
    from referee.league.runner import rotation_major, round_robin_jobs
    from tests.league.results import made_up

    config = load_config(path)
    started = time.perf_counter()
    rng = random.Random(start)
    with LeagueStore.for_league(db, config) as store:
        seed = int(store.resolved_identity()["league"]["seed"])
        jobs = sorted(round_robin_jobs(config, seed, store.deal_key()), key=rotation_major)
        for chunk in chunks(jobs[start:stop]):
            made = [
                (job.key, made_up(job.key, rng, hands=HANDS, start=1000, troubled=False))
                for job in chunk
            ]
            store.record_many(made)
    return time.perf_counter() - started


def tally_rows(args: argparse.Namespace) -> None:
    """``newmarket standings`` folding every match, then from its saved tally, then after
    1,000 more matches: each a child process, wall time and peak memory."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.db_dir or scratch).resolve()
        folder.mkdir(parents=True, exist_ok=True)
        for matches in args.tally:
            path = scheduled_league(folder, matches, args)
            db = folder / f"tally-{args.bots}-{args.table}-{matches}.db"
            written = 0.0
            if not db.exists():
                written = record_scheduled(path, db, 0, matches)
            tally = Path(f"{db}.standings")
            tally.unlink(missing_ok=True)
            runs = []
            for what in ("every match folded", "again", "1,000 matches later"):
                if what == "1,000 matches later":
                    record_scheduled(path, db, matches, matches + 1000)
                before = load()
                wall, peak = timed_standings(sys.executable, db)  # the first saves the tally
                size = f", tally {tally.stat().st_size / 1e6:.1f} MB" if tally.exists() else ""
                runs.append(
                    f"{what}: {wall:.2f} s, CPU {CPU_SECONDS[db]:.2f} s, peak {peak:.0f} MB"
                    f"{size}, load {before}"
                )
            print(
                f"standings, {matches:,} matches"
                + (f" (database written in {written:.1f} s)" if written else "")
                + ": "
                + "; ".join(runs)
                + f"; load after {load()}",
                flush=True,
            )
            db.unlink()  # it grew by 1,000: the next run writes it afresh
            for side in ("-wal", "-shm", ".lock", ".standings"):
                Path(f"{db}{side}").unlink(missing_ok=True)


def competition_db(folder: Path, matches: int, args: argparse.Namespace) -> tuple[Path, float]:
    """A competition's file and database of ``matches`` generated results (kept, reused)."""
    from referee.server.competition_db import CompetitionStore, Finished
    from referee.server.competition_file import load_config

    home = folder / f"cup-{args.bots}-{args.table}-{matches}"
    config_path = home / "cup.toml"
    if config_path.exists():
        return config_path, 0.0
    partial = home.with_suffix(".partial")
    partial.mkdir(parents=True, exist_ok=True)
    (partial / "cup.toml").write_text('[competition]\nname = "x"\nhouse_bots = []\n')
    config = load_config(partial / "cup.toml")
    store = CompetitionStore.open(config.database)
    versions = []
    for bot in range(args.bots):
        participant, _token = store.add_participant(f"p{bot}")
        version = store.add_version(participant.id, "python3", "main.py", "", 1)
        store.decide(version.id, "admitted", "ok", "", {"name": "x", "command": ["x"]})
        versions.append(version.id)
    started = time.perf_counter()
    group, rotation = None, 0
    for chunk in chunks(itertools.islice(results(args.bots, args.table), matches)):
        made: list[Finished] = []
        # The groups planned as the server plans them, a chunk's in one transaction.
        store.connection.execute("BEGIN IMMEDIATE")
        for label, match, _last in chunk:
            holders = tuple(versions[bot] for bot in match.holders)
            if group is None or group.seed != label[0]:
                group, rotation = store.plan_group(label[0], holders, "benchmark"), 0
            result = MatchResult(f"m{label[0]}", label[0], {}, HANDS, [
                SeatResult(seat=s, name="x", place=1, chips=1000 + int(net), status="ok",
                           faults=[], net_chips=int(net), boodle_chips=0, hands_won=0)
                for s, net in enumerate(match.nets)
            ], None, "limit")  # fmt: skip
            made.append((group, rotation, holders, result, None, group.seed))
            rotation += 1
        store.connection.execute("COMMIT")
        store.record_many(made)
    store.close()
    partial.rename(home)
    return config_path, time.perf_counter() - started


def first_board(python: str, config_path: Path) -> str:
    """The server's first leaderboard over every stored result, computed by ``python``."""
    done = subprocess.run(
        [python, "-c", FIRST_BOARD, str(config_path)],
        capture_output=True,
        text=True,
        cwd=config_path.parent,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"{python}: the first leaderboard failed:\n{done.stderr}")
    wall, cpu, matches, peak, opening, whole = done.stdout.split()
    return (
        f"{float(wall):.2f} s (CPU {float(cpu):.2f} s) over {int(matches):,} matches, "
        f"peak {float(peak):.0f} MB (the process's CPU {float(whole):.2f} s, of which "
        f"{float(opening):.2f} s opening the database)"
    )


def server_rows(args: argparse.Namespace) -> None:
    """The competition server's first leaderboard: every stored result read and fitted."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.db_dir or scratch).resolve()
        for matches in args.server:
            config_path, written = competition_db(folder, matches, args)
            before = load()
            checkpoint = config_path.parent / "cup-data" / "leaderboard.checkpoint"
            checkpoint.unlink(missing_ok=True)
            ours = first_board(sys.executable, config_path)  # saves the checkpoint
            again = first_board(sys.executable, config_path)
            line = (
                f"server, {matches:,} matches: first leaderboard {ours}; after a restart, "
                f"from its checkpoint, {again}"
            )
            if args.compare:
                line += f"; {args.compare}: {first_board(args.compare, config_path)}"
            print(
                f"{line}; load {before} -> {load()}"
                + (f" (database written in {written:.0f} s)" if written else ""),
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10**3, 10**4, 10**5, 10**6])
    parser.add_argument("--old-up-to", type=int, default=10**5, help="the old fit's largest size")
    parser.add_argument("--standings", type=int, nargs="*", default=[])
    parser.add_argument("--server", type=int, nargs="*", default=[])
    parser.add_argument("--tally", type=int, nargs="*", default=[])
    parser.add_argument("--db-dir", help="keep the generated databases here, and reuse them")
    parser.add_argument(
        "--compare",
        metavar="PYTHON",
        help="also time another checkout's `newmarket standings` and first leaderboard",
    )
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
    if args.server:
        server_rows(args)
    if args.tally:
        tally_rows(args)


if __name__ == "__main__":
    main()
