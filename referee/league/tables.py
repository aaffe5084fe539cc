"""Printing a standings table whole, on a terminal or into a file or pipe.

Rich lays a table out to the console's width; when stdout is not a terminal
that width is 80 columns (or ``COLUMNS``), and a wider table has its columns
squeezed and its cells cut with an ellipsis.  Standings piped into a file or
a mail must keep every column and every name, so off a terminal the console
is made exactly as wide as the table wants.  On a terminal the table follows
the window, as the user expects.
"""

from __future__ import annotations

from rich.console import Console, RenderableType

WIDEST = 10_000  # room to measure a table's natural width; no real table comes near it


def print_whole(renderable: RenderableType, console: Console | None = None) -> None:
    """Print ``renderable`` on ``console`` (stdout); off a terminal, never cut to a width."""
    console = console or Console()
    if console.is_terminal:
        console.print(renderable)
        return
    measuring = Console(file=console.file, width=WIDEST)
    width = measuring.measure(renderable).maximum
    Console(file=console.file, width=max(width, 1)).print(renderable)
