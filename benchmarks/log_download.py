"""What one match-log download costs the server, and what a flood of them does to its pages.

    .venv/bin/python benchmarks/log_download.py            # 4 matches of 10 hands
    .venv/bin/python benchmarks/log_download.py --hands 30
    .venv/bin/python benchmarks/log_download.py --per-minute 1000   # the flood unlimited

A league of four bundled bots plays one table (4 rotations, ``--hands`` hands
each, no sandbox) with compact match records, as the server keeps them; the
four records are stored as a finished duplicate group of an in-process
competition.  Then, in this process, through the app (httpx over ASGI):

* a download, best of 20 (rebuilding the record into the full log and
  filtering it for an anonymous reader), against the floor: ``GET
  /api/phase``, the cheapest API answer, best of 20 in the same run;
* a match's API answer (``/api/matches/ID``: its replay and fault evidence) at its first
  look, best of 20 over 20 matches never looked at (each kept as a record of its own),
  and at a later look (best of 20);
* a flood: 200 anonymous downloads from one address, 8 at a time, while
  another client asks for ``/api/phase`` in a loop: how many were served
  (the rest 429), and the slowest ``/api/phase`` answer meanwhile, from when the
  reader was ready to ask (its wait for a turn of the event loop included);
* a flood of first looks: 200 ``/api/matches/ID`` from one address, 8 at a time,
  cycling through 100 matches (more than the caches' 64, so each is a first look),
  with ``/api/phase`` asked in a loop meanwhile, as above.

``/proc/loadavg`` is printed: other work on the machine shows in every figure.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402
import trio  # noqa: E402

from referee.server.app import build_app  # noqa: E402
from referee.server.competition import Competition  # noqa: E402
from referee.server.competition_db import CompetitionStore  # noqa: E402
from referee.server.competition_file import load_config  # noqa: E402
from tests.server.inprocess import admitted_group, finished  # noqa: E402

LEAGUE = """[league]
name = "bench"
seed = 1
table_size = 4
hand_limit = {hands}
logs = "logs"
{bots}"""
BOTS = ("random", "lowest", "longest", "tracker")
GROUPS = 32  # duplicate groups of 4 matches kept: pages enough for every first look


def play_table(directory: Path, hands: int) -> list[Path]:
    """One table's four rotations played by ``newmarket league``; their records."""
    bots = "".join(f'[[bots]]\nname = "{b}"\ncommand = "{b}"\n' for b in BOTS)
    (directory / "l.toml").write_text(LEAGUE.format(hands=hands, bots=bots))
    newmarket = [sys.executable, "-m", "referee.cli", "league", "l.toml", "-j", "1"]
    subprocess.run(
        [*newmarket, "--sandbox", "none"], cwd=directory, check=True, capture_output=True
    )
    return sorted((directory / "logs").iterdir())[:4]


def competition_with(directory: Path, records: list[Path], per_minute: int) -> Competition:
    config_path = directory / "cup.toml"
    config_path.write_text(
        '[competition]\nname = "bench"\nhouse_bots = []\n'
        f"[server]\ndownloads_per_minute = {per_minute}\n"
    )
    config = load_config(config_path)
    competition = Competition(config, CompetitionStore.open(config.database))
    group = admitted_group(competition.store, BOTS)
    for index in range(GROUPS):
        if index:
            group = competition.store.plan_group(5, group.versions, "bench")
        for rotation, record in enumerate(records):
            kept = directory / f"g{group.id}r{rotation}{''.join(record.suffixes)}"
            shutil.copy(record, kept)
            result = finished(f"g{group.id}r{rotation}", 5, len(BOTS))
            competition.store.record(group, rotation, group.versions, result, kept, identity=5)
    return competition


async def best(ask: Callable[[], Awaitable[httpx.Response]], runs: int = 20) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        answer = await ask()
        times.append(time.perf_counter() - start)
        assert answer.status_code == 200, answer.text
    return min(times)


