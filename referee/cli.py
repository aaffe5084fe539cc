"""The ``newmarket`` command line: one typer app, one module per command.

Each command lives in ``referee/commands/<name>.py`` and is registered here
with the exit codes its ``--help`` shows, so adding a command touches this
file in one place.  The flags the commands share are defined once, in
``referee/commands/common.py``; the conventions are in docs/cli.md.

Every usage error is one ``error:`` line on stderr and exit code 2, whether a
command found it (``referee.commands.common.fail``) or click did while
parsing (an unknown flag, a missing value): ``main`` runs the app with
click's standalone mode off and prints click's errors itself, instead of
typer's boxed panels.  Help is plain text (no rich markup), so a ``[sandbox]``
in a help line is printed as written.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any

import typer


def _click_errors() -> Any:
    """click's exceptions as typer raises them: its own copy of click since typer 0.20."""
    try:
        return importlib.import_module("typer._click.exceptions")
    except ImportError:
        return importlib.import_module("click.exceptions")


errors = _click_errors()
# click's Abort (Ctrl-C or end of input at a prompt); typer 0.20+ keeps it in typer.exceptions.
ABORT: type[BaseException] = getattr(errors, "Abort", typer.Abort)

CONTEXT = {"help_option_names": ["-h", "--help"]}

app = typer.Typer(
    name="newmarket",
    help="Newmarket (Michigan, Boodle, Stops): rules engine, bot referee and leagues.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings=CONTEXT,
)

# What `newmarket --help` lists: each fits the 80-column list whole (click cuts a
# longer first sentence of the docstring with "...").
SHORT_HELP = {
    "bots": "List the bundled bots and whether each runs here.",
    "check": "Check that a bot follows the protocol (SPEC.md).",
    "match": "Play one match between 3 to 8 bots.",
    "replay": "Verify a match log against the engine and tell the match.",
    "view": "Write one match log as a page with a replay.",
    "sprt": "Test whether a bot is stronger than another (SPRT).",
    "league": "Play a league from its TOML file; resumable.",
    "standings": "Print a league's standings, also while it runs.",
    "report": "Write a league's results as a static site.",
    "tokens": "Issue the tokens of a league's remote bots.",
    "connect": "Join a league over the network with a local bot.",
    "serve": "Run a competition server: uploads, matches, leaderboard.",
    "rules": "List the rule presets, or every option of one.",
    "simulate": "Play random matches in-process and summarise the rules.",
    "demo": "Play a few hands with random players, or a short league.",
    "help": "Print the help of a command (the same as COMMAND --help).",
}

USAGE = "2 a usage error (one line on stderr, before anything starts)"
EXIT_CODES = {
    "rules": ("0 printed", USAGE),
    "simulate": ("0 done", USAGE),
    "demo": ("0 done", USAGE),
    "bots": ("0 printed", USAGE),
    "match": (
        "0 the match was played to its end (whatever the bots did)",
        "1 the referee failed (a log that cannot be written)",
        USAGE + ",\n    e.g. a bot whose program cannot start",
        "130 interrupted (the log so far is kept)",
    ),
    "replay": (
        "0 the log verifies",
        "1 it does not (the message names the first line that differs)",
        "2 LOG is not a match log (missing, empty, no header line), or a usage error",
    ),
    "sprt": (
        "0 H1 accepted (the candidate is better)",
        "1 H0 accepted",
        "2 undecided at --max-matches, or a usage error (one line on stderr, before\n"
        "    any bot starts)",
    ),
    "check": ("0 the bot passed", "1 the bot failed (the report says where)", USAGE),
    "league": (
        "0 played (or already finished)",
        "1 the referee failed; finished matches are kept, the same command resumes",
        USAGE + ":\n    the file, a bot that cannot start, the database",
        "130 stopped by Ctrl-C; the same command resumes",
    ),
    "standings": ("0 printed", "2 the database cannot be read, or a usage error"),
    "help": ("0 printed", USAGE),
    "report": (
        "0 written",
        USAGE,
        "130 --watch stopped by Ctrl-C",
        "143 --watch stopped by SIGTERM",
    ),
    "tokens": ("0 written", "1 the tokens file cannot be written", USAGE),
    "connect": (
        "the bot's own exit status, or",
        "1 the league could not be reached within --wait, or refused the bot",
        USAGE,
    ),
    "view": (
        "0 written (a log that does not verify too: the page names the problem)",
        USAGE + ":\n    LOG is not a match log, or --out cannot be written",
    ),
    "serve": (
        "0 stopped by Ctrl-C or SIGTERM (matches in progress are played again on\n    restart)",
        "1 the server failed (a port that cannot be listened on, a store that cannot\n"
        "    be written)",
        USAGE + ":\n    the competition file, or its database (damaged, locked, unreachable)",
    ),
}


def epilog(name: str) -> str:
    # \b keeps click from re-wrapping the lines into one paragraph.
    codes = "\b\nExit codes:\n" + "\n".join(f"  {code}" for code in EXIT_CODES[name])
    if name == "serve":
        from referee.commands.serve_actions import actions_epilog

        return actions_epilog() + "\n\n" + codes
    return codes


def version_callback(value: bool) -> None:
    if value:
        typer.echo(f"newmarket {package_version()}")
        raise typer.Exit()


def package_version() -> str:
    try:
        return metadata.version("newmarket")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


