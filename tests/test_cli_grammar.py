"""One grammar across the commands: a bot is named with ``--bot`` everywhere, logs go to
``--log-dir``, a table's ``--csv`` fields are its headers, and an older spelling still works
with a one-line note (docs/cli.md, "Older spellings")."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.clirun import newmarket

MATCH = ("match", "--bot", "random", "--bot", "tracker", "--bot", "lowest", "--hands", "2")


def test_check_takes_the_bot_as_match_does(tmp_path: Path) -> None:
    code, out, _err = newmarket("check", "--bot", "me=tracker", "--json")
    assert code == 0
    assert json.loads(out)["ok"] is True and json.loads(out)["bot"]["name"] == "me"
    code, _out, err = newmarket("check", "--bot", "tracker", "--", "random")
    assert (code, err) == (2, "error: --bot: give the bot once, with --bot or after --, not both\n")


def test_connect_takes_the_bot_as_match_does() -> None:
    # Before the league is contacted, a bot that cannot start is a usage error named --bot.
    code, out, err = newmarket("connect", "127.0.0.1:9", "--token", "t", "--bot", "/no/such/bot")
    assert (code, out) == (2, "") and err.startswith("error: --bot: ")
    code, _out, err = newmarket("connect", "127.0.0.1:9", "--token", "t")
    assert (code, err) == (2, "error: --bot: give your bot, e.g. --bot 'python3 bot.py'\n")


def test_match_csv_fields_are_its_table_headers_and_its_json_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, table, _err = newmarket(*MATCH, "--seed", "4")
    assert code == 0
    header = next(line for line in table.splitlines() if "place" in line)
    headers = [cell.strip() for cell in header.strip("┃│ ").split("┃")]
    code, text, _err = newmarket(*MATCH, "--seed", "4", "--csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == [h.replace(" ", "_") for h in headers]
    code, document, _err = newmarket(*MATCH, "--seed", "4", "--json")
    seat = json.loads(document)["seats"][0]
    assert set(rows[0]) - {"faults"} <= set(seat)  # faults: a list in JSON, words in CSV
    assert len(rows) == 3 and {row["name"] for row in rows} == {"random", "tracker", "lowest"}


def test_match_logs_go_to_log_dir_and_log_file_is_the_older_spelling(tmp_path: Path) -> None:
    code, _out, err = newmarket(*MATCH, "--log-dir", str(tmp_path / "logs"))
    assert code == 0 and len(list((tmp_path / "logs").glob("*.jsonl"))) == 1
    assert "note:" not in err
    old = tmp_path / "one" / "m.jsonl"
    code, _out, err = newmarket(*MATCH, "--log", str(old))
    assert code == 0 and old.exists()
    assert (
        f"note: '--log {old}' is the older spelling of '--log-dir {old.parent}'; "
        "it works until the next release"
    ) in err.splitlines()


def test_simulate_hands_is_the_older_spelling_of_total_hands() -> None:
    code, out, err = newmarket("simulate", "--hands", "20", "--seed", "1", "--json")
    assert code == 0 and json.loads(out)
    assert err.splitlines()[0] == (
        "note: '--hands 20' is the older spelling of '--total-hands 20'; "
        "it works until the next release"
    )


def test_sprt_plays_over_tcp_when_asked(tmp_path: Path) -> None:
    code, out, _err = newmarket(
        "sprt", "--candidate", "tracker", "--baseline", "random", "--transport", "tcp",
        "--max-matches", "4", "--hands", "1", "--seed", "2", "--json",
        "--log-dir", str(tmp_path),
    )  # fmt: skip
    assert code == 2 and json.loads(out)["matches"] == 4  # undecided, as 4 matches are
    header = json.loads(next(tmp_path.glob("*.jsonl")).read_text().splitlines()[0])
    assert {bot["transport"] for bot in header["bots"]} == {"tcp"}
