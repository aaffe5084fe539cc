"""``newmarket league``: play a league from a TOML file, resumably, and print its standings.

    newmarket league examples/league.toml --concurrency 2

Everything is checked before any bot starts (the file, the schedule, the
database), and each mistake is one line on stderr with exit code 2.  Then
the league runs with a progress bar on stderr; the standings go to stdout
(a table, ``--json`` or ``--csv``).  Ctrl-C stops it cleanly with exit code
130: finished matches are kept, and the same command resumes.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Annotated

import msgspec
import trio
import typer

from referee.commands.common import AllColumns, Concurrency, Verbose, fail, sandbox_note
from referee.league.deals import deal_note
from referee.league.league_db import LeagueStore, StoreError
from referee.league.league_file import ConfigError, LeagueConfig, load_config
from referee.league.preflight import PreflightError, check_league_paths
from referee.league.progress import RichReporter
from referee.league.runner import LeagueRun, run_league
from referee.league.schedule import ScheduleError, draw_league_seed
from referee.league.standings import Standings, standings_of
from referee.match.dealkey import DealKey
from referee.match.failures import first_instance
from referee.sandbox import LEVELS, Sandbox, SandboxError, resolve, setting_to_env
from referee.tables.job import TableError
from referee.tables.local_pool import BOT_PROCESSES
from referee.text.printing import print_whole


def default_db(config_path: Path) -> Path:
    """``leagues/spring.toml`` keeps its results in ``leagues/spring.db``."""
    return config_path.with_suffix(".db")


def check_schedule(config: LeagueConfig, seed: int) -> None:
    """Build the schedule once before anything starts, so its errors are config errors."""
    from referee.league.runner import round_robin_jobs

    if config.format != "round_robin":
        return
    try:
        # Only the schedule's shape is checked: the deals' key plays no part in it.
        round_robin_jobs(config, seed, DealKey.public())
    except ScheduleError as error:
        key, _, problem = str(error).partition(": ")
        raise ConfigError(f"{config.path}: schedule.{key}: {problem}") from None


def open_store(config: LeagueConfig, db: Path, drawn_seed: int | None = None) -> LeagueStore:
    return LeagueStore.for_league(db, config, drawn_seed)


def cards_note(config: LeagueConfig, store: LeagueStore) -> str | None:
    """One line at the start of a league whose cards anyone could know: public deals."""
    if config.public_deals:
        return (
            f"deals: public, as the league file asks: anyone who knows the seed "
            f"({config.seed}) knows every card of every match"
        )
    if store.legacy_public_deals:
        return (
            f"deals: public: {store.path} was made before deals came from a secret key, "
            "and keeps its deals to the end (anyone who knows its seed knows every card)"
        )
    return None


def one_format(as_json: bool, as_csv: bool) -> None:
    """``--json`` and ``--csv`` together would print one and drop the other without a word."""
    if as_json and as_csv:
        raise fail("--json and --csv: give one (the standings are printed once)")


def print_standings(
    standings: Standings, *, as_json: bool, as_csv: bool, all_columns: bool = False
) -> None:
    if as_json:
        import json

        sys.stdout.write(json.dumps(standings.to_json()) + "\n")
    elif as_csv:
        sys.stdout.write(standings.to_csv())
    else:  # a file or a pipe gets every column, uncut
        print_whole(standings.table(all_columns=all_columns))


def _cluster_refused(error: Exception) -> bool:
    """The cluster cannot play this league (unreachable, a bot missing on a worker)."""
    from referee.tables.dask_pool import ClusterError

    return isinstance(error, ClusterError)


def with_listen_address(config: LeagueConfig, host: str | None, port: int | None) -> LeagueConfig:
    """The league with ``--host`` / ``--port`` (where remote bots connect) applied."""
    remote = config.remote
    if host is not None:
        remote = msgspec.structs.replace(remote, host=host)
    if port is not None:
        remote = msgspec.structs.replace(remote, port=port)
    return dataclasses.replace(config, remote=remote)


LeagueFile = Annotated[Path, typer.Argument(metavar="LEAGUE.toml", help="The league's TOML file.")]
DatabaseFile = Annotated[
    Path | None,
    typer.Option(
        metavar="FILE", help="The results database (default: the TOML file's name with .db)."
    ),
]
ClusterAddress = Annotated[
    str | None,
    typer.Option(
        metavar="ADDRESS",
        help="Play the matches on a Dask cluster: a scheduler's address "
        "(tcp://HOST:8786) or local:N for N worker processes here. See docs/cluster.md.",
    ),
]
StandingsJson = Annotated[bool, typer.Option("--json", help="Print the standings as JSON.")]
StandingsCsv = Annotated[bool, typer.Option("--csv", help="Print the standings as CSV.")]
LeagueSandbox = Annotated[
    str | None,
    typer.Option(
        "--sandbox",
        metavar="LEVEL",
        help=f"Limits and isolation for the bots: {', '.join(LEVELS)} "
        "(default: the file's [sandbox] level, else auto; see docs/hardening.md).",
    ),
]
BotProcesses = Annotated[
    int,
    typer.Option(
        metavar="N",
        min=1,
        help="Bot processes each table runs at once, at most: each holds its bot's "
        "memory; fewer than the bots restarts bots more often (see docs/leagues.md).",
    ),
]
ListenHost = Annotated[
    str | None,
    typer.Option(
        metavar="HOST", help="Remote bots connect to this address (default: [remote] host)."
    ),
]
ListenPort = Annotated[
    int | None,
    typer.Option(
        metavar="PORT", help="Remote bots connect to this port (default: [remote] port).", min=0
    ),
]


CompetitionFile = Annotated[
    Path | None,
    typer.Option(
        "--competition",
        metavar="FILE",
        help="Play as this competition's server does: its rules, seats per table, time "
        "control and sandbox replace the league file's (docs/leagues.md).",
    ),
]


def league_command(
    league_file: LeagueFile,
    db: DatabaseFile = None,
    jobs: Concurrency = None,
    cluster: ClusterAddress = None,
    as_json: StandingsJson = False,
    as_csv: StandingsCsv = False,
    all_columns: AllColumns = False,
    sandbox_level: LeagueSandbox = None,
    host: ListenHost = None,
    port: ListenPort = None,
    bot_processes: BotProcesses = BOT_PROCESSES,
    verbose: Verbose = False,
    competition: CompetitionFile = None,
) -> None:
    """Play a league (round robin or bankroll) and print its rated standings; resumable.

    --concurrency defaults to the number of cores here.  Off a terminal, progress is a
    plain line per finished match on stderr; the standings go to stdout.
    """
    db_path = db if db is not None else default_db(league_file)
    one_format(as_json, as_csv)
    if cluster is not None and jobs is not None:
        typer.echo(
            "error: --concurrency/--jobs and --cluster: give one (local:N sets the workers)",
            err=True,
        )
        raise typer.Exit(code=2)
    try:
        config, level, sandbox, store = prepare_league(
            league_file, db_path, sandbox_level, host, port, competition
        )
    except (ConfigError, StoreError, PreflightError) as error:
        raise fail(f"{error}") from None
    announce(config, store, sandbox_note(sandbox, verbose))
    # Every table worker (here or on a Dask worker) resolves it where its bots run.
    setting = setting_to_env(level, config.sandbox_limits)
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    with store:
        run = play_league(config, store, db_path, workers, cluster, setting, bot_processes)
        try:
            standings = standings_of(store)
        except StoreError as error:
            typer.echo(f"error: {error}", err=True)
            raise typer.Exit(code=1) from None
    finish(run, standings, db_path, as_json=as_json, as_csv=as_csv, all_columns=all_columns)


def prepare_league(
    league_file: Path,
    db_path: Path,
    sandbox_level: str | None,
    host: str | None,
    port: int | None,
    competition: Path | None = None,
) -> tuple[LeagueConfig, str, Sandbox, LeagueStore]:
    """Everything checked before any bot starts: the file, its schedule, the sandbox, the paths.

    Returns the league (with ``--host``/``--port`` applied), the sandbox level and its
    setting, and the opened database.
    """
    config = load_config(league_file)
    if competition is not None:
        if sandbox_level is not None:
            raise ConfigError("--sandbox and --competition: the competition's [sandbox] is used")
        from referee.commands.league_competition import as_on_server, competition_note

        config, server = as_on_server(config, competition)
        typer.echo(competition_note(server), err=True)
    # A file without a seed gets one drawn now; a new database keeps it, an old one
    # has its own (drawn the same way: any seed checks the schedule's shape).
    drawn = config.seed if config.seed is not None else draw_league_seed()
    check_schedule(config, drawn)
    config = with_listen_address(config, host, port)
    level = sandbox_level if sandbox_level is not None else config.sandbox_level
    try:
        sandbox = resolve(level, config.sandbox_limits)
    except SandboxError as error:
        raise ConfigError(f"--sandbox: {error}") from None
    # Before any bot starts: the database's and the logs' places can be written.
    check_league_paths(db_path, config.log_dir(db_path))
    store = open_store(config, db_path, drawn)
    return config, level, sandbox, store


def announce(config: LeagueConfig, store: LeagueStore, sandbox: str) -> None:
    """What is about to happen, on stderr: the sandbox, and how the deals are made."""
    typer.echo(sandbox, err=True)
    if (deals := deal_note(config)) is not None:
        typer.echo(deals, err=True)
    if (cards := cards_note(config, store)) is not None:
        typer.echo(cards, err=True)


def play_league(
    config: LeagueConfig,
    store: LeagueStore,
    db_path: Path,
    workers: int,
    cluster: str | None,
    sandbox: str,
    bot_processes: int = BOT_PROCESSES,
) -> LeagueRun:
    """Run the league with a progress bar; the referee's own failure exits (2 or 1)."""
    reporter = RichReporter()
    try:
        run: LeagueRun = trio.run(
            lambda: run_league(
                config,
                store,
                jobs=workers,
                reporter=reporter,
                logs=config.log_dir(db_path),
                cluster=cluster,
                sandbox=sandbox,
                bot_processes=bot_processes,
            )
        )
    except (OSError, TableError, StoreError, BaseExceptionGroup) as error:
        # The referee itself failed (a log that cannot be written); nurseries wrap it.
        cause = first_instance(error, (OSError, TableError, StoreError))
        if cause is None:
            raise
        reporter.end()
        if cluster is not None and _cluster_refused(cause):
            for line in str(cause).splitlines():  # one line per worker and bot
                typer.echo(f"error: {line}", err=True)
            raise typer.Exit(code=2) from None
        typer.echo(
            f"error: {cause}; finished matches are kept in {db_path}; "
            "run the same command to resume once this is fixed",
            err=True,
        )
        raise typer.Exit(code=1) from None
    return run


def finish(
    run: LeagueRun,
    standings: Standings,
    db_path: Path,
    *,
    as_json: bool,
    as_csv: bool,
    all_columns: bool = False,
) -> None:
    """The standings on stdout, between what stopped the league and what it left unplayed."""
    if run.stopped:
        typer.echo(
            f"stopped: {run.done} matches are finished and kept in {db_path}; "
            "run the same command to resume",
            err=True,
        )
    print_standings(standings, as_json=as_json, as_csv=as_csv, all_columns=all_columns)
    if run.stopped:
        raise typer.Exit(code=130)
    if run.abandoned:  # each was named as it happened; the summary is the last line
        typer.echo(
            f"error: {len(run.abandoned)} matches left unplayed (their table worker kept "
            f"dying, see above); the others are kept in {db_path}; run the same command "
            "to try them again",
            err=True,
        )
        raise typer.Exit(code=1)
