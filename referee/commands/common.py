"""The flags the commands share, defined once so that their names, defaults and help agree.

``newmarket match``, ``league``, ``sprt``, ``check``, ``simulate`` and
``demo`` all take some of: the rules (``--rules``, ``--option``,
``--hand-limit``), a ``--seed``, the time control (``--move-time``,
``--time-bank``, ``--startup-time``, ``--margin``, ``--max-faults``, with
SPEC.md 12's defaults from ``TimeControl``), ``--sandbox``,
``--concurrency`` (cutechess's name; ``--jobs`` / ``-j`` is the same flag)
and ``--json``.  Each is an ``Annotated`` type here and a command's
signature only names it, so a second spelling or a second default cannot
creep in (docs/cli.md lists them; tests/test_cli_conventions.py checks every
command's ``--help`` against this module).

Also here: the one-line usage error (``UsageError``, ``fail``) and the
pre-check that a bot's program can start (``startable``), which every
command that runs bots makes before any bot starts.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperArgument, TyperCommand

from engine import Rules
from referee.bots import TRANSPORTS, BotSpec, Transport, resolve_bot
from referee.league.preflight import PreflightError, check_writable
from referee.sandbox import DEFAULT_LEVEL, LEVELS, Sandbox, SandboxError, resolve
from referee.sandbox.summary import summary
from referee.settings.rules import RulesChoiceError, RulesPart
from referee.settings.rules import build_rules as rules_of
from referee.transport.process import why_cannot_start
from referee.transport.timecontrol import TimeControl

EXIT_USAGE = 2


class UsageError(ValueError):
    """A bad argument: the message names it."""


def fail(message: str) -> typer.Exit:
    """Print one line on stderr; the caller raises the returned exit (code 2)."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code=EXIT_USAGE)


# ---------------------------------------------------------------- help


class _ArgumentByItsName(TyperArgument):
    """An argument whose help row is its metavar alone (``LOG``, ``COMMAND``)."""

    def display_type_rich(self, ctx: object) -> str | None:
        return None


