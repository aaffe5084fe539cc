"""``newmarket sprt`` on the duplicate chips score, end to end with real bot processes.

Short matches at three seats keep it cheap; the verdicts of bots of known
strength are checked in-process (``test_sprt_chips.py``), here what the
command reports and refuses.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from referee.cli import app

SHORT = ["--players", "3", "--hands", "4", "--move-time", "5", "--seed", "3"]


def sprt(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["sprt", *args])
    return result.exit_code, result.stdout, result.stderr


def test_json_reports_hands_and_cpu_seconds_of_fixed_hands_matches() -> None:
    code, out, err = sprt(
        "--candidate", "tracker", "--baseline", "random", *SHORT, "--max-matches", "24", "--json"
    )
    assert code in (0, 1, 2), err
    summary = json.loads(out.splitlines()[-1])
    assert summary["kind"] == "chips" and summary["format"] == "fixed-hands"
    assert summary["layout"] == "alternate" and summary["matches"] % 2 == 0  # 2 matches a group
    assert summary["hands"] == 4 * summary["matches"]  # nobody is eliminated: every hand played
    assert summary["cpu_seconds"] > 0
    lines = err.splitlines()
    assert "4-hand matches, deep stacks" in lines[0] and "duplicate chips score" in lines[0]
    assert "tracker and random in alternate seats, swapped" in lines[0]
    assert " hands · " in lines[1] and "cpu s" in lines[1] and "chips/hand" in lines[1]
    # The decisive road is on by default: its bounds in the header, its statistic per line.
    assert "decisive at GLR (-5.50, +5.50)" in lines[0] and "GLR " in lines[1]
    assert round(summary["glr_upper"], 2) == 5.5
    assert summary["decided_by"] in ("sprt", "decisive", None)


def test_a_candidate_that_never_starts_scores_below_every_baseline() -> None:
    # The default policy plays a dead candidate's seat; what it wins is not the
    # candidate's: each of its seats counts at most the lowest of its table's players.
    # Against `lowest`, which plays much as the default policy does, the uncapped seats
    # scored +0.375 chips per hand here: a dead bot "as good as" a live one.
    code, out, err = sprt(
        "--candidate", "python3 -c 'raise SystemExit(3)'", "--baseline", "lowest", *SHORT,
        "--max-matches", "8", "--json",
    )  # fmt: skip
    summary = json.loads(out.splitlines()[-1])
    assert code in (1, 2), err  # never "better"
    assert summary["score"] < 0, summary


def test_no_decisive_is_the_plain_sprt() -> None:
    code, out, err = sprt(
        "--candidate", "tracker", "--baseline", "random", *SHORT, "--max-matches", "2",
        "--no-decisive", "--json",
    )  # fmt: skip
    assert code == 2, err  # two matches are one group: no decision
    summary = json.loads(out.splitlines()[-1], parse_constant=pytest.fail)  # no Infinity
    assert summary["glr"] is None and summary["decided_by"] is None
    assert summary["score_low"] is None and summary["llr"] == 0.0  # one group: unbounded
    lines = err.splitlines()
    assert "decisive" not in lines[0] and "LLR bounds (-2.94, +2.94)" in lines[0]
    assert "GLR" not in lines[1]


def test_the_places_test_stays_available() -> None:
    code, _out, err = sprt(
        "--candidate",
        "lowest",
        "--baseline",
        "random",
        *SHORT,
        "--max-matches",
        "6",
        "--score",
        "places",
    )
    assert code in (0, 1, 2), err
    assert "elimination sessions" in err and "places score" in err and "score 0." in err


def test_bad_combinations_are_one_line_errors() -> None:
    for args, words in [
        (["--score", "elo"], "--score"),
        (["--score", "places", "--luck"], "--luck"),
        (["--score", "places", "--chips1", "0.5"], "--chips0/--chips1"),
        (["--option", "hand_limit=5"], "fixed-hands"),
        (["--chips0", "0.5", "--chips1", "0.2"], "chips1"),
        (["--layout", "teams"], "--layout"),
        (["--score", "places", "--layout", "alternate"], "--layout"),
    ]:
        code, _, err = sprt("--candidate", "lowest", "--baseline", "random", *args)
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err
