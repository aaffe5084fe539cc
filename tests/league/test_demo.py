"""The demo league that ``newmarket demo`` will run: short, complete, with standings."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from referee.league.demo import DEMO_BOTS, run_demo_league

REPO = Path(__file__).resolve().parents[2]


def test_the_demo_league_plays_every_match_and_prints_the_standings(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    out = io.StringIO()  # not a terminal, as in make demo | tee: rich would cut to 80 columns
    standings = run_demo_league(Console(file=out), jobs=2)
    assert standings.finished and standings.matches_done == standings.matches_total == 200
    assert sorted(row.name for row in standings.rows) == sorted(DEMO_BOTS)
    assert all(row.disqualifications == 0 for row in standings.rows)
    text = out.getvalue()
    assert "standings final (200 of 200 matches)" in text
    # The introduction, piped: wrapped between words at 80 columns, with no space left at
    # the end of a line (rich's wrapping kept the one it broke at).
    intro = text[: text.index("standings final")].splitlines()[:3]
    assert intro[0].startswith("A round robin of random, lowest, longest, boodle, tracker:")
    assert intro[2].endswith("too deep for anyone to go out.")
    assert all(line == line.rstrip() and 60 < len(line) <= 80 for line in intro), intro
    # Enough duplicate groups to put the strongest starter first, and clearly so.
    best = standings.rows[0]
    assert best.name == "boodle" and best.rank_low == best.rank_high == 1
    assert standings.rows[0].name in text
    # The ranking and its intervals, its legend, nothing cut with an ellipsis.
    header = next(line for line in text.splitlines() if " faults" in line)
    assert header.split() == ["rank", "name", "score", "95%", "interval", "ranks", "LOS", "faults"]
    assert "score: chips per hand above the average bot" in text
    assert "…" not in text
    # Then what to do next: the three paths a new user came for, each with its page.
    closing = " ".join(text[text.rindex("Next: ") :].split())
    for page in ("docs/writing-a-bot.md", "docs/leagues.md", "docs/server.md"):
        assert page in closing and (REPO / page).is_file()
    # Progress, off a terminal: a line per 10% of the league, not one per match.
    progress = capsys.readouterr().err.splitlines()
    done = [line.split(" matches done")[0] for line in progress if "matches done" in line]
    assert done == [f"{n}/200" for n in range(20, 201, 20)], progress
    assert not any(line.startswith("match ") for line in progress)
