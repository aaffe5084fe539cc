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
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from engine import preset
from referee.bots import BotSpec, resolve_bot
from referee.match import play_match
from referee.sandbox import detect, resolve
from referee.session import open_bots
from referee.timecontrol import TimeControl
from tests.hostile.test_isolation import Listener

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
    from referee.league.remote_pool import open_remote_pool
    from referee.remote import write_tokens
    from referee.sandbox import ENV_SANDBOX, Limits, setting_to_env

    monkeypatch.setenv(ENV_SANDBOX, setting_to_env("auto", Limits()))
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
    ) as pool:
        session = await pool.local.session(1)
        assert session.handshaken and session.process is not None
        assert session.sandbox is not None and session.sandbox.isolation is not None
        assert session.process.isolated
