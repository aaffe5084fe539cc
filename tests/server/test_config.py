"""The competition file: defaults, and one line naming the key for each mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.server.config import ConfigError, load_config


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cup.toml"
    path.write_text(text)
    return path


def test_a_minimal_file_gets_the_documented_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, '[competition]\nname = "Cup"\n'))
    assert config.name == "Cup"
    assert config.data == tmp_path / "cup-data"
    assert config.players == 3 and config.jobs == 2
    assert config.runtimes == ("python3", "node", "java", "c", "binary")
    assert config.uploads.max_bytes == 1024 * 1024
    assert not config.self_registration


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[competition]\nname = "x"\nbogus = 1\n', "competition.bogus: unknown key"),
        ('[competition]\nname = "x"\n[tables]\nplayers = 9\n', "tables.players: must be 3..8"),
        ('[competition]\nname = "x"\nruntimes = ["cobol"]\n', "unknown runtime 'cobol'"),
        ('[competition]\nname = "x"\n[uploads]\nmax_kb = "big"\n', "uploads.max_kb: must be"),
        ('[competition]\nname = "x"\n[scheduler]\nmax_share = 2\n', "scheduler.max_share"),
        ('[competition]\nname = "x"\n[rules]\npreset = "nope"\n', "rules: unknown preset"),
        ('[competition]\nname = "x"\nhouse_bots = ["nobody"]\n', "'nobody' is not a bundled"),
        ("[server]\nport = 1\n", "competition: missing"),
        ("[competition\n", "not valid TOML"),
    ],
)
def test_each_mistake_is_one_line_naming_the_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    assert message in str(caught.value)
    assert str(caught.value).startswith(str(tmp_path / "cup.toml"))
    assert "\n" not in str(caught.value)
