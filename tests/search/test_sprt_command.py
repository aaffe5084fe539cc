"""``newmarket sprt`` deciding between bots of known strength, end to end.

Real bot processes, the real referee, short matches (a few hands, three
seats).  Every bot here is deterministic for a given deal seed: ``random``
draws from a fixed seed, and the search bot is capped by ``--max-samples``
far below what its (generous) move time would allow, so it never reaches its
clock.  So each verdict below is the same on every run, fast machine or slow.

* The search bot against ``random``: a clear improvement, exit 0 (H1).
* ``random`` against copies of itself, with H1 set at +150 Elo: exit 1 (H0).
* A match limit reached first: exit 2, with the groups written to --results.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from referee.cli import app
from referee.match.referee import play_match

SEARCH = f"{sys.executable} -m bots.search --max-samples 15"
SHORT = ["--players", "3", "--hands", "6", "--move-time", "3"]


def sprt(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["sprt", *args])
    return result.exit_code, result.output


def test_a_clear_improvement_is_accepted() -> None:
    code, output = sprt(
        "--candidate", SEARCH, "--baseline", "random", *SHORT, "--seed", "1", "--elo1", "100"
    )
    assert code == 0, output
    assert "H1 accepted: search is better than random" in output
    assert "LLR" in output and "Elo" in output


def test_equal_bots_are_not_called_better() -> None:
    code, output = sprt(
        "--candidate", "random", "--baseline", "random", *SHORT, "--seed", "1", "--elo1", "150"
    )
    assert code == 1, output
    assert "H0 accepted" in output


def test_the_match_limit_leaves_it_undecided(tmp_path: Path) -> None:
    results = tmp_path / "groups.jsonl"
    code, output = sprt(
        "--candidate",
        "random",
        "--baseline",
        "lowest",
        *SHORT,
        "--seed",
        "2",
        "--max-matches",
        "6",
        "--layout",
        "rotate",
        "--results",
        str(results),
        "--json",
    )
    assert code == 2, output
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert [line["group"] for line in lines] == [0, 1]
    assert all(len(line["scores"]) == 3 and len(line["places"]) == 3 for line in lines)
    # Duplicate deals: one seed per group.
    assert all(len(set(line["seeds"])) == 1 for line in lines)
    summary = json.loads(output.strip().splitlines()[-1])
    assert summary["decision"] is None and summary["groups"] == 2
    assert "undecided after 6 matches" in summary["verdict"]


def test_without_duplicate_deals_every_match_has_its_own_seed(tmp_path: Path) -> None:
    results = tmp_path / "groups.jsonl"
    code, _output = sprt(
        "--candidate", "random", "--baseline", "lowest", *SHORT, "--seed", "3",
        "--max-matches", "3", "--no-duplicate", "--layout", "rotate", "--results", str(results),
    )  # fmt: skip
    assert code == 2
    (line,) = [json.loads(text) for text in results.read_text().splitlines()]
    assert len(set(line["seeds"])) == 3


def test_bad_arguments_are_one_line_and_exit_2() -> None:
    for args, word in (
        (["--players", "9"], "--players"),
        (["--elo0", "30", "--elo1", "10"], "elo1"),
        (["--rules", "nonesuch"], "--rules"),
        (["--max-matches", "1"], "--max-matches"),
        (["--players", "3", "--option", "end_players=3"], "end_players"),
    ):
        code, output = sprt("--candidate", "random", "--baseline", "random", *args)
        assert code == 2 and "error:" in output and word in output, (args, output)


def test_no_bot_process_plays_a_duplicate_deal_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """SPEC.md 3.1: a bot may remember a deal (every hand is shown at its end), so each
    rotation of a duplicate group has processes of its own, in both layouts."""
    seen: dict[int, list[int]] = {}  # a bot process (its session) -> the deal seeds it played

    async def recording(seating: Sequence[Any], *args: Any, **kwargs: Any) -> Any:
        for session in set(seating):
            seen.setdefault(id(session), []).append(args[1])  # play_match(seating, rules, seed)
        return await play_match(seating, *args, **kwargs)

    monkeypatch.setattr("referee.commands.sprt.play_match", recording)
    for layout, matches in (("rotate", "6"), ("alternate", "4")):
        seen.clear()
        code, output = sprt(
            "--candidate", "random", "--baseline", "lowest", *SHORT, "--seed", "4",
            "--max-matches", matches, "--layout", layout,
        )  # fmt: skip
        assert code == 2, output
        assert len(seen) > len({seed for seeds in seen.values() for seed in seeds})  # 2 groups
        assert all(len(seeds) == len(set(seeds)) for seeds in seen.values()), (layout, seen)
