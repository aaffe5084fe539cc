"""A bot's bytes on the organiser's screen and in the report: no escape reaches a terminal.

The ``ansi`` bot writes screen-clearing and title-setting escapes, ``\\r``
overwrites and a bidi override to its stderr and in its malformed replies.
``newmarket match``, ``newmarket replay --wire``, ``newmarket check``,
``newmarket league`` (its disqualification warnings) and the report must
show them as visible escapes (``\\x1b``), never as the bytes themselves.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.protocol_harness import REPO
from tests.match_logs import only_log

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")

NEWMARKET = [sys.executable, "-m", "referee.cli"]
ANSI_BOT = f"{sys.executable} -m tests.hostile.proto_bots.ansi"
RAW = ("\x1b", "\r", "\x07", "\u202e", "\x9b")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*NEWMARKET, *args], cwd=REPO, capture_output=True, text=True, timeout=300, check=False
    )


def assert_harmless(text: str) -> None:
    found = [char for char in RAW if char in text]
    assert not found, f"raw {found!r} in the output"


def test_a_match_shows_the_bots_escapes_as_text(tmp_path: Path) -> None:
    done = run(
        "match",
        "--bot",
        ANSI_BOT,
        "--bot",
        "lowest",
        "--bot",
        "lowest",
        "--hands",
        "1",
        "--seed",
        "2",
        "--log-dir",
        str(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    assert_harmless(done.stdout + done.stderr)
    assert "malformed: not JSON" in done.stdout and "\\x1b[31m\\x1b[2J" in done.stdout
    assert "unknown field `\\x1b[2J" in done.stdout
    # The organiser reads the ansi bot's side of the wire from the log: its lines as text.
    wire = run("replay", str(only_log(tmp_path)), "--seat", "0", "--wire")
    assert wire.returncode == 0, wire.stderr
    assert_harmless(wire.stdout + wire.stderr)
    assert "> \\x1b[31m\\x1b[2J\\x1b[H\\x1b]0;pwned\\x07all bots crashed\\r" in wire.stdout


def test_check_shows_the_bots_lines_and_stderr_as_text() -> None:
    done = run("check", ANSI_BOT)
    assert done.returncode == 1
    assert_harmless(done.stdout + done.stderr)
    assert "\\x1b]0;pwned\\x07all bots crashed\\rOK: ansi wins\\u202e" in done.stdout


def test_a_leagues_warnings_and_report_show_the_escapes_as_text(tmp_path: Path) -> None:
    league = tmp_path / "ansi.toml"
    league.write_text(
        f"""
[league]
seed = 2
table_size = 3
hand_limit = 2
logs = "logs"

[schedule]
duplicate = false

[time_control]
move_time = 10.0
startup_time = 30.0

[[bots]]
name = "ansi"
command = ["{sys.executable}", "-m", "tests.hostile.proto_bots.ansi"]
cwd = "{REPO}"

[[bots]]
name = "lowest"
command = "lowest"

[[bots]]
name = "random"
command = "random"
"""
    )
    db = tmp_path / "ansi.db"
    done = run("league", str(league), "--db", str(db), "--jobs", "1")
    assert done.returncode == 0, done.stderr
    assert_harmless(done.stdout + done.stderr)
    assert "warning: c1-t00001-r0: ansi disqualified (malformed in hand" in done.stderr
    site = tmp_path / "site"
    report = run("report", "--db", str(db), "--out", str(site))
    assert report.returncode == 0, report.stderr
    pages = [path.read_text() for path in site.rglob("*.html")]
    assert pages
    for page in pages:
        assert_harmless(page)
    assert any("all bots crashed\\rOK: ansi wins" in page for page in pages)
