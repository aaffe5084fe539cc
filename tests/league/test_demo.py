"""The demo league that ``newmarket demo`` will run: short, complete, with standings."""

from __future__ import annotations

import io

from rich.console import Console

from referee.league.demo import DEMO_BOTS, run_demo_league


def test_the_demo_league_plays_every_match_and_prints_the_standings() -> None:
    out = io.StringIO()
    standings = run_demo_league(Console(file=out, width=120), jobs=2)
    assert standings.finished and standings.matches_done == standings.matches_total == 20
    assert sorted(row.name for row in standings.rows) == sorted(DEMO_BOTS)
    assert all(row.disqualifications == 0 for row in standings.rows)
    text = out.getvalue()
    assert "standings final (20 of 20 matches)" in text
    assert standings.rows[0].name in text
