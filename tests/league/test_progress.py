"""What a league prints on stderr while it runs, when stderr is a file (a log an organiser
greps): each warning and note is one line, whatever its length."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from engine import preset
from referee.bots import BotSpec
from referee.league.progress import RichReporter
from referee.league.runner import StartupFaults
from referee.match.key import MatchKey
from referee.match.result import FaultRecord, MatchResult, SeatResult
from referee.tables.job import TableJob

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


def test_a_remote_no_show_is_said_once_and_its_missed_matches_counted() -> None:
    # A remote bot that never connects misses every match it is seated at: one line at its
    # first, one count at the end, as for a local bot that cannot start (no stderr to name).
    bots = [BotSpec("alice", ("random",)), BotSpec("ghost", (), transport="tcp")]
    warned: list[str] = []
    startup = StartupFaults(bots, Path("logs"), warned.append)
    lines = []
    for match_id in ("m1", "m2", "m3"):
        absent = FaultRecord("startup", 0, "did not connect within 300 s (no-show)")
        seats = [
            SeatResult(0, "alice", 1, 50, "ok", [], 10, 0, 1),
            SeatResult(1, "ghost", 2, 30, "disqualified", [absent], -10, 0, 0),
        ]
        result = MatchResult(match_id, 1, {}, 1, seats, None, "hand_limit")
        key = MatchKey(match_id, 0, 1, 0, 0, 1, (0, 1), (40, 40), 1)
        lines += startup.warnings(TableJob(key, preset("boodle")), result)
    startup.warn("ghost could not start: from a worker, said from the results instead")
    startup.warn("m2: alice connected from 192.0.2.7")  # anything else is passed on
    assert lines == [
        "m1: ghost did not connect within 300 s (no-show); disqualified here and in each "
        "match it misses (one line at the end counts them)"
    ]
    assert warned == ["m2: alice connected from 192.0.2.7"]
    assert startup.closing_lines() == [
        "ghost was absent from 3 matches of this run, each a disqualification with its seat "
        "played by the default policy (the first: m1)"
    ]
