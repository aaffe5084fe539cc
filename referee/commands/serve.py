"""``newmarket serve``: run a competition server, or manage one from the organiser's shell.

    newmarket serve COMPETITION.toml [--jobs N] [--cluster ADDRESS] [--port P]   run it
    newmarket serve ACTION [ARGUMENT] COMPETITION.toml                          manage it

The management words (add-participant, pause, flags, ...) live in
:mod:`referee.commands.serve_actions`; ``-c COMPETITION.toml`` after them is the
older spelling and still works.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from referee.commands.common import Concurrency, deprecated
from referee.commands.serve_actions import ACTIONS, ManagementCall
from referee.match.failures import first_instance
from referee.sandbox import SandboxError
from referee.server.busy import is_busy, is_disk_full
from referee.server.competition_db import ADVICE, DATABASE, CompetitionStore, StoreError
from referee.server.competition_file import CompetitionConfig, ConfigError, load_config
from referee.server.operations import FORMATS, Format, set_operations_log
from referee.tables.job import TableError

ServeWords = Annotated[
    list[str],
    typer.Argument(
        help="COMPETITION.toml to run it; or ACTION [ARGUMENT] COMPETITION.toml to manage it "
        "(the actions are listed below).",
        metavar="COMPETITION.toml | ACTION [ARGUMENT] COMPETITION.toml",
        show_default=False,
    ),
]
CompetitionFile = Annotated[
    Path | None,
    typer.Option(
        "--competition",
        "-c",
        metavar="FILE",
        help="The competition file for an action, when not given after it "
        "(default: competition.toml).",
        show_default=False,
    ),
]
ServePort = Annotated[
    int | None,
    typer.Option(
        "--port", metavar="PORT", min=0, max=65535, help="Port (default: the file's; 0: any)."
    ),
]
ServeCluster = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        metavar="ADDRESS",
        help="Play the tables on a Dask cluster: a scheduler's address (tcp://HOST:8786) "
        "or local:N for N worker processes here; --jobs is then the tables at once "
        "(default: the cluster's worker threads). See docs/server.md.",
        show_default=False,
    ),
]
ServeLogFormat = Annotated[
    str,
    typer.Option(
        "--log-format",
        metavar="FORMAT",
        help="The operations log on stderr: human (default) or json (one object a line). "
        "DATA/operations.log always gets JSON lines. See docs/server.md.",
    ),
]


def serve_command(
    words: ServeWords,
    competition: CompetitionFile = None,
    jobs: Concurrency = None,  # default: the file's [server] jobs, or the cluster's threads
    port: ServePort = None,
    cluster: ServeCluster = None,
    log_format: ServeLogFormat = "human",
) -> None:
    """Run a continuous competition: uploads, checks, matches and a live leaderboard."""
    where = ""
    database: Path | None = None
    try:
        if words[0] in ACTIONS:
            _manage(words, competition)
            return
        config = _competition_to_run(words)
        if log_format not in FORMATS:
            raise ConfigError(f"serve: --log-format {log_format!r}: expected human or json")
        database = config.database
        from referee.server.run import run_server

        where = f" (serving {config.host}:{config.port if port is None else port})"
        fmt: Format = "json" if log_format == "json" else "human"
        run_server(config, jobs=jobs, port=port, cluster=cluster, log_format=fmt)
    except (ConfigError, StoreError, SandboxError, TableError) as error:
        _refused(error)
    except (OSError, sqlite3.DatabaseError, BaseExceptionGroup) as error:
        _stopped(error, database, where)


def _competition_to_run(words: list[str]) -> CompetitionConfig:
    """The one competition file the words name (an action after it is a usage error)."""
    if len(words) > 1 and words[1] in ACTIONS:  # `serve cup.toml pause`, as git would
        action = " ".join(words[1:])
        raise ConfigError(f"serve: the action comes first: newmarket serve {action} {words[0]}")
    if len(words) != 1:
        raise ConfigError(f"serve: expected COMPETITION.toml or one of {', '.join(ACTIONS)}")
    return load_config(Path(words[0]))


def _stopped(error: BaseException, database: Path | None, where: str) -> NoReturn:
    """One line for whatever stopped the running server, however deep trio wrapped it."""
    # A refusal (a damaged row met by a loop)...
    refusal = first_instance(error, (ConfigError, StoreError, SandboxError, TableError))
    if refusal is not None:
        _refused(refusal)
    # ...SQLite's own error on a file that went bad while the server ran...
    damaged = first_instance(error, sqlite3.DatabaseError)
    if damaged is not None:
        typer.echo(f"error: {database}: damaged {DATABASE}: {damaged} ({ADVICE})", err=True)
        raise typer.Exit(2) from None
    # ...or the port is taken, the data directory cannot be written: one line.
    failure = first_instance(error, OSError)
    if failure is None:
        raise error
    typer.echo(f"error: {failure.strerror or failure}{where}", err=True)
    raise typer.Exit(1) from None


def _refused(error: Exception) -> NoReturn:
    for line in str(error).splitlines():  # a cluster's refusal: a line per worker
        typer.echo(f"error: {line}", err=True)
    raise typer.Exit(2) from None


def _manage(words: list[str], competition: Path | None) -> None:
    chosen = ACTIONS[words[0]]
    arguments, rest = words[1 : 1 + len(chosen.arguments)], words[1 + len(chosen.arguments) :]
    usage = f"usage: newmarket serve {chosen.usage} COMPETITION.toml"
    if len(arguments) != len(chosen.arguments) or len(rest) > 1:
        raise ConfigError(f"serve {chosen.name}: {usage}")
    if rest and competition is not None and Path(rest[0]) != competition:
        raise ConfigError(
            f"serve {chosen.name}: two competition files ({rest[0]}, -c {competition})"
        )
    file = Path(rest[0]) if rest else competition or Path("competition.toml")
    if competition is not None and not rest:
        said = " ".join(["newmarket serve", chosen.name, *arguments])
        deprecated(f"{said} -c {competition}", f"{said} {competition}")
    if not file.exists():
        raise ConfigError(
            f"{file}: no such competition file; name yours after the action "
            f"(newmarket serve {' '.join([chosen.name, *arguments])} cup.toml)"
        )
    config = load_config(file)
    store = CompetitionStore.open(config.database)
    # The running server's operations log is a file in the data directory: a word typed here
    # adds its line there (the command's own output already tells the organiser).
    previous = set_operations_log(config.operations_log(stream=None))
    try:
        chosen.run(ManagementCall(store, config, tuple(arguments)))
    except sqlite3.DatabaseError as error:
        # The server (or sqlite3) held the database for longer than the busy timeout.
        if not (is_busy(error) or is_disk_full(error)):
            raise StoreError(
                f"{config.database}: cannot write the {DATABASE}: {error}; nothing was changed"
            ) from None
        raise StoreError(
            f"{config.database}: {error} (the server, or sqlite3 with a transaction "
            f"open, holds it?); nothing was changed: try again"
        ) from None
    finally:
        set_operations_log(previous)
        store.close()
