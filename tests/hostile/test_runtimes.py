"""Real runtimes play inside the sandbox: Python, node, a compiled C bot, the JVM, and TCP.

One match seats the bundled Python, JavaScript and C bots, a Java bot compiled
here with ``javac`` and started from its own directory, and a TCP-transport
bot, all under ``auto`` with the isolation this machine gives.  Every seat
must play the whole match without a fault: the sandbox gives each runtime
what it needs (its interpreter's prefix, its own directory, a scratch
``/tmp``), and the TCP bot reaches its referee through the relay, while a
listener on the host's loopback stays out of its reach.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from engine import preset
from referee.bots import BotSpec, resolve_bot
from referee.match.referee import play_match
from referee.sandbox import detect, resolve
from referee.transport.session import open_bots
from referee.transport.timecontrol import TimeControl
from tests.hostile.test_isolation import UNPRIVILEGED, Listener, unprivileged_home
from tests.match_logs import kept_logs, log_records

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes"),
    pytest.mark.skipif(
        detect().isolation is None,
        reason=f"no isolation on this machine: {detect().isolation_why}",
    ),
]

HERE = Path(__file__).resolve().parent
RULES = preset("boodle").with_options({"hand_limit": 2})
# The JVM's start-up on a loaded two-core machine is slow: generous real limits.
CONTROL = TimeControl(move_time=10.0, time_bank=0.0, startup_time=60.0, margin=5.0)


def java_bot(tmp_path: Path) -> BotSpec | None:
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        return None
    home = tmp_path / "java-bot"
    home.mkdir()
    shutil.copy(HERE / "runtime_bots" / "Bot.java", home / "Bot.java")
    subprocess.run([javac, "Bot.java"], cwd=home, check=True, timeout=300)
    (home / "Bot.java").unlink()  # only the class file goes into the sandbox
    return BotSpec("java", (java, "-cp", ".", "Bot"), cwd=home)


async def test_python_node_c_java_and_tcp_bots_play_inside_the_sandbox(tmp_path: Path) -> None:
    java = java_bot(tmp_path)
    if java is None:
        pytest.skip("no JDK here (javac and java): the Java bot cannot be built")
    bundled = [resolve_bot(name) for name in ("random", "js", "c")]
    unavailable = [spec.unavailable for spec in bundled if spec.unavailable]
    if unavailable:
        pytest.skip(f"a bundled bot cannot run here: {unavailable[0]}")
    listener = Listener()
    try:
        targets = json.dumps({"ports": [listener.port]})
        tcp = BotSpec(
            "tcp",
            (sys.executable, "attack.py", "net_escape"),
            cwd=HERE / "attack_bots",
            env={"ATTACK_TARGETS": targets, "ATTACK_EARLY": "1"},
            transport="tcp",
        )
        sandbox = resolve("auto")
        specs = [*bundled, java, tcp]
        async with open_bots(specs, CONTROL, sandbox=sandbox) as sessions:
            deaths = {s.name: s.death.detail for s in sessions if s.death is not None}
            assert deaths == {}
            result = await play_match(
                sessions, RULES, 11, time_control=CONTROL, match_id="runtimes"
            )
            tcp_stderr = sessions[-1].stderr_text()
        await trio.sleep(0)
    finally:
        listener.close()
    for seat in result.seats:
        assert seat.faults == [] and seat.status == "ok", seat
    assert "ATTACK DONE" in tcp_stderr  # connected through its relay, then attacked
    assert f"TRIED connect 127.0.0.1:{listener.port}: refused" in tcp_stderr, tcp_stderr
    assert listener.reached == 0
    assert any("bubblewrap" in item for item in sandbox.active())


async def test_a_league_with_remote_bots_sandboxes_its_local_bots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its local bots start in the league process, not a table worker: the same sandbox."""
    from referee.sandbox import Limits, setting_to_env
    from referee.tables.remote_pool import open_remote_pool
    from referee.transport.lobby import write_tokens

    bots = [BotSpec("far", (), transport="tcp"), resolve_bot("random", "near")]
    tokens = tmp_path / "tokens.json"
    write_tokens(tokens, {"far": "secret-token"})
    async with open_remote_pool(
        bots,
        CONTROL,
        lambda _job, _result: None,
        None,
        print,
        print,
        host="127.0.0.1",
        port=0,
        wait=5.0,
        tokens_path=tokens,
        sandbox=setting_to_env("auto", Limits()),
    ) as pool:
        session = await pool.local.session(1)
        assert session.handshaken and session.process is not None
        assert session.sandbox is not None and session.sandbox.isolation is not None
        assert session.process.isolated


