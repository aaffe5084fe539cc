"""``newmarket bots``: the bundled bots, their language, and whether each can run here.

The list is ``bots.registry.BUNDLED`` itself, so what this prints is exactly
what ``--bot NAME`` accepts.  Whether a bot can run is asked of the bot
(``available()``): the JavaScript bot needs ``node``, the C bot a C compiler
(``cc``) unless it is built already, the bash bot ``bash``.  Nothing is
started or compiled here.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from bots.registry import BUNDLED
from referee.text.printing import print_line, print_whole


def bots_table() -> Table:
    table = Table(title="Bundled bots", title_justify="left")
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("language", no_wrap=True)
    table.add_column("runs here", overflow="fold")  # a long path folds, never cut
    table.add_column("what it does")
    for name, bot in BUNDLED.items():
        ok, why = bot.available()
        table.add_row(
            name, bot.language, f"yes: {why}" if ok else f"[red]no[/red]: {why}", bot.description
        )
    return table


def bots_command() -> None:
    """List the bundled bots, their language, and whether each can run on this machine."""
    console = Console()
    print_whole(bots_table(), console)  # piped: every path whole, never cut with an ellipsis
    print_line(
        console,
        "Give a name to --bot (`--bot tracker`), or any command line "
        '(`--bot "node bots/js/bot.js"`).',
    )
