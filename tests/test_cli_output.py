"""What a user sees first and what a script reads: the sandbox line, -V, help, --json.

Every match and league began with a 400-character description of the
sandbox; ``-V`` was unknown and ``help`` worked without being listed; ``bots``,
``rules`` and ``tokens`` printed tables (or lines) a script had to scrape.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from bots.registry import BUNDLED
from engine import DEFAULT_PRESET, PRESETS, preset
from referee.sandbox import Limits, Sandbox, resolve
from referee.sandbox.summary import summary
from tests.clirun import newmarket

# ---------------------------------------------------------------- the sandbox line


def test_the_sandbox_line_names_the_level_and_only_what_is_missing() -> None:
    whole = Sandbox(level="auto", limits=Limits())
    assert summary(whole) == ("sandbox auto: limits, isolation and no network, all active (see -v)")
    lacking = Sandbox(
        level="auto",
        limits=Limits(),
        missing=(
            "memory limit: no memory cgroup (cgroup v2 at /sys/fs/cgroup is read-only)",
            "isolation: bubblewrap is not installed",
        ),
    )
    assert summary(lacking) == ("sandbox auto: NOT active: memory limit, isolation (see -v)")
    names = ["rlimits", "memory limit", "process count limit", "cgroup.kill"]
    names += ["isolation", "no-network"]  # every protection auto can lack
    everything = tuple(f"{name}: a long reason why, naming paths and tools" for name in names)
    assert len(summary(Sandbox(level="auto", limits=Limits(), missing=everything))) <= 110
    none = resolve("none")
    assert summary(none) == ("sandbox none: no limits or isolation, only a process group (see -v)")


def test_match_starts_with_the_short_line_and_v_gives_the_full_one(tmp_path: Path) -> None:
    bots = ["--bot", "random", "--bot", "lowest", "--bot", "random", "--hands", "1"]
    code, _out, err = newmarket("match", *bots, "--log-dir", str(tmp_path), "--sandbox", "basic")
    assert code == 0, err
    first = err.splitlines()[0]
    assert first.startswith("sandbox basic: rlimits only, no isolation")
    assert first.endswith("(see -v)") and len(first) < 100
    code, _out, err = newmarket(
        "match", *bots, "--log-dir", str(tmp_path / "v"), "--sandbox", "basic", "-v"
    )
    assert code == 0, err
    assert err.splitlines()[0].startswith("sandbox basic: process group, rlimits (cpu ")
    # The log's header keeps the whole of it, for whoever reads the match later.
    (log,) = (tmp_path / "v").glob("*.jsonl")
    header = json.loads(log.read_text().splitlines()[0])
    assert header["sandbox"]["level"] == "basic"
    assert any(line.startswith("rlimits (cpu ") for line in header["sandbox"]["active"])


# ---------------------------------------------------------------- version and help


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_has_the_short_flag_too(flag: str) -> None:
    code, out, _err = newmarket(flag)
    assert code == 0 and out.startswith("newmarket ") and len(out.splitlines()) == 1


def test_help_is_listed_and_answers_like_dash_dash_help() -> None:
    _code, out, _err = newmarket("--help")
    assert "  help " in out.split("Commands:", 1)[1]
    assert "-V, --version" in out
    assert newmarket("help", "standings") == newmarket("standings", "--help")
    code, out, _err = newmarket("help", "-h")
    assert code == 0 and out.startswith("Usage: newmarket help [OPTIONS] [COMMAND]")
    code, out, err = newmarket("help", "nosuch")
    assert (code, out) == (2, "")
    assert err == "error: help: no such command 'nosuch' (see `newmarket --help`)\n"


# ---------------------------------------------------------------- --json and --csv


def test_bots_json_and_csv_are_the_table_with_its_headers_as_fields() -> None:
    code, out, _err = newmarket("bots")
    header = next(line for line in out.splitlines() if "language" in line)
    words = [cell.strip() for cell in header.strip("┃│ ").split("┃")]
    assert words == ["name", "language", "runs here", "details", "description"]
    fields = [word.replace(" ", "_") for word in words]
    code, out, _err = newmarket("bots", "--json")
    assert code == 0
    rows = json.loads(out)
    assert [row["name"] for row in rows] == list(BUNDLED)
    assert all(list(row) == fields and isinstance(row["runs_here"], bool) for row in rows)
    code, out, _err = newmarket("bots", "--csv")
    table = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and list(table[0]) == fields
    assert [row["description"] for row in table] == [bot.description for bot in BUNDLED.values()]
    assert {row["runs_here"] for row in table} <= {"yes", "no"}


def test_rules_json_and_csv_are_the_tables_rows() -> None:
    code, out, _err = newmarket("rules", "--json")
    assert code == 0
    listed = json.loads(out)
    assert listed["default"] == DEFAULT_PRESET
    assert [row["preset"] for row in listed["presets"]] == list(PRESETS)
    assert all(list(row) == ["preset", "source", "summary"] for row in listed["presets"])
    code, out, _err = newmarket("rules", "stops", "--json")
    one = json.loads(out)
    described = [{"option": o, "value": v, "meaning": m} for o, v, m in preset("stops").describe()]
    assert one["preset"] == "stops" and one["options"] == described
    code, out, _err = newmarket("rules", "stops", "--csv")
    assert code == 0 and list(csv.DictReader(io.StringIO(out))) == described
    code, out, err = newmarket("rules", "nosuch", "--json")
    assert (code, out) == (2, "") and err.startswith("error: unknown preset 'nosuch'")


def test_tokens_json_and_csv_name_each_remote_bot_and_its_token(tmp_path: Path) -> None:
    league = tmp_path / "cup.toml"
    league.write_text(
        "[league]\nseed = 1\ntable_size = 3\n"
        + "".join(f'\n[[bots]]\nname = "{name}"\nremote = true\n' for name in "abc")
    )
    code, lines, err = newmarket("tokens", str(league))
    assert code == 0, err
    pairs = [line.split() for line in lines.splitlines()]
    code, out, _err = newmarket("tokens", str(league), "--json")
    document = json.loads(out)
    assert code == 0 and [[t["name"], t["token"]] for t in document["tokens"]] == pairs
    assert document["tokens_file"] == str(tmp_path / "cup.tokens.json")
    code, out, _err = newmarket("tokens", str(league), "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and [[row["name"], row["token"]] for row in rows] == pairs


@pytest.mark.parametrize("command", [["bots"], ["rules"], ["rules", "stops"]])
def test_json_and_csv_together_is_one_line(command: list[str]) -> None:
    code, out, err = newmarket(*command, "--json", "--csv")
    assert (code, out, err) == (2, "", "error: --json and --csv: give one\n")
