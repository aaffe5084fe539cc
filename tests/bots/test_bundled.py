"""Every bundled bot, as the process the referee would start, plays full matches through the engine.

Each bot plays every preset and each dead-hand option in turn on one pair of
processes (many matches per process, as in a league), with the extras a later
protocol version may send, then exits 0 at ``shutdown``; every reply must be
legal and every decision kind must be answered.  A bot whose language is not
installed here (node, cc, bash) is skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from bots.registry import (
    BUNDLED,
    BotUnavailableError,
    CompiledCBot,
    PythonStarter,
    ScriptBot,
    resolve,
)
from engine import preset
from tests.bots.driver import BotProcess, Tally, auctioneer, handshake, play_match, rule_sets

KINDS = {"lead", "stake", "dead_hand", "bid"}


def command_or_skip(name: str) -> tuple[str, ...]:
    bot = BUNDLED[name]
    ok, why = bot.available()
    if not ok:
        pytest.skip(f"bundled bot {name!r} cannot run here: {why}")
    if name == "search":
        # These tests are about the protocol, not strength: a few determinizations per
        # decision instead of most of each second keeps every match quick.
        return (*bot.command(), "--max-samples", "3")
    return bot.command()


@pytest.mark.parametrize("name", list(BUNDLED))
def test_the_bundled_bot_plays_every_rule_set_legally(name: str) -> None:
    command = command_or_skip(name)
    tally = Tally()
    with BotProcess(command) as first, BotProcess(command) as second:
        handshake(first)
        handshake(second)
        for seed, (_label, rules) in enumerate(rule_sets()):
            seats: list[Any] = [(name, first), auctioneer, (name, second)]
            play_match(seats, rules, seed, tally, noise=True)
        assert (first.close(), second.close()) == (0, 0)
        logs = first.stderr_text() + second.stderr_text()
    assert {kind for (_, kind) in tally.counts} == KINDS
    assert tally.matches == len(rule_sets())
    # The Python SDK logs each time it had to fall back to a default; the others log faults.
    assert "newmarket sdk" not in logs and "fault" not in logs, logs


@pytest.mark.parametrize("name", list(BUNDLED))
def test_the_bundled_bot_plays_over_tcp_with_its_token(name: str) -> None:
    command = command_or_skip(name)
    with BotProcess(command, transport="tcp", token='tok"en\\1') as bot:
        ready = handshake(bot)
        assert ready.token == 'tok"en\\1'
        play_match([(name, bot), auctioneer, auctioneer], preset("stops"), 1, Tally())
        assert bot.close() == 0


@pytest.mark.parametrize("name", list(BUNDLED))
def test_the_bundled_bot_exits_2_on_another_protocol_version(name: str) -> None:
    command = command_or_skip(name)
    with BotProcess(command) as bot:
        bot.send_raw(b'{"type":"hello","protocol":99,"referee":"from the future"}\n')
        assert bot.process.wait(20) == 2
        assert "99" in bot.stderr_text()


# ---------------------------------------------------------------- the registry


def test_the_bundled_names_are_stable() -> None:
    names = ["random", "lowest", "longest", "boodle", "tracker", "js", "c", "bash", "search"]
    assert list(BUNDLED) == names
    assert {bot.language for bot in BUNDLED.values()} == {"python", "javascript", "c", "bash"}
    for name, bot in BUNDLED.items():
        assert bot.name == name and bot.description
        assert resolve(name) is bot
    assert resolve("node bots/js/bot.js") is None


def test_python_starters_run_under_this_interpreter() -> None:
    bot = BUNDLED["tracker"]
    assert isinstance(bot, PythonStarter)
    assert bot.command() == (sys.executable, "-m", "bots.starters.tracker")
    assert bot.available()[0]


def test_a_script_bot_without_its_interpreter_says_why(tmp_path: Path) -> None:
    script = tmp_path / "bot.xyz"
    script.write_text("")
    bot = ScriptBot("x", "xyz", "a test", "no-such-interpreter-here", script)
    assert bot.available() == (False, "no-such-interpreter-here is not on PATH")
    with pytest.raises(BotUnavailableError, match="not on PATH"):
        bot.command()
    missing = ScriptBot("y", "js", "a test", "node", tmp_path / "gone.js")
    assert missing.available()[0] is False and "missing" in missing.available()[1]


def test_the_shipped_files_are_where_the_registry_looks() -> None:
    for bot in BUNDLED.values():
        if isinstance(bot, ScriptBot):
            assert bot.script.is_file()
        if isinstance(bot, CompiledCBot):
            assert bot.source.is_file()


@pytest.fixture
def c_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if shutil.which("cc") is None:
        pytest.skip("cc (a C compiler) is not on PATH")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = tmp_path / "bot.c"
    source.write_text('#include <stdio.h>\nint main(void) { puts("one"); return 0; }\n')
    return source


def test_the_c_bot_is_compiled_once_into_the_cache(c_source: Path, tmp_path: Path) -> None:
    bot = CompiledCBot("c", "c", "a test", c_source)
    assert bot.available() == (True, f"built with {shutil.which('cc')} on first use")
    (binary,) = bot.command()
    assert Path(binary).parent == tmp_path / "cache" / "newmarket"
    built = os.stat(binary).st_mtime_ns
    assert bot.command() == (binary,) and os.stat(binary).st_mtime_ns == built
    assert bot.available()[1].startswith("built: ")
    assert list(Path(binary).parent.iterdir()) == [Path(binary)]  # no temporary files left


def test_an_edited_c_source_is_rebuilt(c_source: Path) -> None:
    bot = CompiledCBot("c", "c", "a test", c_source)
    (old,) = bot.command()
    c_source.write_text(c_source.read_text().replace('"one"', '"two"'))
    (new,) = bot.command()
    assert new != old and Path(new).is_file()


def test_a_c_source_that_does_not_compile_is_reported(c_source: Path) -> None:
    c_source.write_text("this is not C\n")
    bot = CompiledCBot("c", "c", "a test", c_source)
    with pytest.raises(BotUnavailableError, match="cc failed"):
        bot.command()
