"""``newmarket check`` as a script sees it: exit 0 pass, 1 fail (with a transcript), 2 misuse."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.cli import app

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def check(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["check", *args])
    return result.exit_code, result.stdout, result.stderr


def test_a_bundled_bot_by_name_passes_with_a_short_report() -> None:
    code, out, _err = check("random")
    assert code == 0, out
    assert out.startswith("newmarket check: random (")
    assert "  ok    handshake " in out and "  ok    auction " in out
    assert "  ok    end of input " in out
    assert "PASS: 18 checks, 15 matches on one process, 0 faults." in out
    assert "Decisions answered: stake " in out and "bid " in out


def test_a_command_after_the_double_dash_that_breaks_a_rule_fails_with_exit_1(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(REPO)
    code, out, _err = check("--", sys.executable, "-m", "tests.check.bots.illegal_lead")
    assert code == 1, out
    assert "  FAIL  boodle " in out
    assert "(not run: michigan, " in out
    assert "Transcript of 'boodle'" in out and "→" in out
    assert "The bot's stderr:" in out
    assert "FAIL: boodle: step 5: illegal fault: QS may not be led now" in out


def test_json_reports_the_failure_with_its_whole_transcript(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(REPO)
    code, out, _err = check("--json", "--", sys.executable, "-m", "tests.check.bots.twice")
    assert code == 1
    report = json.loads(out)
    assert report["ok"] is False
    failure = report["failure"]
    assert failure["stage"] == "boodle" and failure["check_bug"] is False
    step = failure["transcript"][failure["step"] - 1]
    # The second reply may arrive before or after request 3 is sent; the detail then
    # adds "(waiting for request 3)". Either way the fault and its request are named.
    assert step.startswith("! protocol fault: a second reply to request 2")
    assert report["stages"][0]["name"] == "handshake" and report["stages"][0]["ok"]


def test_json_of_a_pass_counts_the_decisions_and_the_latency() -> None:
    code, out, _err = check("--json", "--transport", "tcp", "lowest")
    assert code == 0
    report = json.loads(out)
    assert report["ok"] is True and report["failure"] is None
    assert report["bot"]["transport"] == "tcp"
    assert all(report["decisions"][kind] > 0 for kind in ("stake", "dead_hand", "bid", "lead"))
    assert report["latency_ms"]["count"] == sum(report["decisions"].values())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "error: --bot: give the bot to check"),
        (("--transport", "pigeon", "random"), "error: --transport: 'pigeon' is not stdio or tcp"),
        (("--move-time", "0", "random"), "error: --move-time: must be a number of seconds > 0"),
        (("--", "'unbalanced"), 'error: COMMAND: bot "\'unbalanced": No closing quotation'),
    ],
)
def test_misuse_is_one_line_on_stderr_and_exit_2(args: tuple[str, ...], message: str) -> None:
    code, out, err = check(*args)
    assert code == 2
    assert out == ""
    assert err.startswith(message) and err.count("\n") == 1, err


def test_a_bundled_bot_whose_language_is_missing_is_misuse_not_failure(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no node here
    code, _out, err = check("js")
    assert code == 2
    assert err == "error: COMMAND: bot 'js': node is not on PATH\n"
