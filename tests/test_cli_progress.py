"""A league's progress off a terminal (nohup, cron, CI): a plain line per finished match.

And the smallest league file a newcomer writes (three bots, no table size)
plays with the default table size, which fits it.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from engine import preset
from referee.league.progress import RichReporter
from referee.match.key import MatchKey
from referee.match.result import MatchResult, SeatResult
from referee.tables.job import TableJob

REPO = Path(__file__).resolve().parents[1]


def result(match_id: str, places: list[tuple[str, int]]) -> MatchResult:
    seats = [
        SeatResult(seat, name, place, 20, "ok", [], 0, 0, 0)
        for seat, (name, place) in enumerate(places)
    ]
    return MatchResult(match_id, 1, {}, 3, seats, None, "hand_limit", wall_ms=1500)


def job(match_id: str) -> TableJob:
    return TableJob(MatchKey(match_id, 0, 1, 0, 0, 1, (0, 1, 2), (20, 20, 20), 1), preset("boodle"))


def test_off_a_terminal_every_finished_match_is_one_plain_line() -> None:
    out = io.StringIO()
    reporter = RichReporter(Console(file=out, width=40))
    reporter.begin(4, 1, "cup")
    reporter.finished(job("m2"), result("m2", [("bob", 2), ("alice", 1), ("carol", 3)]))
    reporter.finished(job("m3"), result("m3", [("bob", 1), ("alice", 1), ("carol", 3)]))
    reporter.end()
    lines = out.getvalue().splitlines()
    assert lines[0] == "resuming: 1 match already finished is kept"  # not "1 matches ... are"
    assert lines[1].startswith("match 2/4 done: m2 in 1.5 s: 1 alice, 2 bob, 3 carol")
    assert lines[2].startswith("match 3/4 done: m3 in 1.5 s: 1 bob, 1 alice, 3 carol")
    assert all("matches/s" in line for line in lines[1:]) and len(lines) == 3


def test_on_a_terminal_the_bar_stands_for_the_lines() -> None:
    out = io.StringIO()
    reporter = RichReporter(Console(file=out, width=80, force_terminal=True))
    reporter.begin(2, 0, "cup")
    reporter.finished(job("m1"), result("m1", [("alice", 1), ("bob", 2), ("carol", 3)]))
    reporter.end()
    assert "match 1/2 done" not in out.getvalue()


def test_a_minimal_league_of_three_bots_plays_and_prints_a_line_per_match(tmp_path: Path) -> None:
    league = tmp_path / "mini.toml"
    league.write_text(
        "[league]\nseed = 1\nhand_limit = 2\n\n"
        + "".join(
            f'[[bots]]\nname = "{n}"\ncommand = "{n}"\n\n' for n in ("lowest", "longest", "boodle")
        )
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "referee.cli",
            "league",
            str(league),
            "--concurrency",
            "1",
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("match ")]
    assert lines and lines[-1].startswith(f"match {len(lines)}/{len(lines)} done: ")
    assert '"finished": true' in done.stdout


def test_on_an_80_column_terminal_the_bar_line_is_whole() -> None:
    # rich's 40-wide bar pushed the line past 80 columns: the rate was cut to "matc…".
    out = io.StringIO()
    reporter = RichReporter(Console(file=out, width=80, force_terminal=True, color_system=None))
    reporter.begin(504, 0, "bundled bots: round robin")
    reporter.progress.refresh()
    reporter.end()
    drawn = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    line = next(line for line in re.split(r"[\r\n]", drawn) if "round robin" in line)
    assert len(line) <= 80 and "…" not in line
    assert line.endswith(" 0/504 0.00/s 0:00:00 elapsed, -:--:-- left")
