"""The conventions every ``newmarket`` command shares (docs/cli.md), checked on all of them.

A flag that two commands share has one name, one default and one help text;
the commands that run bots take ``--sandbox`` and the time control; every
command has ``-h`` and its exit codes in its help; every usage error is one
``error:`` line with exit code 2.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import pytest
import typer

from referee.cli import EXIT_CODES, app
from tests.clirun import newmarket

COMMANDS = sorted(EXIT_CODES)
RUNS_BOTS = ["match", "sprt", "check", "league"]
TIME_CONTROL = ["--move-time", "--time-bank", "--startup-time", "--margin", "--max-faults"]


@functools.cache
def click_group() -> Any:
    """The click commands typer makes of ``app``, built once: the flags table's test asks for
    a command's options hundreds of times, and each build takes ~15 ms.  Only read here."""
    return typer.main.get_command(app)


def options(command: str) -> dict[str, Any]:
    """The command's options by every name they answer to (click's parameters)."""
    group = click_group()
    found: dict[str, Any] = {}
    for param in group.commands[command].params:
        for name in param.opts:
            found[name] = param
    return found


def test_every_command_is_registered_with_its_exit_codes() -> None:
    group: Any = typer.main.get_command(app)
    assert sorted(group.commands) == COMMANDS


def test_version_and_no_arguments() -> None:
    code, out, _err = newmarket("--version")
    assert code == 0 and out.startswith("newmarket ") and len(out.splitlines()) == 1
    code, out, err = newmarket()
    assert code == 2 and out == "" and "Commands:" in err


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_short_help_with_its_exit_codes(command: str) -> None:
    code, out, _err = newmarket(command, "-h")
    assert code == 0
    assert out.startswith(f"Usage: newmarket {command} ")
    assert "Exit codes:" in out and "\n    2 " in out  # the usage error's code, like every command


@pytest.mark.parametrize("command", COMMANDS)
def test_every_usage_error_is_one_error_line_with_exit_2(command: str) -> None:
    code, out, err = newmarket(command, "--no-such-flag")
    assert (code, out) == (2, "")
    assert err == f"error: No such option: --no-such-flag (see `newmarket {command} --help`)\n"


def test_help_is_plain_text_so_bracketed_words_survive() -> None:
    code, out, _err = newmarket("league", "--help")
    assert code == 0
    assert "[sandbox]" in out.replace("\n", " ") and "[remote]" in " ".join(out.split())
    assert "╭" not in out  # no rich panels


@pytest.mark.parametrize("command", RUNS_BOTS)
def test_every_command_that_runs_bots_takes_the_sandbox(command: str) -> None:
    assert "--sandbox" in options(command)


@pytest.mark.parametrize("command", ["match", "sprt", "check"])
def test_the_time_control_flags_and_defaults_are_the_same(command: str) -> None:
    match = options("match")
    mine = options(command)
    for flag in TIME_CONTROL:
        assert mine[flag].default == match[flag].default, (command, flag)
        assert mine[flag].help == match[flag].help, (command, flag)


def test_a_shared_flag_means_one_thing_everywhere() -> None:
    by_flag: dict[str, dict[str, Any]] = {}
    for command in COMMANDS:
        for flag, param in options(command).items():
            by_flag.setdefault(flag, {})[command] = param
    # cutechess's --concurrency, with the old --jobs kept as the same flag
    for command in ("league", "sprt"):
        assert by_flag["--jobs"][command] is by_flag["--concurrency"][command]
    # --hands is the hand limit wherever it is shown; simulate's total is --total-hands
    for command, param in by_flag["--hands"].items():
        assert "--hand-limit" in param.opts or param.hidden, command
    for flag in ("--rules", "--option", "--seed", "--players", "--sandbox", "--log-dir"):
        helps = {
            command: param.help
            for command, param in by_flag[flag].items()
            # check's --rules is its random matches'; league's --sandbox defaults to its
            # file's; report reads the logs from --log-dir that the others write to
            if (command, flag)
            not in {("check", "--rules"), ("league", "--sandbox"), ("report", "--log-dir")}
        }
        assert len(set(helps.values())) == 1, (flag, helps)


def test_logs_go_to_log_dir_everywhere_and_log_is_one_file() -> None:
    for command in ("sprt", "check", "report"):
        found = options(command)
        # the league file's key and report's old name, the same flag (docs/cli.md said so
        # of all three while check and sprt refused it)
        assert found["--logs"] is found["--log-dir"], command
    assert "--log" in options("match")


@pytest.mark.parametrize(
    "args",
    [
        ["match", "--bot", "random", "--bot", "random", "--bot", "/no/such/bot"],
        ["sprt", "--candidate", "/no/such/bot", "--baseline", "random"],
        ["check", "--", "/no/such/bot"],
        ["connect", "127.0.0.1:9", "--token", "t", "--", "/no/such/bot"],
    ],
)
def test_every_command_that_runs_bots_pre_checks_their_programs(args: list[str]) -> None:
    code, out, err = newmarket(*args)
    assert (code, out) == (2, ""), err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "program '/no/such/bot' does not exist" in err


def _shared_flags_table() -> list[tuple[list[str], set[str]]]:
    """docs/cli.md's "Flags shared by the commands": each row's flags and its commands."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    section = page.split("## Flags shared by the commands", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("| `-"):
            continue
        flag_cell, commands_cell = line.split(" | ")[:2]
        flags = [word.split()[0] for word in re.findall(r"`(-[^`]+)`", flag_cell)]
        commands = {word.strip() for word in commands_cell.split(",")}
        rows.append((flags, commands))
    return rows


def test_the_shared_flags_table_is_every_command_s_help() -> None:
    # docs/cli.md names, for each shared flag, the commands that take it: exactly those
    # show it in their help (a hidden older spelling is not shown, so not counted).
    rows = _shared_flags_table()
    assert len(rows) >= 15
    for flags, commands in rows:
        for flag in flags:
            shown = {
                command
                for command in COMMANDS
                if flag in options(command) and not options(command)[flag].hidden
            }
            assert shown == commands, (
                flag,
                "help has",
                sorted(shown),
                "page has",
                sorted(commands),
            )
