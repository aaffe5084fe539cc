"""Printing for people whole, on a terminal or into a file or pipe.

Rich lays everything out to the console's width; when the output is not a
terminal that width is 80 columns (or ``COLUMNS``): a wider table has its
columns squeezed and its cells cut with an ellipsis, and a longer line is
wrapped.  Standings or a match result piped into a file or a mail must keep
every column and every name, and a log of stderr must have one line per
event, so a script or a grep can read it.  ``print_whole`` makes the console
exactly as wide as a table wants off a terminal (on a terminal the table
follows the window, as the user expects); ``print_line`` prints text as one
line, left to the terminal to wrap, and never as markup (a bot's name or a
fault's detail may hold brackets).

Text a bot wrote (its stderr, a malformed line quoted in a fault, a name it
reported) is shown through ``printable`` (one line) or ``printable_block``
(several): control characters, ANSI escapes, and the Unicode controls that
reorder or hide text come out as visible escapes such as ``\\x1b``.  A bot
must not be able to clear the organiser's screen, move the cursor to
overwrite an earlier line (``\\r``), set the terminal's title, or make a
verdict read backwards.  ``print_line`` applies it to whatever it prints.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import re
import textwrap
from typing import Final

from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.table import Column, Table
from rich.text import Text

# C0 controls, DEL and C1 controls (0x9b is a one-byte CSI); the bidirectional
# embeddings, overrides and isolates; zero-width and invisible format characters;
# the Unicode line and paragraph separators; a BOM and the interlinear annotations.
_UNSAFE: Final = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]"
)
_UNSAFE_IN_BLOCK: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]"
)
_NAMED: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` as one harmless line: every control or invisible character shown as an escape.

    >>> printable("ok\\x1b[2J\\rwin\\u202e")
    'ok\\\\x1b[2J\\\\rwin\\\\u202e'
    """
    return _UNSAFE.sub(_escape, text)


def printable_block(text: str) -> str:
    """``text`` with its newlines and tabs kept and every other control shown as an escape."""
    return _UNSAFE_IN_BLOCK.sub(_escape, text)


WIDEST = 10_000  # room to measure a table's natural width; no real table comes near it


def print_whole(renderable: RenderableType, console: Console | None = None) -> None:
    """Print ``renderable`` on ``console`` (stdout); off a terminal, never cut to a width.

    On a terminal too narrow for a table, the table loses columns from its right
    (the least important: the standings end with faults and DQ) until every cell
    that cannot wrap is whole, and one line says which were left out; squeezed,
    rich would cut every column, the bots' names first, to one letter and an ellipsis.
    """
    console = console or Console()
    if console.is_terminal:
        fitted, left_out = _fit_columns(renderable, console)
        console.print(fitted)
        if left_out:
            print_line(
                console,
                f"(left out to fit {console.width} columns: {left_out}; "
                "widen the window, or pipe into less -S)",
            )
        return
    measuring = Console(file=console.file, width=WIDEST)
    width = measuring.measure(renderable).maximum
    # rich pads a title, a caption and a blank line to the table's width: a file or a pipe
    # gets each line without its trailing spaces (a diff or a grep for "...)$" reads it).
    rendered = io.StringIO()
    Console(file=rendered, width=max(width, 1), force_terminal=False).print(renderable)
    console.file.write("".join(line.rstrip() + "\n" for line in rendered.getvalue().splitlines()))
    console.file.flush()


MIN_COLUMNS = 2  # a table is never narrowed past its first two columns (rank and name)


def _fit_columns(renderable: RenderableType, console: Console) -> tuple[RenderableType, str]:
    """``renderable`` with its tables narrowed to ``console``'s width; what was left out."""
    if isinstance(renderable, Group):  # the standings and their head-to-head table
        parts = [_fit_columns(part, console) for part in renderable.renderables]
        gone = [
            f"{part.title}: {left_out}" if n and isinstance(part.title, str) else left_out
            for n, (part, left_out) in enumerate(parts)
            if left_out and isinstance(part, Table)
        ]
        return Group(*(part for part, _ in parts)), "; ".join(gone)
    if not isinstance(renderable, Table) or not all(c.no_wrap for c in renderable.columns):
        return renderable, ""  # a table of text wraps its cells to fit, as it should
    unbounded = console.options.update_width(WIDEST)  # a measure is capped at its width
    fitted = copy.copy(renderable)  # the caller's table keeps every column
    fitted.columns = [_unsqueezable(column, console, unbounded) for column in fitted.columns]
    left_out: list[str] = []
    while (
        len(fitted.columns) > MIN_COLUMNS
        and console.measure(fitted, options=unbounded).minimum > console.width
    ):
        left_out.insert(0, str(fitted.columns.pop().header))
    if not left_out:
        return renderable, ""
    return fitted, ", ".join(left_out)


def _unsqueezable(column: Column, console: Console, options: ConsoleOptions) -> Column:
    """``column``, whose minimum width is its widest cell.

    rich measures a cell that may not wrap by its longest word, yet then cuts
    it rather than wrap it: this is the width it needs to be shown whole.
    """
    cells = [column.header, *column.cells]
    widest = max(console.measure(cell, options=options).maximum for cell in cells)
    return dataclasses.replace(column, min_width=max(widest, column.min_width or 0))


PROSE_WIDTH = 100  # the widest a paragraph is wrapped, however wide the window: easier read


def print_paragraph(console: Console, text: str) -> None:
    """Print prose ``text`` wrapped between words at ``console``'s width (80 columns, or
    ``COLUMNS``, off a terminal), at most ``PROSE_WIDTH``: rich's own wrapping left the
    space it broke at on the end of each line, which a pipe or a file kept."""
    width = max(20, min(console.width, PROSE_WIDTH))
    for line in textwrap.wrap(text, width=width, break_long_words=False, break_on_hyphens=False):
        print_line(console, line)


def print_line(console: Console, text: str | Text) -> None:
    """Print ``text`` on ``console`` as one line: never wrapped, cut, read as markup, or
    able to move the cursor (``printable``, also inside a styled ``Text``)."""
    console.print(_printable_text(text), markup=False, highlight=False, soft_wrap=True)


def _printable_text(text: str | Text) -> str | Text:
    if isinstance(text, str):
        return printable(text)
    if not _UNSAFE.search(text.plain):
        return text
    # Escapes change lengths, so the styled runs are rebuilt one by one.
    cuts = sorted({cut for span in text.spans for cut in (span.start, span.end)})
    safe = Text(style=text.style)
    for part in text.divide(cut for cut in cuts if 0 < cut < len(text.plain)):
        styles = [span.style for span in part.spans]
        safe.append(printable(part.plain), style=styles[-1] if styles else None)
    return safe
