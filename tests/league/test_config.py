"""League files: every mistake is one line naming the key, before anything starts."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from referee.league.league_file import ConfigError, LeagueConfig, load_config, parse_config

REPO = Path(__file__).resolve().parents[2]

GOOD = """
[league]
seed = 7
table_size = 3

[[bots]]
name = "a"
command = "lowest"

[[bots]]
name = "b"
command = "longest"

[[bots]]
name = "c"
command = "boodle"

[[bots]]
name = "d"
command = "tracker"
"""


def parse(text: str, tmp_path: Path) -> LeagueConfig:
    path = tmp_path / "league.toml"
    path.write_text(text)
    return parse_config(text, path)


def test_the_default_table_size_is_four_or_every_bot_of_a_smaller_league(tmp_path: Path) -> None:
    without = GOOD.replace("table_size = 3\n", "")
    assert parse(without, tmp_path).table_size == 4
    three_bots = without.rsplit("[[bots]]", 1)[0]
    assert parse(three_bots, tmp_path).table_size == 3


def error_of(text: str, tmp_path: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        parse(text, tmp_path)
    message = str(caught.value)
    assert "\n" not in message, message
    assert message.startswith(f"{tmp_path / 'league.toml'}: "), message
    return message.removeprefix(f"{tmp_path / 'league.toml'}: ")


def test_a_good_file_has_defaults_filled_in(tmp_path: Path) -> None:
    config = parse(GOOD, tmp_path)
    assert config.bot_names == ["a", "b", "c", "d"]
    assert config.format == "round_robin"
    assert config.schedule.duplicate is True
    assert config.rules.hand_limit == 200  # the preset's
    assert all(spec.cwd == tmp_path for spec in config.bots)
    assert config.log_dir(tmp_path / "x.db") == tmp_path / "x-logs"


def test_the_example_file_is_valid() -> None:
    config = load_config(REPO / "examples" / "league.toml")
    assert len(config.bots) == 9  # every bundled bot (tests/docs checks which)
    assert config.rules.hand_limit == 30


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (GOOD + "\n[extra]\nx = 1\n", "extra: unknown key; known keys here: league, schedule"),
        (
            GOOD.replace("table_size = 3", "table_size = 3\ntabel_size = 4"),
            "league.tabel_size: unknown key",
        ),
        (
            GOOD.replace('name = "b"', 'name = "b"\ncwdir = "x"'),
            "bots[1].cwdir: unknown key",
        ),
        (
            GOOD + '\n[rules]\npreset = "nonsense"\n',
            "rules.preset: unknown preset 'nonsense'; presets: boodle",
        ),
        (
            GOOD.replace("table_size = 3", "table_size = 5"),
            "league.table_size: 5 is larger than the number of bots (4)",
        ),
        (
            GOOD.replace('name = "c"', 'name = "a"'),
            "bots[2].name: 'a' is used twice (also bots[0])",
        ),
        (
            GOOD.replace('command = "boodle"', 'command = "no-such-program-here --fast"'),
            "bots[2].command: program 'no-such-program-here' is not on PATH",
        ),
        (
            GOOD.replace('command = "boodle"', 'command = "./missing-bot"'),
            "bots[2].command: program './missing-bot' does not exist",
        ),
        (
            GOOD.replace('command = "boodle"', 'command = ["python3", "missing_bot.py"]'),
            "bots[2].command: script 'missing_bot.py' does not exist",
        ),
        (
            GOOD + "\n[rules.options]\nlead_sut = 'any'\n",
            "rules.options.lead_sut: unknown rule option; known options:",
        ),
        (
            GOOD + "\n[rules.options]\nlead_suit = 'sideways'\n",
            "rules.options.lead_suit: 'sideways' is not one of any, change_or_same",
        ),
        (
            GOOD + "\n[rules.options]\nend_players = 3\n",
            "league.table_size: a table of 3 must seat more players than the rules' end_players",
        ),
        (
            GOOD.replace("table_size = 3", "table_size = 3\nhand_limit = 9")
            + "\n[rules.options]\nhand_limit = 10\n",
            "league.hand_limit: also set as rules.options.hand_limit",
        ),
        (GOOD.replace("seed = 7", 'seed = "seven"'), "league.seed: must be a whole number"),
        (
            GOOD.replace("seed = 7", "public_deals = true"),
            "league.public_deals: public deals follow from the league's seed",
        ),
        (
            GOOD.replace("seed = 7", "seed = 7\npublic_deals = 1"),
            "league.public_deals: must be true",
        ),
        (GOOD.replace("table_size = 3", "table_size = 9"), "league.table_size: must be 3 to 8"),
        (
            GOOD + "\n[time_control]\nmove_time = 0\n",
            "time_control.move_time: must be a number of seconds > 0",
        ),
        (
            GOOD + '\n[schedule]\nkind = "swiss"\n',
            "schedule.kind: 'swiss' is not one of 'auto', 'round_robin', 'balanced'",
        ),
        (
            GOOD.replace("[league]", '[league]\nformat = "bankroll"')
            + "\n[schedule]\ncycles = 2\n",
            "schedule: only a round_robin league has a schedule",
        ),
        (
            GOOD.replace('name = "d"', 'name = "d"\ntransport = "pigeon"'),
            "bots[3].transport: 'pigeon' is not one of 'stdio', 'tcp'",
        ),
        (
            GOOD.replace('name = "d"', 'name = "d"\ncwd = "nowhere"'),
            "bots[3].cwd: directory",
        ),
        ("[league]\nseed = 1\n", "bots: no bots"),
        ("[league\nseed = 1\n", "not valid TOML"),
    ],
)
def test_each_mistake_is_one_line_naming_the_key(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in error_of(text, tmp_path)


def test_a_file_that_cannot_be_read_as_text_is_one_line_naming_it(tmp_path: Path) -> None:
    # the same words as a competition file's (referee.settings.shared.read_text)
    path = tmp_path / "league.toml"
    path.write_bytes(GOOD.replace('name = "d"', 'name = "d\xff"').encode("latin-1"))
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}: not UTF-8 text$"):
        load_config(path)
    missing = tmp_path / "none.toml"
    with pytest.raises(ConfigError, match=r"none\.toml: cannot read: No such file"):
        load_config(missing)


def test_a_bot_command_may_be_a_path_relative_to_the_file(tmp_path: Path) -> None:
    script = tmp_path / "bots" / "mine.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    config = parse(GOOD.replace('command = "boodle"', 'command = "./bots/mine.sh"'), tmp_path)
    assert config.bots[2].command == ("./bots/mine.sh",)
    assert config.bots[2].cwd == tmp_path


def test_names_default_to_the_bundled_name_and_must_still_be_unique(tmp_path: Path) -> None:
    text = "[league]\nseed = 1\n" + '[[bots]]\ncommand = "lowest"\n' * 3
    assert "bots[1].name: 'lowest' is used twice (also bots[0])" in error_of(text, tmp_path)


def test_identity_ignores_where_the_file_is(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    first = parse_config(GOOD, tmp_path / "one" / "league.toml")
    second = parse_config(GOOD, tmp_path / "two" / "other.toml")
    assert first.identity() == second.identity()
    changed = parse_config(GOOD.replace("seed = 7", "seed = 8"), tmp_path / "one" / "l.toml")
    assert changed.identity() != first.identity()


def test_the_command_line_prints_the_line_and_starts_nothing(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace("table_size = 3", "table_size = 6"))
    db = tmp_path / "bad.db"
    run = subprocess.run(
        [sys.executable, "-m", "referee.cli", "league", str(path), "--db", str(db)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        f"error: {path}: league.table_size: 6 is larger than the number of bots (4)"
    ]
    assert not db.exists()
