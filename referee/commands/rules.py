"""``newmarket rules [NAME]``: the presets, and every option of one of them.

The tables are built from the engine's own data (``PRESETS``, the presets'
docstrings, ``Rules.describe()``), so this command cannot drift from what the
engine plays.  Errors are one line on stderr and exit code 2, like a usage
error, so scripts can tell a typo from a crash.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from engine import (
    DEFAULT_PRESET,
    PRESET_SOURCES,
    PRESETS,
    Ante,
    DeadHandExchange,
    Dealing,
    LeadSuit,
    Payment,
    RankOrder,
    Rules,
    RulesError,
    preset,
)
from engine.presets import preset_summary
from referee.text.printing import print_line, print_whole

_LEAD_SUIT = {
    LeadSuit.ANY: "any suit after a stop",
    LeadSuit.CHANGE_OR_SAME: "change suit or same",
    LeadSuit.CHANGE_OR_PASS: "change suit or pass",
}


def fail(message: str) -> typer.Exit:
    """Print one line on stderr; the caller raises the returned exit (code 2)."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code=2)


def rules_summary(rules: Rules) -> str:
    """The points on which the presets differ, in one short line."""
    parts = ["aces high" if rules.rank_order is RankOrder.ACES_HIGH else "aces low"]
    if rules.ante is Ante.FIXED:
        parts.append(f"ante {rules.ante_per_card}, dealer {rules.dealer_ante_per_card}")
    else:
        parts.append(f"stake {rules.stake_total} freely")
    if rules.kitty_ante:
        parts.append(f"kitty {rules.kitty_ante}")
    if not rules.dead_hand:
        parts.append("no dead hand")
    elif rules.dealing is Dealing.EQUAL_HANDS:
        parts.append("equal hands")
    if rules.dead_hand_exchange is not DeadHandExchange.OFF:
        parts.append(rules.dead_hand_exchange.value.replace("_", " "))
    parts.append(_LEAD_SUIT[rules.lead_suit])
    parts.append("per card" if rules.payment is Payment.PER_CARD else "flat pay")
    parts.append(f"{rules.starting_chips} chips")
    return " · ".join(parts)


def presets_table() -> Table:
    table = Table(title="Rule presets", title_justify="left")
    table.add_column("preset", style="bold", no_wrap=True)
    table.add_column("source")
    table.add_column("summary")
    for name in PRESETS:
        label = f"{name} (default)" if name == DEFAULT_PRESET else name
        table.add_row(label, PRESET_SOURCES.get(name, ""), rules_summary(preset(name)))
    return table


def options_table(name: str) -> Table:
    rules = preset(name)
    title = f"{name}: {PRESET_SOURCES.get(name, '')}".rstrip(": ")
    table = Table(title=title, caption=preset_summary(name), caption_justify="left")
    table.title_justify = "left"
    table.add_column("option", style="bold", no_wrap=True)
    table.add_column("value", no_wrap=True)
    table.add_column("meaning")
    for option, value, meaning in rules.describe():
        table.add_row(option, value, meaning)
    return table


def rules_command(
    name: Annotated[
        str | None,
        typer.Argument(
            metavar="NAME", help="A preset to show in full; omit it to list the presets."
        ),
    ] = None,
) -> None:
    """List the rule presets, or show every option of one preset."""
    console = Console()
    if name is None:
        print_whole(presets_table(), console)  # piped: one line per preset, never wrapped
        print_line(
            console,
            "`newmarket rules NAME` shows every option of a preset; "
            "`newmarket simulate --option KEY=VALUE` changes one.",
        )
        return
    try:
        table = options_table(name)
    except RulesError as error:
        raise fail(str(error)) from None
    print_whole(table, console)
