"""The README and every page of docs/, run as pasted: each command block works, or says why not.

The convention is in ``tests/docs/blocks.py``.  One test per page runs all of
its command blocks top to bottom in one bash, in a scratch copy of a fresh
clone, with the virtualenv off the ``PATH`` until the page activates it; a
failure names the page and line of the block that failed.  The commands are
kept cheap on purpose (a few hands, small leagues), so this is part of the
normal suite.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bots.registry import BUNDLED
from referee.league.league_file import load_config
from tests.docs import blocks as md

DOC_PORT = "7464"  # the port the pages show; a free one is used instead when they run


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_every_block_of_every_page_runs_or_says_why_not() -> None:
    found = [problem for page in md.pages() for problem in md.problems(page)]
    assert not found, "\n".join(found)


def test_every_page_with_commands_activates_the_virtualenv_once_at_the_top() -> None:
    pages = _pages_that_run()
    assert md.ROOT / "README.md" in pages  # its commands run: blocks were found at all
    for page in pages:
        runnable = [block for block in md.blocks(page) if block.runs]
        first = runnable[0]
        assert first.lang == "console" and first.commands()[0] == ". .venv/bin/activate", (
            f"{first.where}: a page's first command is `. .venv/bin/activate`"
        )
        again = [b.where for b in runnable[1:] if ". .venv/bin/activate" in b.commands()]
        assert not again, f"activated again at {again}"


def _pages_that_run() -> list[Path]:
    return [page for page in md.pages() if any(block.runs for block in md.blocks(page))]


def _check_writing_a_bot(outputs: str, directory: Path) -> None:
    assert outputs.count("PASS") >= 3  # newmarket check passed the Python, JS and C bots
    standings = (directory / "standings.txt").read_text()
    for name in ("random", "mine-py", "mine-js", "mine-c"):
        assert name in standings, standings
    assert (directory / "cup.tokens.json").stat().st_mode & 0o077 == 0


# What a page's run must show beyond "every command exited 0".
EXPECTED: dict[str, Callable[[str, Path], None]] = {
    "writing-a-bot.md": _check_writing_a_bot,
}


@pytest.mark.parametrize("page", _pages_that_run(), ids=lambda page: page.name)
def test_the_page_runs_as_pasted(page: Path, tmp_path: Path) -> None:
    page_blocks = md.blocks(page, page.read_text().replace(DOC_PORT, str(free_port())))
    text = "\n".join(c for b in page_blocks if b.runs for c in b.commands())
    # node and a C compiler: named outright, or needed by the bundled js and c bots.
    needs = [
        tool
        for tool, bundled in (("node", "js"), ("cc", "c"))
        if re.search(rf"(^|[\s\"]){tool}\s|--bot {bundled}\b", text)
    ]
    missing = [tool for tool in needs if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{page.name} runs {' and '.join(missing)}, not installed here")
    directory = md.scratch_clone(tmp_path / "clone")
    script = md.script(page_blocks, directory)
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=directory,
        env=md.environment(),
        capture_output=True,
        text=True,
        timeout=300,  # a page that hangs fails here, naming its last block
        check=False,
    )
    last = [line for line in done.stderr.splitlines() if line.startswith(">>> ")]
    where = last[-1][4:] if last else page.name
    assert done.returncode == 0, (
        f"{where}: a command failed (exit {done.returncode})\n"
        f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    check = EXPECTED.get(page.name)
    if check is not None:
        check(done.stdout, directory)


def test_the_example_league_holds_every_bundled_bot() -> None:
    config = load_config(md.ROOT / "examples" / "league.toml")
    commands = {spec.name: spec for spec in config.bots}
    assert sorted(commands) == sorted(BUNDLED), "examples/league.toml says it has every bot"