async def measure(competition: Competition) -> None:
    app = build_app(competition)

    def client(address: str) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=app, client=(address, 1))
        return httpx.AsyncClient(transport=transport, base_url="http://bench")

    async with (
        client("198.51.100.1") as flooder,
        client("198.51.100.2") as reader,
        client("198.51.100.3") as looker,
    ):
        # Each timed request from a client and address of its own: the per-address limit
        # is not hit, and the floor and the download pay the same for their client.
        counter = iter(range(1, 60_000))

        async def fresh(path: str) -> httpx.Response:
            number = next(counter)
            async with client(f"10.0.{number // 250}.{number % 250}") as one:
                return await one.get(path)

        floor = await best(lambda: fresh("/api/phase"))
        download = await best(lambda: fresh("/api/matches/g1r0/log"))

        # Matches 2 to 21 (groups 2 to 6) for the first looks, 25 to 124 for the flood:
        # none looked at before.
        unseen = iter(f"g{1 + n // 4}r{n % 4}" for n in range(4, 4 * GROUPS))
        page = await best(lambda: fresh(f"/api/matches/{next(unseen)}"))
        await fresh("/api/matches/g1r0")  # made: what a later look costs
        cached = await best(lambda: fresh("/api/matches/g1r0"))
        for _ in range(3):
            next(unseen)
        cycled = [next(unseen) for _ in range(100)]
        downloads = await flood(flooder, reader, ["/api/matches/g1r0/log"] * 200)
        looks = await flood(looker, reader, [f"/api/matches/{m}" for m in cycled * 2])
    print(f"floor: GET /api/phase          {floor * 1000:8.2f} ms   1.0")
    print(f"one log download (anonymous)  {download * 1000:8.2f} ms   {download / floor:.1f}")
    print(f"a match's API answer, uncached {page * 1000:8.2f} ms   {page / floor:.1f}")
    print(f"a match's API answer, cached   {cached * 1000:8.2f} ms   {cached / floor:.1f}")
    for what, (served, slowest, phases, took) in (
        ("downloads", downloads),
        ("first looks", looks),
    ):
        print(
            f"flood of 200 {what} from one address: {served} served (the rest 429) in {took:.2f} s,"
        )
        print(f"  {phases} GET /api/phase meanwhile, the slowest {slowest * 1000:.2f} ms")


async def flood(
    flooder: httpx.AsyncClient, reader: httpx.AsyncClient, paths: list[str]
) -> tuple[int, float, int, float]:
    """``paths`` asked by ``flooder``, 8 at a time, while ``reader`` asks for ``/api/phase``
    in a loop: how many were served, the slowest ``/api/phase`` meanwhile (seconds), how
    many ``/api/phase`` were answered meanwhile, and the flood's time (seconds)."""
    served = phases = 0
    slowest = 0.0
    began = time.perf_counter()
    done = trio.Event()

    async def ask_all() -> None:
        async with trio.open_nursery() as nursery:
            limiter = trio.Semaphore(8)

            async def one(path: str) -> None:
                nonlocal served
                async with limiter:
                    answer = await flooder.get(path)
                    served += answer.status_code == 200

            for path in paths:
                nursery.start_soon(one, path)
        done.set()

    async def read() -> None:
        nonlocal slowest, phases
        while not done.is_set():
            # From when the reader is ready to ask to its answer: the turn it waits for
            # (a page made in the event loop runs between two of its requests) and the answer.
            start = time.perf_counter()
            await trio.sleep(0)
            await reader.get("/api/phase")
            slowest = max(slowest, time.perf_counter() - start)
            phases += 1

    async with trio.open_nursery() as nursery:
        nursery.start_soon(ask_all)
        nursery.start_soon(read)
    return served, slowest, phases, time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=10)
    parser.add_argument(
        "--per-minute", type=int, default=30, help="[server] downloads_per_minute (30)"
    )
    arguments = parser.parse_args()
    hands = arguments.hands
    print("load average:", Path("/proc/loadavg").read_text().split()[:3])
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        records = play_table(directory, hands)
        size = sum(record.stat().st_size for record in records) / len(records)
        print(f"4 matches of {hands} hands, {size:.0f} bytes kept a match")
        competition = competition_with(directory, records, arguments.per_minute)
        try:
            trio.run(measure, competition)
        finally:
            competition.store.close()
    print("load average:", Path("/proc/loadavg").read_text().split()[:3])


if __name__ == "__main__":
    main()