@app.callback()
def newmarket(
    version: bool = typer.Option(
        False,
        "--version",
        "-V",
        is_eager=True,
        callback=version_callback,
        help="Print the version and exit.",
    ),
) -> None:
    """Newmarket (Michigan, Boodle, Stops): rules engine, bot referee and leagues.

    Every command takes -h/--help; docs/cli.md has the conventions they share.
    """
    from referee.match.referee import ENV_SPIN, spin_wait

    try:
        spin_wait(os.environ.get(ENV_SPIN), 2)
    except ValueError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None


def _register() -> None:
    # Imported here so that `newmarket --help` stays quick and import cycles stay impossible.
    from referee.commands import bots, demo, match, replay, rules, simulate
    from referee.commands.check import check_command
    from referee.commands.common import NamedValuesCommand
    from referee.commands.connect import connect_command
    from referee.commands.help import help_command
    from referee.commands.league import league_command
    from referee.commands.report import report_command
    from referee.commands.serve import serve_command
    from referee.commands.sprt import sprt_command
    from referee.commands.standings import standings_command
    from referee.commands.tokens import tokens_command
    from referee.commands.view import view_command

    # In the order a user meets them (`newmarket --help` lists them so): a bot writer's,
    # a league organiser's, a host's, then the rules engine's.
    commands: dict[str, Callable[..., None]] = {
        "bots": bots.bots_command,
        "check": check_command,
        "match": match.match_command,
        "replay": replay.replay_command,
        "view": view_command,
        "sprt": sprt_command,
        "league": league_command,
        "standings": standings_command,
        "report": report_command,
        "tokens": tokens_command,
        "connect": connect_command,
        "serve": serve_command,
        "rules": rules.rules_command,
        "simulate": simulate.simulate_command,
        "demo": demo.demo_command,
        "help": help_command,
    }
    for name, command in commands.items():
        register = app.command(
            name, cls=NamedValuesCommand, short_help=SHORT_HELP[name], epilog=epilog(name)
        )
        register(command)


try:
    _register()
except KeyboardInterrupt:  # Ctrl-C in the second it takes to import every command
    sys.stderr.write("interrupted\n")
    sys.exit(130)


# Words users of other tools type for a command of another name: the error names ours
# (click's own guess for `play` would be `replay`).
OTHER_NAMES = {
    "play": "match",
    "game": "match",
    "games": "match",
    "tournament": "league",
    "gauntlet": "league",
    "test": "check",
    "validate": "check",
    "server": "serve",
    "results": "standings",
}


EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for `cat big | head`


def run(args: Sequence[str] | None = None) -> int:
    """Run the command line on ``args`` (default: ``sys.argv``); return the exit code."""
    args = list(sys.argv[1:] if args is None else args)
    if args and args[0] in OTHER_NAMES:
        return _other_name(args[0])
    command = typer.main.get_command(app)
    try:
        code = command.main(
            args=args,
            prog_name="newmarket",
            standalone_mode=False,
        )
    except SystemExit as stop:
        # rich and typer answer a reader that went away (`newmarket replay LOG | head`) with
        # exit 1, which for replay, check and sprt means "failed"; a shell's 141 (SIGPIPE)
        # says what happened, as cat or grep would.  Both exit while handling the EPIPE.
        cause = stop.__context__
        if stop.code == 1 and isinstance(cause, OSError) and cause.errno == errno.EPIPE:
            return EXIT_BROKEN_PIPE
        raise
    except errors.NoArgsIsHelpError as error:
        typer.echo(error.ctx.get_help() if error.ctx else str(error), err=True)
        return 2
    except errors.UsageError as error:
        where = error.ctx.command_path if error.ctx is not None else "newmarket"
        message = " ".join(error.format_message().split())  # one line, whatever click said
        message = _single_dash_hint(error, args, message)
        typer.echo(f"error: {message} (see `{where} --help`)", err=True)
        return int(error.exit_code)
    except errors.ClickException as error:
        typer.echo(f"error: {' '.join(error.format_message().split())}", err=True)
        return int(error.exit_code)
    except (ABORT, typer.Abort):
        typer.echo("interrupted", err=True)
        return 130
    except BaseExceptionGroup as group:
        # Ctrl-C inside a trio nursery (check, sprt, connect) arrives wrapped in a group,
        # which click's own KeyboardInterrupt handler never sees.
        if group.subgroup(KeyboardInterrupt) is None:
            raise
        typer.echo("interrupted", err=True)
        return 130
    return code if isinstance(code, int) else 0


def _other_name(word: str) -> int:
    """Another tool's word for one of our commands: name ours, as a usage error (exit 2)."""
    ours = OTHER_NAMES[word]
    typer.echo(
        f"error: No such command {word!r}; newmarket calls it {ours!r} "
        f"(see `newmarket {ours} --help`)",
        err=True,
    )
    return 2


def _single_dash_hint(error: Any, args: list[str], message: str) -> str:
    """click's message, or for cutechess's ``-games``, ``-concurrency``: what to type here.

    click reads ``-games`` as the short options ``-g -a -m ...`` and says only
    "No such option: -g", which names nothing the user typed.
    """
    if not isinstance(error, errors.NoSuchOption) or error.option_name.startswith("--"):
        return message
    typed = next(
        (arg.split("=")[0] for arg in args if arg.startswith(error.option_name) and len(arg) > 2),
        None,
    )
    if typed is None or typed.startswith("--"):
        return message
    known = (
        {name for param in error.ctx.command.params for name in param.opts} if error.ctx else set()
    )
    double = "-" + typed
    if double in known:
        return f"No such option: {typed}; did you mean {double}?"
    return (
        f"No such option: {typed} (options here take two dashes; docs/cli.md says where "
        "cutechess's and fastchess's options went)"
    )


def main() -> None:
    sys.exit(run())


if __name__ == "__main__":
    main()