class NamedValuesCommand(TyperCommand):
    """A command whose help names each value as a user would: by its metavar, no Python type.

    typer (0.20 and later) writes an argument's type beside its name even when it has
    a metavar: ``COMMAND <list[str]>``, ``LOG <path>``.  Each option here has a
    metavar (``--seed N``, ``--db FILE``), which typer shows instead of ``<int>`` or
    ``<path>``; this does the same for the arguments.  ``referee.cli`` registers
    every command with it.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if type(param) is TyperArgument and param.metavar is not None:
                param.__class__ = _ArgumentByItsName  # no state of its own: only the help row


# ---------------------------------------------------------------- the rules and the deal

RulesName = Annotated[
    str, typer.Option("--rules", metavar="NAME", help="The rule preset (see `newmarket rules`).")
]
RuleOptions = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        metavar="KEY=VALUE",
        help="A rule option KEY=VALUE over the preset; repeatable (`newmarket rules`).",
    ),
]
HandLimit = Annotated[
    int | None,
    typer.Option(
        "--hand-limit",
        "--hands",
        metavar="N",
        help="The hand limit of each match (the rule option hand_limit).",
        show_default=False,
    ),
]
Seed = Annotated[
    int | None,
    typer.Option(
        metavar="N",
        help="The seed every random choice derives from, the cards included: whoever knows "
        "it knows every card (default: a fresh one; match and sprt draw a secret one, "
        "which their logs record).",
    ),
]
Players = Annotated[int, typer.Option("--players", metavar="N", help="Seats at the table, 3 to 8.")]
DEFAULT_PLAYERS = 4


def parse_options(pairs: Sequence[str]) -> dict[str, str]:
    """``--option`` values, ``["KEY=VALUE", ...]``, as a dict; ``UsageError`` naming a bad pair."""
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(
                f"--option {pair!r}: expected KEY=VALUE, e.g. lead_suit=change_or_pass"
            )
        options[key.strip()] = value.strip()
    return options


def build_rules(name: str, options: Sequence[str], hands: int | None, players: int) -> Rules:
    """``--rules``, ``--option`` and ``--hand-limit`` for a table of ``players``; ``UsageError``."""
    changes = parse_options(options)
    try:
        rules = rules_of(name, changes, hands)
    except RulesChoiceError as error:
        raise UsageError(f"{FLAG_OF_PART[error.part]}: {error}") from None
    require_players_past_end(
        rules, players, f"--bot: {players} bots", "add bots or set --option end_players=N"
    )
    return rules


# The flag that gave each part of the rules (``referee.settings.rules``).
FLAG_OF_PART: dict[RulesPart, str] = {
    "preset": "--rules",
    "options": "--option",
    "hand_limit": "--hand-limit",
}


def require_players_past_end(rules: Rules, players: int, seated: str, advice: str) -> None:
    """``UsageError`` unless a table of ``players`` seats more than the rules' ``end_players``.

    A match ends when ``end_players`` are left, so a table of that many or fewer could
    never be played. ``seated`` names the option and the count (``"--bot: 3 bots"``);
    ``advice`` says how to mend it from this command.
    """
    if rules.end_players >= players:
        raise UsageError(
            f"{seated}, but the rules end the match at {rules.end_players} players left "
            f"(end_players); {advice}"
        )


# ---------------------------------------------------------------- the time control (SPEC.md 12)

MoveTime = Annotated[
    float, typer.Option("--move-time", metavar="SECONDS", help="Seconds per decision.")
]
TimeBank = Annotated[
    float,
    typer.Option(
        "--time-bank", metavar="SECONDS", help="Extra seconds per bot for the whole of each match."
    ),
]
StartupTime = Annotated[
    float,
    typer.Option(
        "--startup-time", metavar="SECONDS", help="Seconds for a bot to start and say ready."
    ),
]
Margin = Annotated[
    float,
    typer.Option(
        "--margin", metavar="SECONDS", help="Seconds added to every deadline for host jitter."
    ),
]
MaxFaults = Annotated[
    int, typer.Option("--max-faults", metavar="N", help="Faults that disqualify a bot.")
]
DEFAULT_TIME = TimeControl()

# ---------------------------------------------------------------- how bots run

SandboxLevel = Annotated[
    str,
    typer.Option(
        "--sandbox",
        metavar="LEVEL",
        help=f"Limits and isolation for the bots: {', '.join(LEVELS)} (see docs/hardening.md).",
    ),
]
DEFAULT_SANDBOX = DEFAULT_LEVEL
TransportName = Annotated[
    str,
    typer.Option(
        "--transport", metavar="stdio|tcp", help="How bots talk to the referee: stdio or tcp."
    ),
]
Concurrency = Annotated[
    int | None,
    typer.Option(
        "--concurrency",
        "--jobs",
        "-j",
        metavar="N",
        min=1,
        help="Tables played at once (cutechess's -concurrency; --jobs is the same flag).",
        show_default=False,
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]
AsCsv = Annotated[bool, typer.Option("--csv", help="Print the table as CSV on stdout.")]
AllColumns = Annotated[
    bool,
    typer.Option(
        "--all",
        help="Show every column of the standings: places, chips, openskill's rating "
        "(--json and --csv always hold them).",
    ),
]
Verbose = Annotated[
    bool,
    typer.Option(
        "--verbose", "-v", help="Say in full what the sandbox applies and what it cannot."
    ),
]
LogDir = Annotated[
    Path | None,
    typer.Option(
        "--log-dir",
        "--logs",  # the league file's key, and report's old name: the same flag everywhere
        metavar="DIR",
        help="Write every match log into this directory.",
        show_default=False,
    ),
]


def made_log_dir(log_dir: Path | None) -> Path | None:
    """``--log-dir``, made and tried with a write now, or a ``UsageError`` before any bot
    starts (as a league's log directory is, by the same check)."""
    if log_dir is not None:
        try:
            check_writable("--log-dir", log_dir)
        except PreflightError as error:
            raise UsageError(str(error)) from None
    return log_dir


def time_control(
    move_time: float, time_bank: float, startup_time: float, margin: float, max_faults: int
) -> TimeControl:
    """The time control, or a ``UsageError`` naming the flag that is out of range."""
    try:
        return TimeControl(move_time, time_bank, startup_time, margin, max_faults)
    except ValueError as error:
        field, _, reason = str(error).partition(": ")
        raise UsageError(f"--{field.replace('_', '-')}: {reason}") from None


def sandbox_of(level: str) -> Sandbox:
    try:
        return resolve(level)
    except SandboxError as error:
        raise UsageError(f"--sandbox: {error}") from None


def sandbox_note(sandbox: Sandbox, verbose: bool) -> str:
    """The line a command that runs bots starts with: the short one, or with ``-v`` every
    protection and every reason one is missing (as the match log's header records them)."""
    return sandbox.describe() if verbose else summary(sandbox)


def transport_of(transport: str) -> Transport:
    if transport not in TRANSPORTS:
        raise UsageError(f"--transport: {transport!r} is not stdio or tcp")
    return "tcp" if transport == "tcp" else "stdio"


# A seat's name before ``=``: a word, so that a command line is never mistaken for one
# (``./bot --x=1`` has a space or a slash before its ``=``).
_NAMED = re.compile(r"^(?P<name>[A-Za-z0-9_][A-Za-z0-9_.#+-]*)=(?P<command>\S.*)$", re.DOTALL)


def bot_of(
    text: str, flag: str, transport: Transport = "stdio", directory: Path | None = None
) -> BotSpec:
    """``--bot`` text: a bundled name, a command line, or ``NAME=COMMAND`` to name the seat;
    run in ``directory`` (its own, shown whole by the sandbox) if one is given."""
    name: str | None = None
    named = _NAMED.match(text.strip())
    if named is not None:
        name, text = named["name"], named["command"]
    try:
        spec = resolve_bot(text, name, transport=transport)
    except ValueError as error:
        raise UsageError(f"{flag}: {error}") from None
    if directory is not None:
        spec = dataclasses.replace(spec, cwd=directory.resolve())
    return startable(spec, flag)


def startable(spec: BotSpec, flag: str) -> BotSpec:
    """``spec`` if its program can start here; else a ``UsageError`` saying why (one line).

    A program that does not exist, is not executable or names a missing
    script is the command line's mistake, found before any bot starts (as a
    league file's is), not a disqualified seat in a match played to its end.
    """
    if spec.unavailable is not None:
        raise UsageError(f"{flag}: {spec.unavailable}")
    if not spec.command:
        return spec  # a remote bot: nothing to start here
    why = why_not_startable(spec.command, spec.cwd or Path.cwd(), spec.env)
    if why is not None:
        raise UsageError(f"{flag}: {why}")
    return spec


INTERPRETERS = {".py": "python3", ".js": "node", ".sh": "bash"}


def why_not_startable(
    command: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None
) -> str | None:
    """``why_cannot_start``, with what to type instead for a bot writer's usual slips.

    ``--bot mybot.py`` looks ``mybot.py`` up on PATH, not in the current
    directory, as a shell does: the message says so and gives the command line
    that runs it.  A directory is named as one, not as a program that does not exist.
    """
    why = why_cannot_start(command, cwd, env or {})
    if why is None:
        return None
    program = command[0]
    here = cwd / os.path.expanduser(program)
    if here.is_dir():
        return f"program {program!r} is a directory"
    if "/" not in program and here.is_file():
        interpreter = INTERPRETERS.get(here.suffix)
        instead = f"{interpreter} {program}" if interpreter else f"./{program}"
        return f"{why}; to run the file {program} here, give {instead!r}"
    return why


def deprecated(old: str, new: str) -> None:
    """Say on stderr that ``old`` still works but ``new`` is how to write it from now on."""
    typer.echo(
        f"note: {old!r} is the older spelling of {new!r}; it works until the next release",
        err=True,
    )