def runtime_league(home: Path) -> Path | None:
    """A league seating one bot of every runtime a league or the server offers, in ``home``.

    The bundled Python, node, C and bash bots; a Java bot and a raw binary (the C bot
    compiled here) each in its own directory; a participant's ``python3 main.py`` found on
    PATH (a pyenv shim where there is one); and a bundled bot over TCP.  None (skip) where
    this machine lacks a JDK or a bundled bot's runtime.
    """
    java = java_bot(home)
    unavailable = [resolve_bot(name).unavailable for name in ("js", "c", "bash")]
    if java is None or any(unavailable) or shutil.which("cc") is None:
        return None
    binary = home / "binary-bot"
    binary.mkdir()
    c_source = HERE.parents[1] / "bots" / "c" / "bot.c"
    subprocess.run(["cc", "-O2", "-o", str(binary / "bot"), str(c_source)], check=True)
    script = home / "script-bot"
    script.mkdir()
    shutil.copy(HERE.parent / "server" / "bots" / "plain.py", script / "main.py")
    seats = {
        "random": 'command = "random"',
        "js": 'command = "js"',
        "c": 'command = "c"',
        "bash": 'command = "bash"',
        "java": 'command = ["java", "-cp", ".", "Bot"]\ncwd = "java-bot"',
        "binary": 'command = ["./bot"]\ncwd = "binary-bot"',
        "python3": 'command = ["python3", "main.py"]\ncwd = "script-bot"',
        "tcp": 'command = "lowest"\ntransport = "tcp"',
    }
    bots = "".join(f'\n[[bots]]\nname = "{name}"\n{body}\n' for name, body in seats.items())
    league = home / "league.toml"
    league.write_text(
        '[league]\nseed = 3\ntable_size = 8\nhand_limit = 2\nlogs = "logs"\n'
        '\n[schedule]\nkind = "round_robin"\nduplicate = false\n'
        "\n[time_control]\nmove_time = 10.0\ntime_bank = 0.0\nmargin = 5.0\nstartup_time = 60.0\n"
        '\n[sandbox]\nlevel = "auto"\n' + bots
    )
    return league


def play_runtime_league(home: Path, wrapper: list[str]) -> str:
    """Play ``runtime_league`` (``wrapper`` in front of the referee); every seat must be clean."""
    league = runtime_league(home)
    if league is None:
        pytest.skip("no JDK, cc, node or bash here: not every runtime can be tried")
    if wrapper:
        for path in [home, *home.rglob("*")]:
            os.chown(path, UNPRIVILEGED, UNPRIVILEGED, follow_symlinks=False)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
    done = subprocess.run(
        [*wrapper, sys.executable, "-m", "referee.cli", "league", str(league), "--jobs", "1", "-v"],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    logs = kept_logs(home / "logs")
    assert logs
    for log in logs:
        result = log_records(log)[-1]
        assert result["type"] == "result"
        for seat in result["seats"]:
            assert seat["faults"] == [] and seat["status"] == "ok", (seat, done.stderr[-3000:])
    return done.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="the root variant needs a root referee")
def test_every_runtime_plays_in_a_league_of_a_root_referee(tmp_path: Path) -> None:
    assert "own uid per bot" in play_runtime_league(tmp_path, [])


def test_every_runtime_plays_in_a_league_of_an_unprivileged_referee() -> None:
    with unprivileged_home() as (home, wrapper):
        assert "the referee is not root" in play_runtime_league(home, wrapper)
