"""The TOML section layer: a declared struct decodes a table, and each refusal is one line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec
import pytest
from msgspec import Meta

from referee.settings.sections import ConfigError, Section, decode, one_of
from referee.settings.shared import RemoteSettings, SandboxSection, paths_from, sandbox_of

FILE = Path("/organiser/cup.toml")


class Inner(Section, frozen=True):
    size: Annotated[int, Meta(ge=3, le=8)] = 4
    wait: Annotated[float, Meta(gt=0, extra={"unit": "seconds"})] = 1.0
    share: Annotated[float, Meta(ge=0.01, le=1.0)] = 1.0
    mode: Annotated[str, one_of(("fast", "slow"))] = "fast"
    on: bool = False
    names: list[str] = msgspec.field(default_factory=list)


class Entry(Section, frozen=True):
    name: str
    weight: Annotated[int, Meta(ge=1)] | None = None


class File(Section, frozen=True):
    inner: Inner = Inner()
    entries: list[Entry] = msgspec.field(default_factory=list)


def refusal(data: dict[str, object]) -> str:
    with pytest.raises(ConfigError) as caught:
        decode(data, File, FILE)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{FILE}: "), message
    return message.removeprefix(f"{FILE}: ")


def test_a_good_table_becomes_its_struct_with_defaults_filled_in() -> None:
    file = decode({"inner": {"size": 5, "wait": 2}, "entries": [{"name": "a"}]}, File, FILE)
    assert file.inner.size == 5 and file.inner.wait == 2.0 and file.inner.mode == "fast"
    assert file.entries == [Entry(name="a")]
    assert decode({}, File, FILE) == File()


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"inner": {"size": "big"}}, "inner.size: must be a whole number, got a string ('big')"),
        ({"inner": {"size": True}}, "inner.size: must be a whole number, got a boolean (true)"),
        ({"inner": {"size": 2.5}}, "inner.size: must be a whole number, got a number (2.5)"),
        ({"inner": {"size": 9}}, "inner.size: must be 3 to 8, got 9"),
        ({"inner": {"wait": 0}}, "inner.wait: must be a positive number of seconds, got 0"),
        ({"inner": {"wait": "x"}}, "inner.wait: must be a number of seconds, got a string ('x')"),
        ({"inner": {"share": 2}}, "inner.share: must be 0.01 to 1, got 2"),
        ({"inner": {"mode": "lazy"}}, "inner.mode: 'lazy' is not one of 'fast', 'slow'"),
        ({"inner": {"on": 1}}, "inner.on: must be true or false, got a number (1)"),
        ({"inner": {"names": ["a", 5]}}, "inner.names[1]: must be a string, got a number (5)"),
        ({"inner": 5}, "inner: must be a table, got a number (5)"),
        ({"entries": [{"name": "a"}, {"name": "b", "weight": 0}]}, "entries[1].weight: must be"),
    ],
)
def test_a_wrong_type_or_value_names_the_key_and_what_it_must_be(
    data: dict[str, object], expected: str
) -> None:
    assert refusal(data).startswith(expected)


def test_an_unknown_key_lists_the_known_ones() -> None:
    assert refusal({"inner": {"szie": 4}}) == (
        "inner.szie: unknown key; known keys here: size, wait, share, mode, on, names"
    )
    assert refusal({"extra": {}}) == "extra: unknown key; known keys here: inner, entries"
    assert refusal({"entries": [{"name": "a", "nmae": "b"}]}).startswith(
        "entries[0].nmae: unknown key; known keys here: name, weight"
    )


def test_a_key_with_a_newline_or_an_escape_stays_on_one_line() -> None:
    assert refusal({"inner": {"a\nb": 1}}).startswith("inner.a\\nb: unknown key")
    assert refusal({"inner": {"\x1b[2J": 1}}).startswith("inner.\\x1b[2J: unknown key")


def test_a_missing_required_key_says_what_it_wants() -> None:
    assert refusal({"entries": [{"weight": 2}]}) == "entries[0].name: is required (a string)"


def test_a_path_is_read_from_the_files_directory(tmp_path: Path) -> None:
    hook = paths_from(tmp_path)
    remote = decode({"tokens": "t.json"}, RemoteSettings, FILE, "remote", hook)
    assert remote.tokens == tmp_path / "t.json"
    with pytest.raises(ConfigError, match=r": remote.tokens: must be a string, got a number"):
        decode({"tokens": 5}, RemoteSettings, FILE, "remote", hook)


def test_a_sandbox_limit_is_a_whole_number_false_or_its_default() -> None:
    level, limits = sandbox_of(
        decode({"memory_mb": 64, "processes": False}, SandboxSection, FILE), FILE
    )
    assert level == "auto"
    assert (limits.memory_bytes, limits.processes) == (64 << 20, None)
    with pytest.raises(ConfigError, match=r": sandbox.memory_mb: must be a whole number, got a b"):
        sandbox_of(decode({"memory_mb": True}, SandboxSection, FILE), FILE)
