"""``newmarket help [COMMAND]``: a command's help, as ``git help`` and ``cargo help`` give it.

The same text as ``newmarket COMMAND --help`` (or the command list, without
COMMAND), registered as a command of its own so that ``newmarket --help``
lists it.
"""

from __future__ import annotations

from typing import Annotated

import typer

from referee.commands.common import fail


def help_command(
    ctx: typer.Context,
    command: Annotated[
        str | None,
        typer.Argument(metavar="COMMAND", help="The command to explain; omit it for the list."),
    ] = None,
) -> None:
    """Print the help of a command (the same as COMMAND --help), or the list of commands."""
    top = ctx.parent
    if top is None:  # never: help is a subcommand of newmarket
        raise fail("help: no command list")
    if command is None:
        typer.echo(top.get_help())
        return
    group = top.command
    found = group.get_command(top, command) if hasattr(group, "get_command") else None
    if found is None:
        raise fail(f"help: no such command {command!r} (see `newmarket --help`)")
    with found.make_context(command, [], parent=top, resilient_parsing=True) as inner:
        typer.echo(found.get_help(inner))
