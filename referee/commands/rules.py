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
from referee.commands.common import AsCsv, AsJson, fail
from referee.text.machine import only_one, write_csv, write_json
from referee.text.printing import print_line, print_whole

_LEAD_SUIT = {
    LeadSuit.ANY: "any suit after a stop",
    LeadSuit.CHANGE_OR_SAME: "change suit or same",
    LeadSuit.CHANGE_OR_PASS: "change suit or pass",
}


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


PRESET_HEADERS = ("preset", "source", "summary")
OPTION_HEADERS = ("option", "value", "meaning")


def preset_rows() -> list[dict[str, object]]:
    """One row per preset, keyed by ``PRESET_HEADERS``' words."""
    return [
        {
            "preset": name,
            "source": PRESET_SOURCES.get(name, ""),
            "summary": rules_summary(preset(name)),
        }
        for name in PRESETS
    ]


def option_rows(name: str) -> list[dict[str, object]]:
    """Every option of preset ``name``, keyed by ``OPTION_HEADERS``' words; ``RulesError``."""
    return [
        {"option": option, "value": value, "meaning": meaning}
        for option, value, meaning in preset(name).describe()
    ]


def presets_table() -> Table:
    table = Table(title="Rule presets", title_justify="left")
    table.add_column("preset", style="bold", no_wrap=True)
    table.add_column("source")
    table.add_column("summary")
    for row in preset_rows():
        name = str(row["preset"])
        label = f"{name} (default)" if name == DEFAULT_PRESET else name
        table.add_row(label, str(row["source"]), str(row["summary"]))
    return table


def options_table(name: str) -> Table:
    rows = option_rows(name)
    title = f"{name}: {PRESET_SOURCES.get(name, '')}".rstrip(": ")
    table = Table(title=title, caption=preset_summary(name), caption_justify="left")
    table.title_justify = "left"
    table.add_column("option", style="bold", no_wrap=True)
    table.add_column("value", no_wrap=True)
    table.add_column("meaning")
    for row in rows:
        table.add_row(str(row["option"]), str(row["value"]), str(row["meaning"]))
    return table


def rules_command(
    name: Annotated[
        str | None,
        typer.Argument(
            metavar="NAME", help="A preset to show in full; omit it to list the presets."
        ),
    ] = None,
    as_json: AsJson = False,
    as_csv: AsCsv = False,
) -> None:
    """List the rule presets, or show every option of one preset."""
    only_one(as_json, as_csv)
    if as_json or as_csv:
        print_rules_rows(name, as_json)
        return
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


def print_rules_rows(name: str | None, as_json: bool) -> None:
    """``--json``: the presets and which is the default, or one preset and its options;
    ``--csv``: the rows of the table alone."""
    if name is None:
        if as_json:
            write_json({"default": DEFAULT_PRESET, "presets": preset_rows()})
        else:
            write_csv(PRESET_HEADERS, preset_rows())
        return
    try:
        rows = option_rows(name)
    except RulesError as error:
        raise fail(str(error)) from None
    if as_json:
        # The list's row of this preset, its table's caption (``about``), and its options.
        row = next(row for row in preset_rows() if row["preset"] == name)
        write_json({**row, "about": preset_summary(name), "options": rows})
    else:
        write_csv(OPTION_HEADERS, rows)
