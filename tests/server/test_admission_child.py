"""The admission check's child process dies with the server, even a ``kill -9`` of it.

Before, the child (``python -m referee.server.admission``) had its request on a
closed stdin and nothing tying it to the server: killed mid-check, the server
left it checking for up to five minutes, and its bot with it.  Here the
"server" is a small process that starts a real check of a bot that never
answers (with a long start-up time, so the check would wait ten minutes); it
is SIGKILLed, and the child and its bot must be gone within a generous limit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

from referee.bots import BotSpec
from tests.server.serving import REPO

GONE_WITHIN = 60.0  # seconds; the child notices at once, this is for a loaded machine

SERVER = textwrap.dedent(
    """
    import json, sys, trio
    from pathlib import Path
    from referee.server.admission import run_check_process
    from referee.server.competition_file import load_config
    config = load_config(Path(sys.argv[1]))
    trio.run(run_check_process, config, json.loads(sys.argv[2]))
    """
)

SILENT_BOT = textwrap.dedent(
    """
    import os, sys, time
    with open(sys.argv[1] + ".tmp", "w") as out:
        out.write(str(os.getpid()))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    time.sleep(900)  # never says hello: the check waits its whole start-up time
    """
)


def _alive(pid: int) -> bool:
    """Running (not gone, and not a zombie waiting for its reaper)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_bytes()
            except OSError:
                continue
            if int(stat[stat.rfind(b")") + 2 :].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _wait_for(what: str, predicate: Callable[[], bool], limit: float = GONE_WITHIN) -> None:
    deadline = time.monotonic() + limit
    while not predicate():
        assert time.monotonic() < deadline, f"waited {limit:g} s for {what}"
        time.sleep(0.1)


def test_the_check_child_and_its_bot_die_with_a_killed_server(tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(
        '[competition]\nname = "x"\nhouse_bots = []\n'
        "[time_control]\nstartup_time = 600.0\n"
        '[sandbox]\nlevel = "none"\n'
    )
    bot = tmp_path / "bot.py"
    bot.write_text(SILENT_BOT)
    pid_file = tmp_path / "bot.pid"
    spec = BotSpec("silent", (sys.executable, str(bot), str(pid_file)), cwd=tmp_path)
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(config), json.dumps(spec.to_json())],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    left: list[int] = []  # what to end if the test fails: never leave a check running
    try:
        _wait_for("the bot to start", lambda: pid_file.exists() or server.poll() is not None)
        assert server.poll() is None, server.communicate()[1].decode()
        children = _children(server.pid)
        assert len(children) == 1, children  # the admission child
        child = children[0]
        bot_pid = int(pid_file.read_text())
        left += [child, bot_pid]
        assert _alive(child) and _alive(bot_pid)
        os.kill(server.pid, signal.SIGKILL)
        server.wait(timeout=60)
        _wait_for("the check's child to end", lambda: not _alive(child))
        _wait_for("the bot to end", lambda: not _alive(bot_pid))
    finally:
        for pid in left:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if server.poll() is None:
            server.kill()
            server.wait()
        assert server.stderr is not None
        server.stderr.close()
