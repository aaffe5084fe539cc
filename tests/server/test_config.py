"""The competition file: defaults, and one line naming the key for each mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.server.competition_file import ConfigError, load_config


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cup.toml"
    path.write_text(text)
    return path


def test_a_minimal_file_gets_the_documented_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, '[competition]\nname = "Cup"\n'))
    assert config.name == "Cup"
    assert config.data == tmp_path / "cup-data"
    assert config.players == 3 and config.jobs == 2
    assert config.runtimes == ("python3", "node", "java", "c", "cpp", "rust", "go", "binary")
    assert config.uploads.max_bytes == 8 * 1024 * 1024  # a static Go or C++ bot fits
    assert not config.self_registration


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[competition]\nname = "x"\nbogus = 1\n', "competition.bogus: unknown key"),
        ('[competition]\nname = "x"\n[tables]\nplayers = 9\n', "players: must be 3 to 8, got 9"),
        ('[competition]\nname = "x"\nruntimes = ["cobol"]\n', "unknown runtime 'cobol'"),
        ('[competition]\nname = "x"\n[uploads]\nmax_kb = "big"\n', "uploads.max_kb: must be"),
        ('[competition]\nname = "x"\n[scheduler]\nmax_share = 2\n', "scheduler.max_share"),
        ('[competition]\nname = "x"\n[rules]\npreset = "nope"\n', "rules.preset: unknown preset"),
        ('[competition]\nname = "x"\nhouse_bots = ["nobody"]\n', "'nobody' is not a bundled"),
        ("[server]\nport = 1\n", "competition: missing"),
        ("[competition\n", "not valid TOML"),
        ('[competition]\nname = "x"\nruntimes = ["remote"]\n', "needs a [remote] section"),
        ('[competition]\nname = "x"\n[remote]\ntokens = "t.json"\n', "remote.tokens: a remote"),
        ('[competition]\nname = "x"\n[sandbox]\nmemory_mb = 1\n', "sandbox.memory_mb: must be"),
        ('[competition]\nname = "x"\n[time_control]\nmove_time = "1"\n', "time_control.move"),
        (
            '[competition]\nname = "x"\n[tables]\nhand_limit = 3\n'
            "[rules]\noptions = {hand_limit = 4}",
            "tables.hand_limit: also set as rules.options.hand_limit",
        ),
    ],
)
def test_each_mistake_is_one_line_naming_the_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    assert message in str(caught.value)
    assert str(caught.value).startswith(str(tmp_path / "cup.toml"))
    assert "\n" not in str(caught.value)


def test_the_league_sections_mean_what_they_mean_in_a_league_file(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            '[competition]\nname = "Cup"\n[tables]\nhand_limit = 7\n'
            "[sandbox]\ncompile_seconds = 30\nprocesses = 32\nscratch_mb = false\n"
            '[remote]\nhost = "0.0.0.0"\nport = 0\nwait = 20\n',
        )
    )
    assert config.rules.hand_limit == 7
    assert config.compile_seconds == 30
    limits = config.sandbox_limits
    assert (limits.processes, limits.memory_bytes, limits.scratch_bytes) == (32, 1024 << 20, None)
    assert config.remote is not None
    assert (config.remote.host, config.remote.port, config.remote.wait) == ("0.0.0.0", 0, 20.0)
    assert config.runtimes[-1] == "remote"  # a [remote] section allows the runtime


def test_the_documented_competition_file_is_a_valid_one(tmp_path: Path) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "server.md").read_text()
    section = page.split("## The competition file", 1)[1]
    block = section.split("```toml\n", 1)[1].split("```", 1)[0]
    config = load_config(write(tmp_path, block))
    assert config.name == "Autumn cup" and config.remote is not None
    assert config.registrations_per_hour == 5 and config.compile_seconds == 60
