"""``newmarket bots``: the bundled bots, their language, and whether each can run here.

The list is ``bots.registry.BUNDLED`` itself, so what this prints is exactly
what ``--bot NAME`` accepts.  Whether a bot can run is asked of the bot
(``available()``): the JavaScript bot needs ``node``, the C bot a C compiler
(``cc``) unless it is built already, the bash bot ``bash``.  Nothing is
started or compiled here.  ``--json`` and ``--csv`` give the same rows, a
field per column (``runs_here`` a boolean in JSON).
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from bots.registry import BUNDLED
from referee.commands.common import AsCsv, AsJson
from referee.text.machine import field_name, only_one, write_csv, write_json
from referee.text.printing import print_line, print_whole

HEADERS = ("name", "language", "runs here", "details", "description")


def bot_rows() -> list[dict[str, object]]:
    """One row per bundled bot, keyed by ``HEADERS``' field names."""
    rows: list[dict[str, object]] = []
    for name, bot in BUNDLED.items():
        ok, why = bot.available()
        values = (name, bot.language, ok, why, bot.description)
        rows.append({field_name(h): v for h, v in zip(HEADERS, values, strict=True)})
    return rows


def bots_table() -> Table:
    table = Table(title="Bundled bots", title_justify="left")
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("language", no_wrap=True)
    table.add_column("runs here", no_wrap=True)
    table.add_column("details", overflow="fold")  # a long path folds, never cut
    table.add_column("description", overflow="fold")
    for row in bot_rows():
        runs = "yes" if row["runs_here"] else "[red]no[/red]"
        table.add_row(
            str(row["name"]),
            str(row["language"]),
            runs,
            str(row["details"]),
            str(row["description"]),
        )
    return table


def bots_command(as_json: AsJson = False, as_csv: AsCsv = False) -> None:
    """List the bundled bots, their language, and whether each can run on this machine."""
    only_one(as_json, as_csv)
    if as_json:
        write_json(bot_rows())
        return
    if as_csv:
        write_csv([field_name(h) for h in HEADERS], bot_rows())
        return
    console = Console()
    print_whole(bots_table(), console)  # piped: every path whole, never cut with an ellipsis
    print_line(
        console,
        "Give a name to --bot (`--bot tracker`), or any command line "
        '(`--bot "node bots/js/bot.js"`).',
    )
