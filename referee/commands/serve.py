"""``newmarket serve``: run a competition server, or manage one from the organiser's shell.

    newmarket serve COMPETITION.toml [--jobs N] [--cluster ADDRESS] [--port P]   run it
    newmarket serve add-participant NAME [-c COMPETITION.toml]   prints the new token
    newmarket serve revoke-sessions NAME [-c COMPETITION.toml]   signs NAME out everywhere
    newmarket serve pause [-c COMPETITION.toml]                  no new tables start
    newmarket serve resume [-c COMPETITION.toml]
    newmarket serve unsuspend VERSION_OR_NAME [-c COMPETITION.toml]   it plays again
    newmarket serve flags [-c COMPETITION.toml]   suspended and flagged versions, with why

The management words write the competition's database directly (a running
server sees a pause within a second), so they work whether or not it runs.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from referee.commands.common import Concurrency
from referee.league.runner import LeagueError
from referee.match.failures import first_instance
from referee.sandbox import SandboxError
from referee.server.busy import is_busy, is_disk_full
from referee.server.competition_db import ADVICE, DATABASE, CompetitionStore, StoreError, Version
from referee.server.competition_file import CompetitionConfig, ConfigError, load_config
from referee.text.printing import printable

ACTIONS = ("add-participant", "revoke-sessions", "pause", "resume", "unsuspend", "flags")
WITH_ARGUMENT = {
    "add-participant": "NAME",
    "revoke-sessions": "NAME",
    "unsuspend": "VERSION_OR_NAME",
}


ServeWords = Annotated[
    list[str],
    typer.Argument(
        help="COMPETITION.toml to run it; or an action: add-participant NAME, "
        "revoke-sessions NAME, pause, resume, unsuspend VERSION_OR_NAME, flags.",
        metavar="COMPETITION.toml | ACTION [ARGUMENT]",
        show_default=False,
    ),
]
CompetitionFile = Annotated[
    Path,
    typer.Option(
        "--competition",
        "-c",
        metavar="FILE",
        help="The competition file for the actions (add-participant, revoke-sessions, "
        "pause, resume, unsuspend, flags).",
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


def serve_command(
    words: ServeWords,
    competition: CompetitionFile = Path("competition.toml"),
    jobs: Concurrency = None,  # default: the file's [server] jobs, or the cluster's threads
    port: ServePort = None,
    cluster: ServeCluster = None,
) -> None:
    """Run a continuous competition: uploads, checks, matches and a live leaderboard."""
    where = ""
    database: Path | None = None
    try:
        if words[0] in ACTIONS:
            _manage(words, competition)
            return
        config = _competition_to_run(words)
        database = config.database
        from referee.server.run import run_server

        where = f" (serving {config.host}:{config.port if port is None else port})"
        run_server(config, jobs=jobs, port=port, cluster=cluster)
    except (ConfigError, StoreError, SandboxError, LeagueError) as error:
        _refused(error)
    except (OSError, sqlite3.DatabaseError, BaseExceptionGroup) as error:
        _stopped(error, database, where)


def _competition_to_run(words: list[str]) -> CompetitionConfig:
    """The one competition file the words name (an action after it is a usage error)."""
    if len(words) > 1 and words[1] in ACTIONS:  # `serve cup.toml pause`, as git would
        action = " ".join(words[1:])
        raise ConfigError(f"serve: the action comes first: newmarket serve {action} -c {words[0]}")
    if len(words) != 1:
        raise ConfigError(f"serve: expected COMPETITION.toml or one of {', '.join(ACTIONS)}")
    return load_config(Path(words[0]))


def _stopped(error: BaseException, database: Path | None, where: str) -> NoReturn:
    """One line for whatever stopped the running server, however deep trio wrapped it."""
    # A refusal (a damaged row met by a loop)...
    refusal = first_instance(error, (ConfigError, StoreError, SandboxError, LeagueError))
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


def _manage(words: list[str], competition: Path) -> None:
    action, rest = words[0], words[1:]
    expected = 1 if action in WITH_ARGUMENT else 0
    if len(rest) != expected:
        usage = f"{action} {WITH_ARGUMENT[action]}" if expected else action
        raise ConfigError(f"serve {action}: usage: newmarket serve {usage} [-c COMPETITION.toml]")
    if not competition.exists():
        raise ConfigError(
            f"{competition}: no such competition file; name yours with -c FILE "
            f"(newmarket serve {' '.join(words)} -c cup.toml)"
        )
    config = load_config(competition)
    store = CompetitionStore.open(config.database)
    try:
        if action == "add-participant":
            participant, token = store.add_participant(rest[0])
            typer.echo(f"participant {participant.name!r} added; its sign-in token:", err=True)
            typer.echo(token)
        elif action == "revoke-sessions":
            who = store.participant_by_name(rest[0])
            if who is None:
                raise StoreError(f"no participant named {rest[0]!r} in {config.database}")
            ended = store.end_sessions(who.id)
            typer.echo(
                f"participant {who.name!r}: {ended} session(s) ended; every browser signed in "
                "as it must sign in again with its token",
                err=True,
            )
        elif action == "unsuspend":
            for version in _suspended(store, rest[0], competition):
                store.unsuspend(version.id, "newmarket serve unsuspend")
                said = f"{version.label} (version {version.id}): admitted again"
                typer.echo(printable(said), err=True)
        elif action == "flags":
            _print_flags(store)
        else:
            store.set_paused(action == "pause")
            typer.echo(f"competition {config.name!r}: {action}d", err=True)
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
        store.close()


def _suspended(store: CompetitionStore, which: str, competition: Path) -> list[Version]:
    """The suspended versions ``which`` names: a version id, or every one of a participant."""
    if which.isdigit():
        found = store.version(int(which))
        if found is None:
            raise ConfigError(f"serve unsuspend: no version {which} in this competition")
        versions = [found]
    else:
        participant = store.participant_by_name(which)
        if participant is None:
            raise ConfigError(
                f"serve unsuspend: {which!r} is neither a version id nor a participant's name"
            )
        versions = store.versions(participant.id)
    suspended = [version for version in versions if version.status == "suspended"]
    if not suspended:
        shown = ", ".join(f"{v.label} {v.status}" for v in versions[-3:]) or "no versions"
        raise ConfigError(
            f"serve unsuspend: nothing of {which!r} is suspended ({shown}); "
            f"newmarket serve flags -c {competition} lists what is"
        )
    return suspended


def _print_flags(store: CompetitionStore) -> None:
    """Every version suspended now, with its evidence, and every flagged version."""
    lines: list[str] = []
    for version in store.versions(status="suspended"):
        lines.append(f"suspended  {version.label} (version {version.id}): {version.detail}")
        for suspension in store.suspensions(version.id)[:1]:
            for entry in suspension["evidence"]:
                lines.append(f"             {entry['match']}: {entry['what']}")
    for flag in store.flags():
        found = store.version(flag["version"])
        label = found.label if found is not None else "?"
        lines.append(f"flagged    {label} (version {flag['version']}): {flag['detail']}")
        faulty = [str(entry["match"]) for entry in flag["evidence"] if entry["faults"]]
        lines.append(f"             matches with faults: {', '.join(faulty)}")
    for line in lines or ["nothing suspended or flagged"]:
        typer.echo(printable(line))
