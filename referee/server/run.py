"""``newmarket serve COMPETITION.toml``: the web server, admission and the tables on one loop.

hypercorn's trio worker serves the app on the same trio loop as the
background loops (``referee.server.play``), so a page reads the live state
directly.  SIGINT or SIGTERM stops it cleanly: the web server finishes its
requests, the tables' worker processes end their bots, and the match in
progress on each table is dropped (it is replayed after the restart, as
after a ``kill -9``).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial

import trio
from hypercorn.config import Config as HypercornConfig

from referee.server.app import build_app
from referee.server.busy import SERVING_LOCK_WAIT, written
from referee.server.challenges import challenge_loop
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore, lock_for_serving
from referee.server.competition_file import CompetitionConfig
from referee.server.finals import finals_loop
from referee.server.listener import ConnectionGuard, raise_descriptor_limit, serve_http
from referee.server.operations import Format, log_operation, set_operations_log
from referee.server.organiser_auth import first_organiser_token
from referee.server.phase_events import phase_loop
from referee.server.play import (
    GroupQueue,
    OpenTable,
    Table,
    admission_loop,
    board_loop,
    local_tables,
    table_loop,
)
from referee.server.remote import CompetitionLobby, remote_table_loop
from referee.server.retention import Retention, retention_loop
from referee.server.sandboxing import competition_sandbox
from referee.server.uploads import clear_incoming, incoming_dir
from referee.server.webhook import webhook_loop


def run_server(
    config: CompetitionConfig,
    *,
    jobs: int | None = None,
    port: int | None = None,
    cluster: str | None = None,
    on_ready: Callable[[str], None] | None = None,
    log_format: Format = "human",
) -> None:
    # The operations log first: every line from here on (and a management command's, in the
    # same file) is one place to read what happened (referee.server.operations).
    previous = set_operations_log(config.operations_log(log_format))
    try:
        trio.run(serve_competition, config, jobs, port, cluster, on_ready)
    finally:
        set_operations_log(previous)


async def serve_competition(
    config: CompetitionConfig,
    jobs: int | None,
    port: int | None,
    cluster: str | None = None,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    # First: a second server on this competition is one line, and nothing started.
    lock = lock_for_serving(config.database)
    try:
        sandbox = competition_sandbox(config)  # a level this machine cannot give fails here
        # Only now, holding the lock: a second server refused above must not delete the
        # uploads the running one is receiving.
        leftovers = clear_incoming(config)
        if leftovers:
            print(
                f"newmarket serve: removed {leftovers} temporary upload file(s) that an "
                f"earlier stop cut short, from {incoming_dir(config)}",
                file=sys.stderr,
                flush=True,
            )
        async with _tables(config, cluster, jobs) as (open_table, tables, where):
            await _serve(config, sandbox.level, open_table, tables, where, port, on_ready)
    finally:
        os.close(lock)


@asynccontextmanager
async def _tables(
    config: CompetitionConfig, cluster: str | None, jobs: int | None
) -> AsyncIterator[tuple[OpenTable | None, int, str]]:
    """How tables are opened, how many play at once, and where (for the ready line).

    With ``--cluster`` the cluster is reached (or ``local:N`` started) before the
    web side listens, so an unreachable scheduler is one line and exit 2.
    """
    if cluster is None:
        yield None, jobs or config.jobs, "here"
        return
    from referee.server.cluster import ClusterTable, ClusterTables

    tables = ClusterTables(cluster, config)
    try:
        await tables.start()

        async def open_table(_number: int) -> Table:
            return ClusterTable(tables)

        count = jobs or tables.threads()
        yield open_table, count, f"on the Dask cluster {cluster}"
    finally:
        await tables.aclose()


async def _serve(
    config: CompetitionConfig,
    sandbox_level: str,
    open_table: OpenTable | None,
    jobs: int,
    where: str,
    port: int | None,
    on_ready: Callable[[str], None] | None,
) -> None:
    competition = await _open_competition(config)
    store = competition.store
    # Every descriptor the machine allows, and a reserve of them no client can take: the
    # database, the tables' pipes and a version's check must always find one.
    guard = ConnectionGuard(config.clients.connections_per_address, raise_descriptor_limit())
    hyper = _hypercorn_config(config, port)
    stop = trio.Event()
    listening = ""
    listeners: list[trio.SocketListener] = []
    lobby: CompetitionLobby | None = None
    started = False
    try:
        if config.remote is not None:
            # Before the web side: a port that is taken is one line, and nothing started.
            lobby, listeners, listening = await _open_lobby(
                competition, config.remote.host, config.remote.port
            )
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_watch_signals, stop)
            app = build_app(competition)
            web = partial(serve_http, app, hyper, config.clients, guard, shutdown_trigger=stop.wait)
            binds = await nursery.start(web)
            address = binds[0] if binds else ""
            print(
                f"newmarket serve: {config.name!r} at {address} ({sandbox_level} sandbox, "
                f"{jobs} tables {where}{listening})",
                file=sys.stderr,
                flush=True,
            )
            log_operation(
                "start",
                competition=config.name,
                address=address,
                tables=jobs,
                sandbox=sandbox_level,
                remote=listening.removeprefix(", remote bots on ") or None,
            )
            started = True
            if on_ready is not None:
                on_ready(address)
            work = trio.CancelScope()
            tables = open_table or local_tables(competition)
            nursery.start_soon(_background, competition, jobs, tables, lobby, listeners, work)
            await stop.wait()
            work.cancel()
    except BaseException as error:
        if started:  # a start refused before it listened has no stop
            log_operation("stop", why=f"{type(error).__name__}: {error}"[:300])
        raise
    else:
        log_operation("stop", why="signal")
    finally:
        if lobby is not None:
            await lobby.aclose()
        competition.close()
        store.close()


async def _open_competition(config: CompetitionConfig) -> Competition:
    """The competition on its database, with its house bots, waiting for locks as it serves."""
    store = CompetitionStore.open(config.database)
    competition = Competition(config, store)
    # Waited for, as every write of the server: a management command may hold the database.
    await written(
        "adding the house bots", partial(competition.ensure_house_bots, config.house_bots)
    )
    store.wait_for_locks(SERVING_LOCK_WAIT)
    # A competition's first start makes the organiser's token, said once to the organiser.
    token = await written("making the organiser's token", partial(first_organiser_token, store))
    if token is not None:
        print(
            f"newmarket serve: the organiser's token (sign in with it at /signin for "
            f"/organiser; shown once, `newmarket serve organiser-token` makes a new one): {token}",
            file=sys.stderr,
            flush=True,
        )
    return competition


def _hypercorn_config(config: CompetitionConfig, port: int | None) -> HypercornConfig:
    hyper = HypercornConfig()
    hyper.bind = [f"{config.host}:{config.port if port is None else port}"]
    hyper.accesslog = None
    hyper.errorlog = "-"
    hyper.graceful_timeout = 3.0
    return hyper


async def _open_lobby(
    competition: Competition, host: str, port: int
) -> tuple[CompetitionLobby, list[trio.SocketListener], str]:
    """The remote bots' lobby, listening; its listeners, and where it is for the ready line."""
    lobby = competition.lobby = CompetitionLobby(competition)
    listeners = await lobby.listen(host, port)
    bound_host, bound_port = lobby.address or ("", 0)
    return lobby, listeners, f", remote bots on {bound_host}:{bound_port}"


async def _background(
    competition: Competition,
    jobs: int,
    open_table: OpenTable,
    lobby: CompetitionLobby | None,
    listeners: list[trio.SocketListener],
    scope: trio.CancelScope,
) -> None:
    with scope:
        queue = GroupQueue(competition)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(board_loop, competition)
            nursery.start_soon(admission_loop, competition)
            competition.retention = Retention(competition)
            nursery.start_soon(retention_loop, competition.retention)
            nursery.start_soon(webhook_loop, competition)
            nursery.start_soon(phase_loop, competition)  # each phase told once, to everyone
            for number in range(1, jobs + 1):
                nursery.start_soon(table_loop, competition, queue, number, open_table)
            if lobby is not None:
                nursery.start_soon(lobby.serve, listeners)
                lobby.start_clock()
                nursery.start_soon(remote_table_loop, competition, queue, lobby, jobs + 1)
            # A contest's own tables (docs/server.md): challenges at once, finals at their date.
            nursery.start_soon(challenge_loop, competition, jobs + 2, open_table)
            nursery.start_soon(finals_loop, competition, jobs + 3, open_table)


async def _watch_signals(stop: trio.Event) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _signal in signals:
            stop.set()
            return
