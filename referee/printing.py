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
"""

from __future__ import annotations

from rich.console import Console, RenderableType
from rich.text import Text

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


def print_line(console: Console, text: str | Text) -> None:
    """Print ``text`` on ``console`` as one line: never wrapped, cut or read as markup."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)
