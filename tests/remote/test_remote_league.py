"""A league among remote bots on loopback, as an organiser and participants would run it.

Four registered remote bots: a Python SDK bot that connects by itself, the
JavaScript and C bots joined through ``newmarket connect``, and one that never
shows up.  The Python bot drops its connection in the middle of its first
match and connects again.  What a user would notice: the league finishes,
the standings list every bot, the drop is a fault of the Python bot only
(in that one match), the reconnected bot plays the matches after it without
a fault, and the no-show's matches record why it missed them.

Real processes and sockets, so deadlines are generous (the host is loaded):
bots have 60 s to start and an absent bot is waited for ``WAIT`` seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.league.league_db import LeagueStore

ROOT = Path(__file__).resolve().parents[2]
WAIT = 45  # seconds an absent bot is waited for: the no-show costs the league this much
NEWMARKET = [sys.executable, "-m", "referee.cli"]

QUITTING_BOT = """
import os, sys
sys.path.insert(0, {root!r})
from bots.sdk import Bot, run

class Quitter(Bot):
    name = "py-quitter"
    leads = 0

    def lead(self, request, state):
        # On its first run the bot drops its connection in the middle of a match.
        self.leads += 1
        if os.environ.get("QUIT_AFTER") and self.leads >= int(os.environ["QUIT_AFTER"]):
            os._exit(3)
        return request.default

run(Quitter(), connect=sys.argv[1], token=sys.argv[2])
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_listener(port: int, league: subprocess.Popen[bytes], timeout: float) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        assert league.poll() is None, "the league exited before listening"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"the league did not listen on port {port} within {timeout} s")


def test_a_league_of_remote_bots_with_a_drop_a_reconnect_and_a_no_show(tmp_path: Path) -> None:
    node, cc = shutil.which("node"), shutil.which("cc")
    if node is None or cc is None:
        pytest.skip(f"needs node and cc for the JS and C bots (node: {node}, cc: {cc})")
    port = free_port()
    league_file = tmp_path / "cup.toml"
    league_file.write_text(
        f"""
[league]
name = "cup"
seed = 11
table_size = 3
hand_limit = 3

[time_control]
startup_time = 60
move_time = 10

[remote]
host = "127.0.0.1"
port = {port}
wait = {WAIT}

[[bots]]
name = "py"
remote = true

[[bots]]
name = "js"
remote = true

[[bots]]
name = "c"
remote = true

[[bots]]
name = "ghost"
remote = true
"""
    )
    issued = subprocess.run(
        [*NEWMARKET, "tokens", str(league_file)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    tokens = dict(line.split(" ", 1) for line in issued.stdout.splitlines())
    assert sorted(tokens) == ["c", "ghost", "js", "py"]
    again = subprocess.run(
        [*NEWMARKET, "tokens", str(league_file)], cwd=ROOT, capture_output=True, text=True
    )
    assert again.stdout == issued.stdout, "the league and its participants keep the same tokens"

    c_bot = tmp_path / "c-bot"
    subprocess.run([cc, "-O2", "-o", str(c_bot), str(ROOT / "bots/c/bot.c")], check=True)
    quitter = tmp_path / "quitter.py"
    quitter.write_text(QUITTING_BOT.format(root=str(ROOT)))

    db = tmp_path / "cup.db"
    with (tmp_path / "league.stderr").open("wb") as logs:
        league = subprocess.Popen(
            [*NEWMARKET, "league", str(league_file), "--db", str(db), "--json"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=logs,
        )
        bots: list[subprocess.Popen[bytes]] = []
        try:
            wait_for_listener(port, league, 60)
            address = f"127.0.0.1:{port}"

            def connect(name: str, *command: str) -> None:
                bots.append(
                    subprocess.Popen(
                        [*NEWMARKET, "connect", address, "--token", tokens[name], "--", *command],
                        cwd=ROOT,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )

            connect("js", node, str(ROOT / "bots/js/bot.js"))
            connect("c", str(c_bot))
            first = subprocess.run(
                [sys.executable, str(quitter), address, tokens["py"]],
                env={**os.environ, "QUIT_AFTER": "2"},
                capture_output=True,
                timeout=120,
            )
            assert first.returncode == 3, first.stderr.decode()
            bots.append(
                subprocess.Popen(
                    [sys.executable, str(quitter), address, tokens["py"]],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            out, _ = league.communicate(timeout=600)
        finally:
            league.kill()
            for bot in bots:
                try:
                    bot.wait(timeout=30)  # the league's shutdown ends them
                except subprocess.TimeoutExpired:
                    bot.kill()
    stderr = (tmp_path / "league.stderr").read_text(errors="replace")
    assert league.returncode == 0, stderr
    assert all(bot.returncode == 0 for bot in bots), [bot.returncode for bot in bots]

    standings = json.loads(out)
    assert standings["finished"]
    assert sorted(row["name"] for row in standings["standings"]) == ["c", "ghost", "js", "py"]

    with LeagueStore.open_existing(db) as store:
        names = store.bot_names()
        matches = store.matches()
    assert len(matches) == standings["matches_total"]

    def faults(match_index: int, name: str) -> list[str]:
        match = matches[match_index]
        seat = match.key.bots.index(names.index(name))
        return [f"{fault.kind}: {fault.detail}" for fault in match.result.seats[seat].faults]

    with_py = [i for i, m in enumerate(matches) if names.index("py") in m.key.bots]
    dropped = [i for i in with_py if faults(i, "py")]
    # Exactly one match holds the drop; the other seats of it played on without a fault.
    assert len(dropped) == 1, [faults(i, "py") for i in with_py]
    assert faults(dropped[0], "py")[0].startswith("eof")
    for other in ("js", "c"):
        if names.index(other) in matches[dropped[0]].key.bots:
            assert faults(dropped[0], other) == []
    # The reconnected bot played matches after the drop (the no-show's ones included).
    assert len(with_py) > 1
    for index in with_py:
        if index != dropped[0]:
            assert faults(index, "py") == []
    # The no-show is recorded in every match it missed; js and c never fault.
    for index, match in enumerate(matches):
        if names.index("ghost") in match.key.bots:
            assert any("no-show" in text for text in faults(index, "ghost"))
        for name in ("js", "c"):
            if names.index(name) in match.key.bots:
                assert faults(index, name) == [], faults(index, name)
    assert "ghost" in stderr and "no-show" in stderr
    # The organiser is told where the league listens and who connected, as news, not warnings.
    lines = stderr.splitlines()
    listening = f"listening for 4 remote bots on 127.0.0.1:{port} (absent bots are waited for"
    assert f"{listening} {WAIT} s)" in lines
    for name in ("js", "c", "py"):
        assert f"{name} connected from 127.0.0.1" in lines
    assert not any(line.startswith("warning:") and "connected" in line for line in lines)
