"""``newmarket match`` and ``newmarket sprt``: a fresh secret deal each run, the same with --seed.

Without ``--seed`` the cards come from 128 fresh bits (``referee.match.dealkey``)
that no bot can search; the match id sent to the bots does not carry them, and
the log's header records them so that ``newmarket replay`` still verifies the
match.  With ``--seed`` the run is reproducible, as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from referee.match.log import read_log
from referee.tools.replay import verify_log
from tests.clirun import newmarket

BOTS = ("--bot", "random", "--bot", "lowest", "--bot", "tracker")


def match(log: Path, *extra: str) -> tuple[dict[str, Any], list[list[list[str]]], str]:
    """Play one match to ``log``: its header, each hand's deal, and the start line."""
    code, _out, err = newmarket(
        "match", *BOTS, "--hands", "2", "--sandbox", "none", "--log-dir", str(log), *extra
    )
    assert code == 0, err
    (log,) = log.glob("*.jsonl")
    records = [record for _, record in read_log(log)]
    deals = [record["hands"] for record in records if record["type"] == "chance"]
    return records[0], deals, err.splitlines()[1]


def test_match_without_a_seed_deals_afresh_each_run_and_its_log_still_verifies(
    tmp_path: Path,
) -> None:
    first, first_deals, line = match(tmp_path / "a")
    second, second_deals, _line = match(tmp_path / "b")
    assert first_deals != second_deals
    assert first["seed"] != second["seed"] and first["seed"] >= 1 << 64
    assert str(first["seed"]) not in first["match_id"]  # the id every bot is sent
    assert "a secret deal (its seed goes to the log)" in line and str(first["seed"]) not in line
    verify_log(next((tmp_path / "a").glob("*.jsonl")))  # the header's seed replays the cards


def test_match_with_a_seed_deals_the_same_cards_every_run(tmp_path: Path) -> None:
    first, first_deals, line = match(tmp_path / "a", "--seed", "7")
    second, second_deals, _line = match(tmp_path / "b", "--seed", "7")
    assert first["seed"] == second["seed"] == 7 and first_deals == second_deals
    assert " · seed 7 · " in line


def sprt(results: Path, *extra: str) -> tuple[list[int], str]:
    """One group of an SPRT: the deal seeds it played, and its settings line."""
    code, _out, err = newmarket(
        "sprt", "--candidate", "lowest", "--baseline", "random", "--players", "3",
        "--hands", "2", "--max-matches", "2", "--sandbox", "none",
        "--results", str(results), *extra,
    )  # fmt: skip
    assert code == 2, err  # undecided after its one group
    (group,) = [json.loads(line) for line in results.read_text().splitlines()]
    return group["seeds"], next(line for line in err.splitlines() if line.startswith("SPRT"))


def test_sprt_without_a_seed_deals_afresh_each_run_and_with_one_the_same(
    tmp_path: Path,
) -> None:
    first, line = sprt(tmp_path / "a.jsonl")
    second, _line = sprt(tmp_path / "b.jsonl")
    assert set(first).isdisjoint(second) and min(first) >= 1 << 64
    assert "secret deals" in line
    again, line = sprt(tmp_path / "c.jsonl", "--seed", "3")
    assert sprt(tmp_path / "d.jsonl", "--seed", "3")[0] == again
    assert max(again) < 1 << 48 and " · seed 3 · " in line
