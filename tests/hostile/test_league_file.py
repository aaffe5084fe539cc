"""A league file from someone careless or hostile: names, commands, env and limits are checked.

Each mistake is refused before anything starts, on one line naming the key
and what is allowed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from referee.league.league_file import ConfigError, parse_config
from referee.sandbox import MIB

PYTHON = sys.executable


def league(tmp_path: Path, bot: str = "", sandbox: str = "", league_extra: str = "") -> str:
    text = f"""
[league]
seed = 1
table_size = 3
{league_extra}

[[bots]]
command = "random"
name = "a"

[[bots]]
command = "random"
name = "b"

[[bots]]
command = [{PYTHON!r}, "-c", "pass"]
{bot}

[sandbox]
{sandbox}
"""
    return text.replace("'", '"')


def refused(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, tmp_path / "league.toml")
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("bot", "key", "problem"),
    [
        ('name = "../../etc/passwd"', "bots[2].name", "must not hold '/', '\\' or '..'"),
        ('name = "a/b"', "bots[2].name", "must not hold"),
        ('name = "bell\\u0007"', "bots[2].name", "holds control characters"),
        ('name = "esc\\u001b[2J"', "bots[2].name", "holds control characters"),
        ('name = "' + "x" * 65 + '"', "bots[2].name", "at most 64"),
        ('env = { LD_PRELOAD = "/tmp/evil.so" }', "bots[2].env.LD_PRELOAD", "allow_loader_env"),
        ('env = { PYTHONPATH = "/tmp" }', "bots[2].env.PYTHONPATH", "allow_loader_env"),
        ('env = { NODE_OPTIONS = "-r x" }', "bots[2].env.NODE_OPTIONS", "allow_loader_env"),
        ('env = { JAVA_TOOL_OPTIONS = "-X" }', "bots[2].env.JAVA_TOOL_OPTIONS", "allow_loader_env"),
        ('env = { PATH = "/tmp" }', "bots[2].env.PATH", "allow_loader_env"),
        ('env = { "A=B" = "x" }', "bots[2].env.'A=B'", "is not a variable name"),
        ('env = { X = "line\\nbreak" }', "bots[2].env.X", "control characters"),
    ],
)
def test_bad_names_and_env_are_refused_naming_the_key(
    tmp_path: Path, bot: str, key: str, problem: str
) -> None:
    message = refused(tmp_path, league(tmp_path, bot=bot))
    assert f": {key}: " in message and problem in message, message


def test_a_command_with_control_characters_is_refused(tmp_path: Path) -> None:
    text = league(tmp_path).replace('"-c", "pass"', '"-c", "pass\\u001b"')
    message = refused(tmp_path, text)
    assert ": bots[2].command: " in message and "control characters" in message


def test_the_organiser_may_allow_loader_variables(tmp_path: Path) -> None:
    text = league(tmp_path, bot='env = { PYTHONPATH = "lib" }', sandbox="allow_loader_env = true")
    config = parse_config(text, tmp_path / "league.toml")
    assert config.bots[2].env["PYTHONPATH"] == "lib"


@pytest.mark.parametrize(
    ("setting", "key", "allowed"),
    [
        ("memory_mb = 1", "sandbox.memory_mb", "must be 32 to 262144, got 1"),
        ("processes = 1", "sandbox.processes", "must be 4 to 4096, got 1"),
        ("cpu_seconds = 100000000", "sandbox.cpu_seconds", "must be 1 to 604800"),
        ("scratch_mb = 0", "sandbox.scratch_mb", "must be 1 to 16384, got 0"),
        ("open_files = 3", "sandbox.open_files", "must be 16 to 65536, got 3"),
    ],
)
def test_absurd_limits_are_refused_with_the_allowed_range(
    tmp_path: Path, setting: str, key: str, allowed: str
) -> None:
    message = refused(tmp_path, league(tmp_path, sandbox=setting))
    assert f": {key}: {allowed}" in message, message


def test_an_absurd_hand_limit_is_refused_with_the_allowed_range(tmp_path: Path) -> None:
    message = refused(tmp_path, league(tmp_path, league_extra="hand_limit = 1000000000"))
    assert ": league.hand_limit: must be 1 to 100000, got 1000000000" in message
    message = refused(tmp_path, league(tmp_path, league_extra="hand_limit = 1e9"))
    assert ": league.hand_limit: must be a whole number" in message


def test_limits_in_range_and_the_scratch_size_are_read(tmp_path: Path) -> None:
    config = parse_config(
        league(tmp_path, sandbox="memory_mb = 512\nscratch_mb = 16"), tmp_path / "league.toml"
    )
    assert config.sandbox_limits.memory_bytes == 512 * MIB
    assert config.sandbox_limits.scratch_bytes == 16 * MIB
