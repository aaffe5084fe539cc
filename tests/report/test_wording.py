"""One wording for how a match ended and for who sat where, in the terminal, the report and
the server.

The server's match page once said ``ended: players_left`` where the report said "too
few players left", and its replay named the seats ``alice-v1`` (the name its tables
give a version) beside a table that said ``alice v1``.  Here one real match, logged,
is shown by every one of them: ``newmarket match``'s table, ``newmarket replay``,
``newmarket view``'s page, and the server's match page with its replay.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from engine import preset
from referee.commands.match import result_table
from referee.match.referee import play_match
from referee.match.result import MatchResult
from referee.server.app import templates
from referee.server.views import _replay
from referee.text.printing import print_whole
from referee.text.render import match_ending
from referee.transport.timecontrol import TimeControl
from tests.referee.fakes import by_default, fake_table
from tests.report.replay_steps import frames_of
from tests.server.test_templates import page_context

REPO = Path(__file__).resolve().parents[2]
WORDS = "too few players left"
# Small stacks and no hand limit to speak of: the match ends when players run out.
RULES = preset("boodle").with_options({"starting_chips": 8, "hand_limit": 200})
NAMES = ["alice-v1", "bob-v2", "carol-v1"]  # as the server's tables name versions
LABELS = ["alice v1", "bob v2", "carol v1"]  # as its pages name them


@pytest.fixture
async def played(autojump_clock: object, tmp_path: Path) -> tuple[MatchResult, Path]:
    log = tmp_path / "m.jsonl"
    control = TimeControl(move_time=1.0)
    async with fake_table([by_default] * 3, control, names=NAMES) as (sessions, _wires):
        result = await play_match(
            sessions, RULES, 5, time_control=control, match_id="m", log_path=log
        )
    assert result.reason == "players_left"
    return result, log


def test_the_words_are_one_function() -> None:
    assert match_ending("players_left") == WORDS
    assert match_ending("hand_limit") == "the hand limit was reached"
    assert match_ending("a_future_reason") == "a_future_reason"  # SPEC.md 2: open


async def test_the_terminal_says_it_in_words(played: tuple[MatchResult, Path]) -> None:
    result, log = played
    out = io.StringIO()
    print_whole(result_table(result), Console(file=out))  # newmarket match's table
    assert f"({WORDS})" in out.getvalue()
    replay = subprocess.run(
        [sys.executable, "-m", "referee.cli", "replay", str(log)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert replay.returncode == 0, replay.stderr
    assert f"Match over ({WORDS})" in replay.stdout
    assert "players_left" not in replay.stdout


async def test_the_report_page_says_it_in_the_same_words(
    played: tuple[MatchResult, Path], tmp_path: Path
) -> None:
    _result, log = played
    out = tmp_path / "view"
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "view", str(log), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    page = (out / "index.html").read_text()
    assert f"ended: {WORDS}" in page
    data = re.search(r'<script type="application/json" id="match-data">(.*?)</script>', page)
    assert data is not None
    lines = [line for frame in frames_of(json.loads(data.group(1))) for line in frame["lines"]]
    assert f"match over ({WORDS}): " in lines[-1]
    assert "players_left" not in page


async def test_the_server_page_and_its_replay_use_the_words_and_names_of_its_table(
    played: tuple[MatchResult, Path],
) -> None:
    result, log = played
    start = (RULES.starting_chips,) * 3
    data, text = _replay(str(log), start, log.stat().st_mtime, tuple(LABELS))
    frames: list[dict[str, Any]] = data["frames"]  # type: ignore[assignment]
    lines = [line for frame in frames for line in frame["lines"]]
    told = " ".join(lines)
    assert all(label in told for label in LABELS)
    assert not any(name in told for name in NAMES), "the replay names seats as the log does"
    assert data["names"] == LABELS
    seats: list[dict[str, Any]] = [
        {
            "seat": seat.seat,
            "version": seat.seat + 1,
            "label": LABELS[seat.seat],
            "participant": LABELS[seat.seat].split()[0],
            "place": seat.place,
            "chips": seat.chips,
            "net_chips": seat.net_chips,
            "status": seat.status,
            "faults": [],
        }
        for seat in result.seats
    ]
    view = {
        "match_id": "m",
        "group": 1,
        "rotation": 0,
        "cards_public": True,  # its group has finished (referee.server.views)
        "in_play": None,
        "seed": result.seed,
        "hands": result.hands,
        "reason": result.reason,  # the API's value stays the protocol's
        "seats": seats,
        "replay": data,
        "stderr": {},
        "transcripts": [],
    }
    page = (
        templates()
        .get_template("match.html")
        .render(**page_context(view=view, replay=text, faults=[]))
    )
    assert f"ended: {WORDS}" in page and "players_left" not in page
