"""docs/writing-a-bot.md, run as written: every file it shows is written, every command run.

The tutorial is read from the markdown itself, so it cannot drift from what
works: a fenced block whose info string has ``file=NAME`` is written to NAME
in a fresh directory, and every ``$ `` line of a ``console`` block is run by
bash (``set -e``, so a failing command fails the test), top to bottom.  The
league's port is swapped for a free one, so the test can run next to others.
The last block plays a small league with the three tutorial bots joined over
loopback through ``newmarket connect``; its standings must list them all.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "writing-a-bot.md"
DOC_PORT = "7464"
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks(text: str) -> list[tuple[str, str]]:
    """``(info string, body)`` of every fenced block, in order."""
    return [(match.group(1).strip(), match.group(2)) for match in FENCE.finditer(text)]


def commands(body: str) -> list[str]:
    return [line[2:] for line in body.splitlines() if line.startswith("$ ")]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_tutorial_shows_a_bot_in_each_language_and_every_step() -> None:
    found = blocks(DOC.read_text())
    files = [info.split("file=", 1)[1] for info, _ in found if "file=" in info]
    assert files == ["mybot.py", "mybot.js", "mybot.c", "cup.toml"]
    run = [command for info, body in found if info == "console" for command in commands(body)]
    for step in ("newmarket check", "newmarket match", "newmarket tokens", "newmarket connect"):
        assert any(command.startswith(step) for command in run), step
    for program in ("python3 mybot.py", "node mybot.js", "./mybot"):
        assert any(
            c.startswith("newmarket connect") and c.rstrip(" &").endswith(program) for c in run
        )


def test_every_command_of_the_tutorial_runs(tmp_path: Path) -> None:
    missing = [program for program in ("node", "cc") if shutil.which(program) is None]
    if missing:
        pytest.skip(f"the tutorial's JavaScript and C bots need {' and '.join(missing)}")
    port = str(free_port())
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    env.pop("NEWMARKET_CONNECT", None)
    ran: list[str] = []
    for info, body in blocks(DOC.read_text().replace(DOC_PORT, port)):
        if "file=" in info:
            (tmp_path / info.split("file=", 1)[1]).write_text(body)
        elif info == "console":
            script = "set -euo pipefail\n" + "\n".join(commands(body)) + "\n"
            done = subprocess.run(
                ["bash", "-c", script],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, f"{script}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            ran.append(done.stdout)
    assert "PASS" in ran[0] and "PASS" in ran[1] and "PASS" in ran[2]
    standings = ran[-1]
    for name in ("random", "mine-py", "mine-js", "mine-c"):
        assert name in standings, standings
    assert (tmp_path / "cup.tokens.json").stat().st_mode & 0o077 == 0
