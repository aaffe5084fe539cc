"""What a league prints on stderr while it runs, when stderr is a file (a log an organiser
greps): each warning and note is one line, whatever its length."""

from __future__ import annotations

import io

from rich.console import Console

from referee.league.progress import RichReporter

LONG = "c1-t00004-r2: ghost disqualified (startup in hand 0: did not connect within 300 s)"


def test_warnings_and_notes_are_one_line_each_in_a_file() -> None:
    out = io.StringIO()
    reporter = RichReporter(Console(file=out, width=40))
    reporter.begin(10, 3, "cup")
    reporter.warn(LONG)
    reporter.note("alice connected from 192.0.2.7")
    reporter.end()
    assert out.getvalue().splitlines() == [
        "resuming: 3 matches already finished are kept",
        f"warning: {LONG}",
        "alice connected from 192.0.2.7",
    ]


def test_a_finished_league_run_again_says_so_rather_than_resuming() -> None:
    # "resuming: 280 matches already finished are kept" on a league with nothing left.
    out = io.StringIO()
    reporter = RichReporter(Console(file=out, width=80))
    reporter.begin(280, 280, "quick")
    reporter.end()
    assert out.getvalue() == "already finished: all 280 matches were played; nothing to play\n"
