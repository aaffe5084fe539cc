"""What a participant's debugging views cost on a large competition database (no server).

    .venv/bin/python benchmarks/server_lists.py              # 20 000 matches, 24 participants
    .venv/bin/python benchmarks/server_lists.py --matches 5000

A competition database is filled with ``--matches`` finished matches of
3-seat tables (random tables of ``--participants`` versions, a fault in one
match in ten), then each view is timed, best of 5, in this process:
a participant's first page of matches, the same filtered by an opponent and
by faults only, a page deep in the list (by its cursor), the leaderboard's
rating history and head-to-head matrix built from nothing and then
brought up to date after 300 more matches (its first look takes
``PER_LOOK`` matches; then as many looks as it needs).  The floor is the participant
page's existing query (``recent_matches``, 20 rows), measured in the same
run; each figure is also given as a ratio to it.  ``/proc/loadavg`` is
printed, since other work on the machine shows in every figure.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import trio  # noqa: E402

from referee.match.result import FaultRecord  # noqa: E402
from referee.server import board_charts  # noqa: E402
from referee.server.competition import Competition  # noqa: E402
from referee.server.competition_db import CompetitionStore  # noqa: E402
from referee.server.competition_file import load_config  # noqa: E402
from referee.server.match_lists import MatchFilter, match_page  # noqa: E402
from tests.server.inprocess import admitted_group, finished  # noqa: E402


def best(action: Callable[[], object], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def fill(competition: Competition, participants: int, matches: int, draw: random.Random) -> None:
    store = competition.store
    # The figures are of reading, not of writing: no sync at each match.
    store.connection.execute("PRAGMA synchronous = OFF")
    names = tuple(f"p{n:02d}" for n in range(participants))
    versions = list(admitted_group(store, names).versions)
    for number in range(matches // 3):
        table = tuple(draw.sample(versions, 3))
        group = store.plan_group(number, table, "bench")
        for rotation in range(3):
            seating = table[rotation:] + table[:rotation]
            result = finished(f"g{group.id}r{rotation}", number)
            for seat, place in zip(result.seats, draw.sample([1, 2, 3], 3), strict=True):
                seat.place = place
            if draw.random() < 0.1:
                result.seats[0].faults.append(FaultRecord(kind="timeout", hand=1, detail="x"))
            store.record(group, rotation, seating, result, None, identity=number)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=20_000)
    parser.add_argument("--participants", type=int, default=24)
    args = parser.parse_args()
    draw = random.Random(7)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cup.toml"
        path.write_text('[competition]\nname = "bench"\nhouse_bots = []\n')
        config = load_config(path)
        competition = Competition(config, CompetitionStore.open(config.database))
        store = competition.store
        started = time.perf_counter()
        fill(competition, args.participants, args.matches, draw)
        print(f"filled {store.match_count()} matches in {time.perf_counter() - started:.1f} s")
        trio_refresh(competition)
        who = store.participant_by_name("p00")
        rival = store.participant_by_name("p01")
        assert who is not None and rival is not None
        version = store.versions(who.id)[0].id
        deep = match_page(competition, who, MatchFilter(limit=200))
        for _ in range(5):
            deep = match_page(competition, who, MatchFilter(limit=200, cursor=deep["cursor"]))
        floor = best(lambda: store.recent_matches(20, version))
        figures = {
            "first page (50)": best(lambda: match_page(competition, who, MatchFilter())),
            "opponent filter": best(
                lambda: match_page(competition, who, MatchFilter(opponent=rival))
            ),
            "faults only": best(
                lambda: match_page(competition, who, MatchFilter(faults_only=True))
            ),
            "page 7 by cursor": best(
                lambda: match_page(competition, who, MatchFilter(cursor=deep["cursor"]))
            ),
        }
        start = time.perf_counter()
        trio.run(board_charts.refresh_charts, competition)
        figures[f"first look ({board_charts.PER_LOOK})"] = time.perf_counter() - start
        start = time.perf_counter()
        looks = 1
        while _behind(competition):
            trio.run(board_charts.refresh_charts, competition)
            looks += 1
        figures[f"all, in {looks} looks"] = time.perf_counter() - start
        figures["head to head"] = best(lambda: board_charts.head_to_head(competition))
        fill_more = random.Random(8)
        group_base = store.last_group_id()
        versions = [v.id for v in store.versions()]
        for number in range(100):
            table = tuple(fill_more.sample(versions, 3))
            group = store.plan_group(group_base + number, table, "bench")
            for rotation in range(3):
                result = finished(f"g{group.id}r{rotation}", number)
                store.record(group, rotation, table, result, None, identity=number)
        start = time.perf_counter()
        trio.run(board_charts.refresh_charts, competition)
        board_charts.ratings_svg(competition)
        figures["ratings, 300 more"] = time.perf_counter() - start
        load = Path("/proc/loadavg").read_text().split()[:3]
        print(f"load average {' '.join(load)} on {len(os.sched_getaffinity(0))} cpus")
        print(f"floor: recent_matches(20) {floor * 1000:.2f} ms")
        for name, seconds in figures.items():
            print(f"{name:>22}: {seconds * 1000:9.2f} ms  ({seconds / floor:7.1f} x floor)")
        store.close()


def _behind(competition: Competition) -> bool:
    state = board_charts._state(competition)
    (last,) = competition.store.connection.execute("SELECT MAX(rowid) FROM matches").fetchone()
    return bool(state.after < last)


def trio_refresh(competition: Competition) -> None:
    trio.run(competition.refresh_board)  # the leaderboard's ranks choose the charts' versions


if __name__ == "__main__":
    main()
