"""The site from a real league: the standings' numbers, escaping, the swap into place, --watch."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from referee.report.data import load_league
from referee.report.site import SiteBuilder, watch
from tests.report.conftest import BOTS, MISCHIEF


def _newmarket(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_report_writes_every_page_with_the_standings_numbers(
    league_db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    done = _newmarket("report", "--db", str(league_db), "--out", str(out))
    assert done.returncode == 0, done.stderr
    standings = json.loads(_newmarket("standings", "--db", str(league_db), "--json").stdout)
    index = (out / "index.html").read_text()
    for row in standings["standings"]:
        assert f"{row['rating']:.2f}" in index and f"{row['sigma']:.2f}" in index
    league = load_league(league_db)
    assert len(list((out / "matches").glob("*.html"))) == len(league.matches) > 0
    assert len(list((out / "bots").glob("*.html"))) == len(BOTS)
    # The chart's last point of every bot is its rating in the standings.
    final = league.history[-1]
    for row in standings["standings"]:
        assert round(final[row["name"]].conservative, 4) == row["rating"]


def test_nothing_a_bot_says_becomes_markup(league_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    SiteBuilder(league_db, out).build()
    pages = [path.read_text() for path in out.rglob("*.html")]
    escaped_name = "&lt;script&gt;alert(&#x27;name&#x27;)&lt;/script&gt;"
    everything = "\n".join(pages)
    assert "<script>alert" not in everything and "<img src=x" not in everything
    assert "</pre><b>nobody" not in everything
    assert escaped_name in (out / "index.html").read_text()
    mischief = BOTS.index(MISCHIEF)
    bot_page = (out / "bots" / f"{mischief}.html").read_text()
    assert "illegal" in bot_page  # its faults, each with a transcript
    assert "&lt;/pre&gt;&lt;b&gt;nobody&lt;/b&gt; notices" in bot_page  # its stderr, as text
    assert "! illegal fault:" in bot_page


def test_a_rebuild_replaces_the_site_whole(league_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    builder = SiteBuilder(league_db, out)
    builder.build()
    (out / "stale.html").write_text("from an older site")
    first_match = sorted((out / "matches").iterdir())[0]
    builder.build()
    assert not (out / "stale.html").exists()
    assert first_match.is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["site"]  # no temporary directory left


def test_watch_rebuilds_when_a_match_finishes(league_db: Path, tmp_path: Path) -> None:
    db = tmp_path / "league.db"
    shutil.copy(league_db, db)
    # Hide the last match, as if it were still being played.
    with sqlite3.connect(db) as connection:
        last = connection.execute(
            "SELECT match_id FROM matches ORDER BY round DESC, ordinal DESC LIMIT 1"
        ).fetchone()[0]
        saved = {
            table: connection.execute(
                f"SELECT * FROM {table} WHERE match_id = ?", (last,)
            ).fetchall()
            for table in ("matches", "seats", "faults")
        }
        for table in ("faults", "seats", "matches"):
            connection.execute(f"DELETE FROM {table} WHERE match_id = ?", (last,))
    out = tmp_path / "site"
    builder = SiteBuilder(db, out, logs=league_db.parent / "logs")
    built: list[int] = []
    polls = 0

    def sleep(_: float) -> None:
        nonlocal polls
        polls += 1
        if polls == 2:  # the match finishes while the report watches
            with sqlite3.connect(db) as connection:
                for table in ("matches", "seats", "faults"):
                    for row in saved[table]:
                        marks = ", ".join("?" * len(row))
                        connection.execute(f"INSERT INTO {table} VALUES ({marks})", row)

    watch(
        builder,
        interval=0,
        on_build=lambda league: built.append(len(league.matches)),
        should_stop=lambda: polls >= 4,
        sleep=sleep,
    )
    total = len(load_league(league_db).matches)
    assert built == [total - 1, total]  # one build at the start, one when the match finished
    assert (out / "matches" / f"{last}.html").is_file()


def test_a_bad_database_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = _newmarket("report", "--db", str(tmp_path / "none.db"), "--out", str(tmp_path / "s"))
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "no such league database" in done.stderr
