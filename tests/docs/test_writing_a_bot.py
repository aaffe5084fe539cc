"""docs/writing-a-bot.md shows every step in every language (``test_docs_run.py`` runs them).

The tutorial is read from the markdown itself: a fenced block whose info
string has ``file=NAME`` is a file the reader saves, and the ``$ `` lines of
its ``console`` blocks are what the reader types.  Its last block plays a
small league with the three tutorial bots joined over loopback through
``newmarket connect``; ``test_docs_run.py`` checks its standings.
"""

from __future__ import annotations

from tests.docs import blocks as md

DOC = md.ROOT / "docs" / "writing-a-bot.md"


def test_the_tutorial_shows_a_bot_in_each_language_and_every_step() -> None:
    found = md.blocks(DOC)
    files = [block.file for block in found if block.file is not None]
    assert files == ["mybot.py", "mybot.js", "mybot.c", "cup.toml"]
    run = [command for block in found if block.runs for command in block.commands()]
    assert run[0] == ". .venv/bin/activate"
    for step in ("newmarket check", "newmarket match", "newmarket tokens", "newmarket connect"):
        assert any(command.startswith(step) for command in run), step
    for program in ("python3 mybot.py", "node mybot.js", "./mybot"):
        assert any(
            c.startswith("newmarket connect") and c.rstrip(" &").endswith(program) for c in run
        )
