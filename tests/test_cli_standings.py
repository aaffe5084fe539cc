"""What an organiser sees of a league's standings: one ranking, its legend, the file they know.

The table had 17 columns with two rankings side by side (the chips score and
openskill's rating) and no word on what any of them meant; its headers were
not the names of the JSON's fields; and ``standings`` wanted ``--db`` where
``league`` took the league file, answering ``league.toml`` with SQLite's "file
is not a database".
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from referee.league.league_db import LeagueStore
from referee.league.standings import StandingRow, Standings, columns_of
from referee.text.printing import print_whole
from tests.clirun import newmarket
from tests.league.results import key, result
from tests.league.test_store import config_of


@pytest.fixture
def league(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``league.toml`` and the ``league.db`` that ``newmarket league league.toml`` writes."""
    config = config_of(tmp_path)  # writes league.toml
    with LeagueStore.for_league(tmp_path / "league.db", config) as store:
        store.record(key("m1", [0, 1, 2]), result("m1", ["a", "b", "c"], [1, 2, 3], [50, 40, 20]))
        store.record(
            key("m2", [3, 1, 0], ordinal=1), result("m2", ["d", "b", "a"], [2, 1, 3], [30, 60, 25])
        )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    return tmp_path / "league.toml"


def header_of(out: str) -> list[str]:
    line = next(line for line in out.splitlines() if line.split()[:2] == ["rank", "name"])
    return line.split()


def test_the_table_leads_with_one_ranking_its_intervals_and_a_legend(league: Path) -> None:
    code, out, _err = newmarket("standings", "league.toml")
    assert code == 0
    assert header_of(out) == [
        *("rank", "name", "score", "95%", "interval", "ranks", "LOS", "faults")
    ]
    for second_ranking in ("rating", "mu", "sigma"):  # openskill's: behind --all
        assert second_ranking not in header_of(out)
    legend = " ".join(out.split())
    assert "score: chips per hand above the average bot, on the same cards" in legend
    assert "95% interval: of the score; ranks: of the rank" in legend
    assert "--all adds matches, places, chips and openskill's rating." in legend
    code, every, _err = newmarket("standings", "league.toml", "--all")
    assert code == 0
    header = " ".join(header_of(every))
    for column in ("rating mu sigma", "average place", "net chips", "hands won", "disqual"):
        assert column in header
    assert "rating: openskill's, from places (mu - 3 sigma), for comparison" in " ".join(
        every.split()
    )


THREE = """
[league]
name = "three"
seed = 3
table_size = 3
hand_limit = 1
""" + "".join(
    f'\n[[bots]]\nname = "{bot}"\ncommand = "{bot}"\n' for bot in ("random", "lowest", "boodle")
)


def test_league_starts_with_a_short_sandbox_line_and_ends_with_the_same_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("three.toml").write_text(THREE)
    code, out, err = newmarket("league", "three.toml", "--concurrency", "1")
    assert code == 0, err
    first = err.splitlines()[0]
    assert first.startswith("sandbox auto: ") and first.endswith(" (see -v)")
    assert len(first) <= 110  # with every protection missing: 107
    assert header_of(out)[:3] == ["rank", "name", "score"] and "rating" not in header_of(out)
    assert "--all adds matches, places, chips and openskill's rating." in " ".join(out.split())
    code, out, err = newmarket("league", "three.toml", "-v", "--all")  # complete: plays nothing
    assert code == 0, err
    assert err.splitlines()[0].startswith("sandbox auto: process group")
    assert "average place" in out
    code, again, _err = newmarket("standings", "three.toml", "--all")
    assert code == 0 and again == out


@pytest.mark.parametrize("fmt", ["round_robin", "bankroll"])
def test_every_header_is_a_json_and_csv_field_in_words(fmt: str) -> None:
    row = StandingRow(rank=1, name="a", bankroll=5, los=0.5)
    standings = Standings("cup", fmt, 1, 1, True, [row])
    fields = set(standings.to_json()["standings"][0])  # type: ignore[index]
    assert set(next(csv.reader(io.StringIO(standings.to_csv())))) == fields
    for column in columns_of(fmt, all_columns=True):
        assert set(column.fields) <= fields, column.header
        if len(column.fields) == 1:  # an interval shows two: its legend names them
            assert column.header.lower().replace(" ", "_") == column.fields[0]
    assert {c.fields[0] for c in columns_of(fmt, all_columns=True)} | {
        "score_high",
        "rank_high",
    } >= fields - {"bankroll", "out_round"}


def test_the_league_file_finds_its_database_as_league_does(league: Path) -> None:
    code, by_file, _err = newmarket("standings", "league.toml", "--json")
    assert code == 0
    code, by_db, _err = newmarket("standings", "--db", "league.db", "--json")
    assert code == 0 and by_file == by_db
    assert {row["name"] for row in json.loads(by_file)["standings"]} == set("abcd")
    code, out, _err = newmarket("standings", "league.db", "--csv")  # the database itself
    assert code == 0 and out.startswith("rank,name,")


def test_a_league_file_given_as_the_database_names_the_command_that_reads_it(
    league: Path,
) -> None:
    code, out, err = newmarket("standings", "--db", "league.toml")
    assert (code, out) == (2, "")
    assert err == (
        "error: league.toml is a league file, not a database: "
        "run `newmarket standings league.toml`\n"
    )
    code, out, err = newmarket("report", "--db", "league.toml", "--out", "site")
    assert (code, out) == (2, "")
    assert err == (
        "error: league.toml is a league file, not a database: "
        "run `newmarket report league.toml --out site`\n"
    )


def test_a_league_not_yet_started_and_no_file_at_all_are_one_line_each(league: Path) -> None:
    (league.parent / "other.toml").write_text(league.read_text())
    code, out, err = newmarket("standings", "other.toml")
    assert (code, out) == (2, "")
    assert err == (
        "error: other.db: no such league database (other.toml's results go there once "
        "`newmarket league other.toml` has started; or give --db FILE)\n"
    )
    code, out, err = newmarket("standings")
    assert (code, out) == (2, "")
    assert err == "error: give the league's file (LEAGUE.toml) or its database (--db FILE)\n"


def test_report_reads_the_league_file_as_standings_does(league: Path) -> None:
    code, out, err = newmarket("report", "league.toml", "--out", "site", "--no-verify")
    assert code == 0, err
    assert out == "site/index.html: 2 matches, 4 bots\n"
    assert "standings" in (league.parent / "site" / "index.html").read_text()


def test_a_name_in_brackets_is_printed_as_written() -> None:
    standings = Standings("cup", "round_robin", 1, 1, True, [StandingRow(1, "[bold]x[/bold]")])
    out = io.StringIO()
    print_whole(standings.table(), Console(file=out))
    assert "[bold]x[/bold]" in out.getvalue()
