"""``newmarket serve COMPETITION.toml``: the web server, admission and the tables on one loop.

hypercorn's trio worker serves the app on the same trio loop as the
background loops (``referee.server.play``), so a page reads the live state
directly.  SIGINT or SIGTERM stops it cleanly: the web server finishes its
requests, the tables' worker processes end their bots, and the match in
progress on each table is dropped (it is replayed after the restart, as
after a ``kill -9``).
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable

import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve as hypercorn_serve

from referee.server.app import build_app
from referee.server.competition import Competition
from referee.server.config import CompetitionConfig
from referee.server.play import GroupQueue, admission_loop, board_loop, table_loop
from referee.server.sandboxing import competition_sandbox
from referee.server.store import CompetitionStore


def run_server(
    config: CompetitionConfig,
    *,
    jobs: int | None = None,
    port: int | None = None,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    trio.run(serve_competition, config, jobs, port, on_ready)


async def serve_competition(
    config: CompetitionConfig,
    jobs: int | None,
    port: int | None,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    sandbox = competition_sandbox(config)  # a level this machine cannot give fails here
    store = CompetitionStore.open(config.database)
    competition = Competition(config, store)
    competition.ensure_house_bots(config.house_bots)
    hyper = HypercornConfig()
    hyper.bind = [f"{config.host}:{config.port if port is None else port}"]
    hyper.accesslog = None
    hyper.errorlog = "-"
    hyper.graceful_timeout = 3.0
    stop = trio.Event()
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_watch_signals, stop)
            binds = await nursery.start(
                lambda task_status: hypercorn_serve(
                    build_app(competition),  # type: ignore[arg-type]
                    hyper,
                    shutdown_trigger=stop.wait,
                    task_status=task_status,
                )
            )
            address = binds[0] if binds else ""
            print(
                f"newmarket serve: {config.name!r} at {address} ({sandbox.level} sandbox)",
                file=sys.stderr,
                flush=True,
            )
            if on_ready is not None:
                on_ready(address)
            work = trio.CancelScope()
            nursery.start_soon(_background, competition, jobs or config.jobs, work)
            await stop.wait()
            work.cancel()
    finally:
        store.close()


async def _background(competition: Competition, jobs: int, scope: trio.CancelScope) -> None:
    with scope:
        queue = GroupQueue(competition)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(board_loop, competition)
            nursery.start_soon(admission_loop, competition)
            for number in range(1, jobs + 1):
                nursery.start_soon(table_loop, competition, queue, number)


async def _watch_signals(stop: trio.Event) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _signal in signals:
            stop.set()
            return
