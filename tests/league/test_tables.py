"""Standings printed into a file or a pipe keep every column and every name.

Off a terminal rich lays tables out at 80 columns and cuts what does not fit
with an ellipsis; the standings are made exactly as wide as they need.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from referee.league.league_db import LeagueStore
from referee.league.standings import StandingRow, Standings
from referee.text.printing import print_whole

from .results import key, result
from .test_store import config_of

REPO = Path(__file__).resolve().parents[2]
LONG = [f"{word}-the-bot-with-a-rather-long-descriptive-name" for word in ("ann", "bob", "cat")]
HEADERS = ["rating", "mu", "sigma", "matches", "average place", "firsts", "net chips"]
HEADERS += ["boodle chips", "hands won", "faults", "disqualifications"]


def standings(bankroll: bool) -> Standings:
    rows = [
        StandingRow(
            rank=rank,
            name=name,
            matches=1200,
            average_place=2.5,
            net_chips=-12345,
            bankroll=123456 if bankroll else None,
        )
        for rank, name in enumerate(LONG, start=1)
    ]
    fmt = "bankroll" if bankroll else "round_robin"
    return Standings("a league with a long name", fmt, 1200, 1500, False, rows)


def assert_whole(text: str) -> None:
    assert "…" not in text and "..." not in text
    for name in LONG:
        assert name in text
    header = next(line for line in text.splitlines() if " disqualifications" in line)
    assert header.split() == ["rank", "name", *header.split()[2:]]
    assert [word for word in HEADERS if word in header] == HEADERS


@pytest.mark.parametrize("bankroll", [False, True])
def test_a_table_wider_than_80_columns_is_printed_whole_into_a_file(
    bankroll: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    out = io.StringIO()
    console = Console(file=out)
    assert not console.is_terminal and console.width == 80  # what rich would cut to
    print_whole(standings(bankroll).table(all_columns=True), console)
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) > 80
    assert_whole(text)
    if bankroll:
        assert "123456" in text


def test_newmarket_standings_piped_prints_every_column_and_name(tmp_path: Path) -> None:
    text = "[league]\nseed = 7\ntable_size = 3\n" + "".join(
        f'\n[[bots]]\nname = "{name}"\ncommand = "lowest"\n' for name in LONG
    )
    config = config_of(tmp_path, text)
    db = tmp_path / "league.db"
    with LeagueStore.for_league(db, config) as store:
        store.record(key("m1", [0, 1, 2]), result("m1", LONG, [1, 2, 3], [50, 40, 20]))
    environ = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "standings", "--db", str(db), "--all"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=environ,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert_whole(done.stdout)
