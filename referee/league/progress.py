"""What a person sees while a league runs: one progress bar, warnings printed above it.

rich's ``Progress`` redraws its bar at the bottom of the terminal and prints
anything sent to its console above it, which is exactly "warnings appear
above the bar as they happen".  Everything goes to stderr, so stdout carries
only the standings (or their JSON or CSV) and can be redirected as it is.
When stderr is not a terminal there is no bar, and warnings are plain lines.
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from referee.league.runner import TableJob
from referee.match import MatchResult
from referee.printing import print_line


class _RateColumn(ProgressColumn):
    """Matches per second since this run began (resumed matches do not count)."""

    def __init__(self, reporter: RichReporter) -> None:
        super().__init__()
        self.reporter = reporter

    def render(self, task: Task) -> Text:
        elapsed = time.monotonic() - self.reporter.started
        played = self.reporter.played
        rate = played / elapsed if elapsed > 0 and played else 0.0
        return Text(f"{rate:.2f} matches/s", style="progress.data.speed")


class RichReporter:
    """A progress bar with matches done, matches per second and time left."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.progress = Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            _RateColumn(self),
            TimeElapsedColumn(),
            TextColumn("elapsed,"),
            TimeRemainingColumn(),
            TextColumn("left"),
            console=self.console,
            disable=not self.console.is_terminal,
        )
        self.task: TaskID | None = None
        self.started = time.monotonic()
        self.played = 0

    def begin(self, total: int | None, done: int, description: str) -> None:
        self.started = time.monotonic()
        self.progress.start()
        self.task = self.progress.add_task(description, total=total, completed=done)
        if done:
            self.note(f"resuming: {done} matches already finished are kept")

    def describe(self, description: str, total: int | None = None) -> None:
        if self.task is not None:
            self.progress.update(self.task, description=description)

    def finished(self, job: TableJob, result: MatchResult) -> None:
        self.played += 1
        if self.task is not None:
            self.progress.advance(self.task)

    def warn(self, text: str) -> None:
        print_line(self.console, Text.assemble(("warning: ", "yellow"), text))

    def note(self, text: str) -> None:
        print_line(self.console, text)

    def end(self) -> None:
        self.progress.stop()
