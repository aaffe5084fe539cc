"""A remote league with strangers at its door: it finishes, with the right verdicts.

One real ``newmarket league`` process with two local bots and one remote bot
(the nested-JSON bot, bridged by ``newmarket connect``).  Before the remote
bot joins, a stranger sends ten kilobytes of nested JSON as its ``ready`` and
another guesses tokens.  What the organiser sees: the start line says the
deals are plain (remote bots could remember duplicate ones), each wrong token
is one line, and the league finishes with the nested bot's ``malformed``
faults as the only faults.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from referee.league.league_db import LeagueStore
from tests.remote.test_remote_league import NEWMARKET, ROOT, free_port, wait_for_listener


def stranger(port: int, line: bytes) -> dict[str, object]:
    """Connect, read hello, send ``line``; the lobby's answer (a fault) as JSON."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        reader = sock.makefile("rb")
        assert json.loads(reader.readline())["type"] == "hello"
        sock.sendall(line + b"\n")
        answer: dict[str, object] = json.loads(reader.readline())
        assert reader.readline() == b""  # then closed
        return answer


def test_a_nested_ready_and_wrong_tokens_do_not_stop_a_remote_league(tmp_path: Path) -> None:
    port = free_port()
    league_file = tmp_path / "door.toml"
    league_file.write_text(
        f"""
[league]
seed = 4
table_size = 3
hand_limit = 2
logs = false

[time_control]
startup_time = 60
move_time = 10

[remote]
host = "127.0.0.1"
port = {port}
wait = 120

[[bots]]
name = "far"
remote = true

[[bots]]
name = "lowest"
command = "lowest"

[[bots]]
name = "random"
command = "random"
"""
    )
    issued = subprocess.run(
        [*NEWMARKET, "tokens", str(league_file)], cwd=ROOT, capture_output=True, text=True
    )
    token = dict(line.split(" ", 1) for line in issued.stdout.splitlines())["far"]
    db = tmp_path / "door.db"
    with (tmp_path / "league.stderr").open("wb") as logs:
        league = subprocess.Popen(
            [*NEWMARKET, "league", str(league_file), "--db", str(db), "--json"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=logs,
        )
        bot = None
        try:
            wait_for_listener(port, league, 60)
            bomb = stranger(port, b"[" * 10_000 + b"]" * 10_000)
            assert bomb["type"] == "fault" and "nested more than 32 deep" in str(bomb["detail"])
            for guess in ("guess-1", "guess-2"):
                ready = {"type": "ready", "name": "x", "protocol": 1, "token": guess}
                refusal = stranger(port, json.dumps(ready).encode())
                assert "wrong or missing token" in str(refusal["detail"])
            bot = subprocess.Popen(
                [
                    *NEWMARKET,
                    "connect",
                    f"127.0.0.1:{port}",
                    "--token",
                    token,
                    "--",
                    sys.executable,
                    "-m",
                    "tests.hostile.proto_bots.nested",
                ],
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            out, _ = league.communicate(timeout=600)
        finally:
            league.kill()
            if bot is not None:
                try:
                    bot.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    bot.kill()
    stderr = (tmp_path / "league.stderr").read_text(errors="replace")
    assert league.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert "deals: plain (a fresh deal per match), since remote bots could remember" in stderr
    wrong = [line for line in stderr.splitlines() if "lobby: wrong or missing token" in line]
    assert len(wrong) == 2, stderr
    standings = json.loads(out)
    assert standings["finished"]
    with LeagueStore.open_existing(db) as store:
        assert store.identity()["schedule"]["duplicate"] is False
        names = store.bot_names()
        matches = store.matches()
    assert len(matches) == 3
    far = names.index("far")
    kinds = [
        fault.kind
        for match in matches
        for seat, bot_index in enumerate(match.key.bots)
        for fault in match.result.seats[seat].faults
        if bot_index == far
    ]
    assert kinds == ["malformed", "malformed"]  # its first two replies, in its first match
    others = [
        fault
        for match in matches
        for seat, bot_index in enumerate(match.key.bots)
        for fault in match.result.seats[seat].faults
        if bot_index != far
    ]
    assert others == []


def test_duplicate_deals_with_remote_bots_only_when_the_league_file_asks(tmp_path: Path) -> None:
    from referee.league.deals import deal_note
    from referee.league.league_file import load_config

    def config(schedule: str, remote: bool = True) -> tuple[bool, str | None]:
        path = tmp_path / "deals.toml"
        far = "remote = true" if remote else 'command = "lowest"'
        path.write_text(
            f"""
[league]
seed = 1
table_size = 3
{schedule}
[[bots]]
name = "far"
{far}

[[bots]]
name = "a"
command = "lowest"

[[bots]]
name = "b"
command = "lowest"
"""
        )
        loaded = load_config(path)
        return loaded.schedule.duplicate, deal_note(loaded)

    duplicate, note = config("")
    assert not duplicate and note is not None and note.startswith("deals: plain")
    duplicate, note = config("[schedule]\nduplicate = true\n")
    assert duplicate and note is not None and "remote bots can remember a deal" in note
    assert config("[schedule]\nduplicate = false\n")[0] is False
    assert config("", remote=False) == (True, None)  # local bots: duplicate, nothing to say
