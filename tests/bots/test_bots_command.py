"""``newmarket bots``: every bundled bot with its language, and why one cannot run here."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from bots.registry import BUNDLED
from referee.cli import app


def run_bots_command() -> str:
    result = CliRunner().invoke(app, ["bots"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def test_it_lists_every_bundled_bot_with_its_language() -> None:
    output = run_bots_command()
    for name, bot in BUNDLED.items():
        row = next(line for line in output.splitlines() if f" {name} " in line)
        assert bot.language in row and bot.description in row
    assert "--bot" in output


def test_it_says_why_a_bot_cannot_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no node, no cc, no bash
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # and no C bot built yet
    rows = {
        line.split("│")[1].strip(): line for line in run_bots_command().splitlines() if "│" in line
    }
    assert "node is not on PATH" in rows["js"]
    assert "cc (a C compiler) is not on PATH" in rows["c"]
    assert "bash is not on PATH" in rows["bash"]
    assert "yes" in rows["random"]
