"""What a person sees while a league runs: one progress bar, warnings printed above it.

rich's ``Progress`` redraws its bar at the bottom of the terminal and prints
anything sent to its console above it, which is exactly "warnings appear
above the bar as they happen".  Everything goes to stderr, so stdout carries
only the standings (or their JSON or CSV) and can be redirected as it is.
When stderr is not a terminal (nohup, cron, CI, a file) there is no bar:
warnings are plain lines, and so is every finished match, as cutechess prints
a line per finished game, with the count, the places and the rate, so that a
log of a long league shows it moving::

    match 7/30 done: r1-t00003-r0 in 0.8 s: 1 alice, 2 bob, 3 carol · 2.1 matches/s
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

from referee.match.result import MatchResult
from referee.tables.job import TableJob
from referee.text.printing import print_line


class _RateColumn(ProgressColumn):
    """Matches per second since this run began (resumed matches do not count)."""

    def __init__(self, reporter: RichReporter) -> None:
        super().__init__()
        self.reporter = reporter

    def render(self, task: Task) -> Text:
        elapsed = time.monotonic() - self.reporter.started
        played = self.reporter.played
        rate = played / elapsed if elapsed > 0 and played else 0.0
        # "/s" after "12/504": matches per second, short enough for the line to fit 80 columns.
        return Text(f"{rate:.2f}/s", style="progress.data.speed", no_wrap=True)


# "0.00/s 0:00:00 elapsed, 0:00:00 left" and the spaces between the columns.
BAR_LINE_WITHOUT_BAR_OR_COUNT = 40


class RichReporter:
    """A progress bar with matches done, matches per second and time left.

    Off a terminal, a line per finished match; with ``every_percent``, a line
    only each time that share of the league is done (the demo's 200 matches
    are 10 lines piped, not 200).
    """

    def __init__(self, console: Console | None = None, every_percent: int | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.every_percent = every_percent
        self.bar = BarColumn()
        self.progress = Progress(
            TextColumn("[progress.description]{task.description}"),
            self.bar,
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
        self.done = 0
        self.total: int | None = None
        self.plain = not self.console.is_terminal  # a line per match instead of a bar

    def begin(self, total: int | None, done: int, description: str) -> None:
        # The bar takes what the other columns leave of the line (rich's 40 pushed the
        # rate past 80 columns, where it was cut to "matche…"), from 5 to 40 wide.
        rest = len(description) + len(f" {total}/{total}") + BAR_LINE_WITHOUT_BAR_OR_COUNT
        self.bar.bar_width = max(5, min(40, self.console.width - rest))
        self.started = time.monotonic()
        self.done, self.total = done, total
        self.progress.start()
        self.task = self.progress.add_task(description, total=total, completed=done)
        if total is not None and done >= total > 0:
            # Run again on a finished league: nothing is resumed, the standings are reprinted.
            self.note(f"already finished: all {total} matches were played; nothing to play")
        elif done:
            kept = (
                "1 match already finished is"
                if done == 1
                else f"{done} matches already finished are"
            )
            self.note(f"resuming: {kept} kept")

    def describe(self, description: str, total: int | None = None) -> None:
        if total is not None:
            self.total = total
        if self.task is not None:
            self.progress.update(self.task, description=description)

    def finished(self, job: TableJob, result: MatchResult) -> None:
        self.played += 1
        self.done += 1
        if self.task is not None:
            self.progress.advance(self.task)
        if not self.plain:
            return
        if self.every_percent is None or not self.total:
            print_line(self.console, self.match_line(result))
        elif self._step(self.done) > self._step(self.done - 1):
            print_line(self.console, self.share_line())

    def _step(self, done: int) -> int:
        """How many ``every_percent`` shares of the league ``done`` matches make."""
        assert self.every_percent is not None and self.total
        return done * 100 // (self.every_percent * self.total)

    def share_line(self) -> str:
        """The league's progress as one plain line (``every_percent``)."""
        assert self.total
        elapsed = time.monotonic() - self.started
        rate = f" · {self.played / elapsed:.2f} matches/s" if elapsed > 0 else ""
        return f"{self.done}/{self.total} matches done ({self.done * 100 // self.total}%){rate}"

    def match_line(self, result: MatchResult) -> str:
        """One finished match as one plain line (no bar to show it)."""
        of = f"/{self.total}" if self.total is not None else ""
        places = ", ".join(
            f"{seat.place} {seat.name}" for seat in sorted(result.seats, key=lambda s: s.place)
        )
        elapsed = time.monotonic() - self.started
        rate = f" · {self.played / elapsed:.2f} matches/s" if elapsed > 0 else ""
        return (
            f"match {self.done}{of} done: {result.match_id} in {result.wall_ms / 1000:.1f} s: "
            f"{places}{rate}"
        )

    def warn(self, text: str) -> None:
        print_line(self.console, Text.assemble(("warning: ", "yellow"), text))

    def note(self, text: str) -> None:
        print_line(self.console, text)

    def end(self) -> None:
        self.progress.stop()
