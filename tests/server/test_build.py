"""Building a version: each runtime's entry rule, and compilers run under the sandbox."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from referee.sandbox import resolve
from referee.server.build import BuildError, build, entry_of

SANDBOX = resolve("basic")


def test_each_runtime_has_one_entry_rule() -> None:
    assert entry_of("python3", ["bot.py"]) == "bot.py"
    assert entry_of("python3", ["main.py", "lib.py"]) == "main.py"
    assert entry_of("c", ["a.c", "b.c"]) == "bot"
    with pytest.raises(BuildError, match=r"needs main\.js"):
        entry_of("node", ["index.js", "lib.js"])
    with pytest.raises(BuildError, match=r"must end in \.java"):
        entry_of("java", ["Main.py"])


async def test_a_c_compile_error_is_a_rejection_with_the_compilers_words(
    tmp_path: Path,
) -> None:
    (tmp_path / "bot.c").write_text("int main(void) { return missing_name; }\n")
    with pytest.raises(BuildError) as caught:
        await build("c", tmp_path, ["bot.c"], "broken", SANDBOX, 60)
    assert "compilation failed" in str(caught.value)
    assert "missing_name" in caught.value.transcript


@pytest.mark.skipif(shutil.which("javac") is None, reason="no javac on this machine")
async def test_java_is_compiled_and_started_by_its_class(tmp_path: Path) -> None:
    (tmp_path / "Bot.java").write_text("class Bot { public static void main(String[] a) {} }\n")
    built = await build("java", tmp_path, ["Bot.java"], "javabot", SANDBOX, 120)
    assert built.spec.command == ("java", "-Xss8m", "-cp", "build/classes", "Bot")
    assert (tmp_path / "build" / "classes" / "Bot.class").is_file()


async def test_a_binary_is_made_executable_and_run_by_path(tmp_path: Path) -> None:
    (tmp_path / "bot").write_bytes(b"#!/bin/sh\nexit 0\n")
    built = await build("binary", tmp_path, ["bot"], "bin", SANDBOX, 10)
    assert built.spec.command == (str(tmp_path / "bot"),)
    assert (tmp_path / "bot").stat().st_mode & 0o100
