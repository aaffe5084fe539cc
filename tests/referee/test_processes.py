"""Real bot processes that crash, hang up, flood, hide behind grandchildren or refuse to start.

What only a real process can show: exit statuses and signals, a grandchild
holding the pipes open, SIGTERM ignored, stderr kept, and that no process of
a bot's tree is left once its session ends.  The bots are the small scripts
in ``tests/referee/bots/``.  Limits are generous (whole seconds) so a loaded
machine cannot change a verdict: the faults these bots make are not close
calls, and nothing here waits for a limit unless the test is about one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import trio
import trio._core._thread_cache as thread_cache

from engine import preset
from protocol.framing import LineFramer
from referee.bots import BotSpec, Transport
from referee.match.log import read_log
from referee.match.referee import play_match
from referee.match.result import MatchResult
from referee.tools.replay import verify_log
from referee.transport.process import group_members, open_child
from referee.transport.session import open_bot, open_bots
from referee.transport.timecontrol import TimeControl
from tests.tables import open_table

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")

REPO = Path(__file__).resolve().parents[2]
RULES = preset("boodle").with_options({"hand_limit": 2})
CONTROL = TimeControl(move_time=2.0, startup_time=10.0)


def bot(
    script: str,
    *args: str,
    name: str | None = None,
    transport: Transport = "stdio",
    env: dict[str, str] | None = None,
) -> BotSpec:
    command = (sys.executable, "-m", f"tests.referee.bots.{script}", *args)
    return BotSpec(name or script, command, cwd=REPO, env=env or {}, transport=transport)


def good(count: int = 2, transport: Transport = "stdio") -> list[BotSpec]:
    return [
        bot("good", name=f"good{i}", transport=transport, env={"TEST_BOT_SEED": str(i)})
        for i in range(count)
    ]


async def play_one(
    specs: Sequence[BotSpec],
    tmp_path: Path,
    control: TimeControl = CONTROL,
    first_startup: float | None = None,
) -> tuple[MatchResult, list[dict[str, Any]], list[int]]:
    """One match; returns the result, the log's records, and each bot's process group.

    ``first_startup``: the first bot's own start-up limit, timed alone
    (``tests.tables.open_table``)."""
    log = tmp_path / "match.jsonl"
    async with open_table(specs, control, first_startup=first_startup) as sessions:
        groups = [s.pgid for s in sessions if s.pgid is not None]
        result = await play_match(
            sessions, RULES, 5, time_control=control, match_id="p", log_path=log
        )
    verify_log(log)
    return result, [record for _, record in read_log(log)], groups


def assert_gone(groups: Sequence[int]) -> None:
    for pgid in groups:
        assert group_members(pgid) == [], f"processes of group {pgid} outlived the session"


def faults(result: MatchResult, seat: int = 0) -> list[tuple[str, str]]:
    return [(fault.kind, fault.detail) for fault in result.seats[seat].faults]


# ---------------------------------------------------------------- crashes


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("3", "exited with status 3; stderr: crash.py: dying on purpose"),
        ("0", "exited with status 0; stderr: crash.py: dying on purpose"),
        ("-9", "killed by signal 9 (SIGKILL); stderr: crash.py: dying on purpose"),
    ],
)
async def test_a_crash_mid_match_is_reported_with_its_exit_and_disqualifies(
    tmp_path: Path, code: str, expected: str
) -> None:
    result, records, groups = await play_one([bot("crash", "2", code), *good()], tmp_path)
    assert faults(result) == [("crash", expected)]
    assert result.seats[0].status == "disqualified"
    assert result.seats[0].place == 3
    stderr = [r for r in records if r["type"] == "stderr" and r["seat"] == 0]
    assert "dying on purpose" in stderr[0]["text"]
    assert_gone(groups)


async def test_a_crash_is_seen_even_when_a_grandchild_holds_the_pipes(tmp_path: Path) -> None:
    """The grandchild keeps stdout open, so no end of stream comes: the exit must be watched."""
    control = TimeControl(move_time=30.0)  # a timeout would take 30 s: the verdict must not
    started = trio.current_time()
    result, _records, groups = await play_one(
        [bot("grandchild", "crash"), *good()], tmp_path, control
    )
    assert faults(result)[0][0] == "crash"
    assert faults(result)[0][1].startswith("exited with status 4")
    assert trio.current_time() - started < 20
    assert_gone(groups)


async def test_closing_stdout_while_running_is_eof(tmp_path: Path) -> None:
    result, _records, groups = await play_one([bot("eof"), *good()], tmp_path)
    assert faults(result) == [("eof", "its output ended")]
    assert result.seats[0].status == "disqualified"
    assert_gone(groups)


async def test_an_over_long_line_is_judged_at_once_and_the_bot_ended(tmp_path: Path) -> None:
    started = trio.current_time()
    result, _records, groups = await play_one([bot("longline", "1", "300000"), *good()], tmp_path)
    [(kind, detail)] = faults(result)
    assert kind == "line_too_long" and "the limit is 65536" in detail
    assert trio.current_time() - started < 20  # not the 60 s the bot sleeps after the line
    assert_gone(groups)


# ---------------------------------------------------------------- misbehaviour over real pipes


async def test_a_slow_process_times_out_and_its_late_replies_are_discarded(
    tmp_path: Path,
) -> None:
    control = TimeControl(move_time=1.0, time_bank=0.0, margin=0.05)
    result, records, groups = await play_one([bot("slow", "1", "2.5"), *good()], tmp_path, control)
    kinds = [kind for kind, _ in faults(result)]
    assert kinds and set(kinds) == {"timeout"}
    assert faults(result)[0][1].startswith("no reply to request 1 within 1050 ms")
    assert next(r["id"] for r in records if r["type"] == "late" and r["seat"] == 0) == 1
    assert_gone(groups)


@pytest.mark.parametrize(
    ("script", "kinds"),
    [
        ("garbage", {"malformed"}),
        ("twice", {"protocol"}),
        ("illegal", {"illegal"}),
        ("wrongshape", {"malformed"}),
    ],
)
async def test_misbehaving_processes_get_their_faults_and_are_disqualified(
    tmp_path: Path, script: str, kinds: set[str]
) -> None:
    result, _records, groups = await play_one([bot(script), *good()], tmp_path)
    assert {kind for kind, _ in faults(result)} == kinds
    assert len(faults(result)) == 3
    assert result.seats[0].status == "disqualified"
    assert [seat.status for seat in result.seats[1:]] == ["ok", "ok"]
    assert_gone(groups)


# ---------------------------------------------------------------- start-up


async def test_start_up_failures_are_faults_not_errors(tmp_path: Path) -> None:
    specs = [
        bot("silent", name="silent"),
        bot("silent", "exit", name="exits"),
        BotSpec("missing", ("/nonexistent/bot",)),
        *good(),
    ]
    # Only the silent bot waits out its limit: the others start first under a generous one,
    # so a loaded machine cannot turn the exit's verdict, or the good bots', into a timeout.
    result, _records, groups = await play_one(specs, tmp_path, first_startup=1.5)
    [(kind, detail)] = faults(result, 0)
    assert (kind, detail.split("; ")[0]) == ("startup", "no ready within 1.5 s")
    assert faults(result, 1) == [
        ("startup", "exited with status 2 before ready; stderr: silent.py: no ready from me")
    ]
    assert faults(result, 2) == [
        ("startup", "cannot start '/nonexistent/bot': No such file or directory")
    ]
    assert [seat.status for seat in result.seats] == ["disqualified"] * 3 + ["ok", "ok"]
    assert sorted(seat.place for seat in result.seats[:3]) == [3, 4, 5]
    assert_gone(groups)


async def test_a_bot_survives_across_matches_and_exits_on_shutdown(tmp_path: Path) -> None:
    async with open_bots(good(3), CONTROL) as sessions:
        pids = [s.process.pid for s in sessions if s.process is not None]
        for number in range(3):
            result = await play_match(
                sessions, RULES, number, time_control=CONTROL, match_id=f"m{number}"
            )
            assert all(seat.status == "ok" and not seat.faults for seat in result.seats)
        assert [s.process.pid for s in sessions if s.process is not None] == pids
    for session in sessions:
        assert session.process is not None and session.process.status == 0
    assert_gone(pids)


FAREWELL = """
import json, sys
for line in sys.stdin:
    if json.loads(line).get("type") == "hello":
        print(json.dumps({"type": "ready", "name": "farewell", "protocol": 1}), flush=True)
print("said after the shutdown", file=sys.stderr, flush=True)
"""


async def test_a_bot_s_stderr_file_has_what_it_wrote_as_it_ended(tmp_path: Path) -> None:
    # A table worker keeps each process's stderr in one file per bot: the last
    # lines, written after the referee stopped listening, are kept too.
    spec = BotSpec("farewell", (sys.executable, "-c", FAREWELL), cwd=REPO)
    path = tmp_path / "stderr" / "farewell.stderr"
    for _ in range(2):  # a bot's second process appends to its first's file
        async with open_bot(spec, CONTROL, stderr_path=path) as session:
            assert session.alive
    assert path.read_text().splitlines() == ["said after the shutdown"] * 2


async def test_each_match_s_log_has_the_stderr_its_bot_wrote_during_that_match(
    tmp_path: Path,
) -> None:
    # One process plays match after match (as a league's table reuses it): a line the bot
    # wrote just before its last reply of a match is that match's, not the next one's.
    spec = bot("tells_each_reply", name="tells")
    rules = preset("boodle").with_options({"hand_limit": 2})
    async with open_bots([spec, *good(2)], CONTROL) as sessions:
        for number in range(6):
            seats = sessions[number % 3 :] + sessions[: number % 3]
            log = tmp_path / f"m{number}.jsonl"
            result = await play_match(
                seats, rules, number, time_control=CONTROL, match_id=f"m{number}", log_path=log
            )
            seat = seats.index(sessions[0])
            [text] = [
                r["text"] for _, r in read_log(log) if r["type"] == "stderr" and r["seat"] == seat
            ]
            lines = text.splitlines()
            assert lines and all(line.startswith(f"m{number} reply ") for line in lines), lines
            assert len(lines) == result.seats[seat].decisions


async def test_a_tree_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    spec = bot("grandchild", "play", "term")
    async with open_bot(spec, CONTROL) as session:
        assert session.alive and session.pgid is not None
        pgid = session.pgid
        await trio.sleep(0.2)  # the grandchild is running by now
        assert len(group_members(pgid)) == 2
    assert_gone([pgid])


# ---------------------------------------------------------------- TCP


async def test_a_match_over_tcp(tmp_path: Path) -> None:
    result, records, groups = await play_one(good(3, transport="tcp"), tmp_path)
    assert all(seat.status == "ok" for seat in result.seats)
    assert [bot["transport"] for bot in records[0]["bots"]] == ["tcp"] * 3
    assert_gone(groups)


async def test_a_wrong_token_is_refused(tmp_path: Path) -> None:
    wrong = bot("good", transport="tcp", env={"TEST_BOT_TOKEN": "guess"}, name="guesser")
    result, _records, groups = await play_one([wrong, *good(2, "tcp")], tmp_path)
    [(kind, detail)] = faults(result)
    assert kind == "startup"
    # The bot gives up when its connection is closed, so it exits long before the (generous)
    # deadline: it is told why, whatever the machine's load.
    assert "refused: wrong or missing token in ready" in detail
    assert_gone(groups)


async def test_a_remote_bot_connects_with_its_token(tmp_path: Path) -> None:
    """A bot the referee did not start: the operator passes it the address and the token."""
    addresses: list[tuple[str, int, str]] = []

    def listening(host: str, port: int, token: str) -> None:
        addresses.append((host, port, token))

    processes: list[trio.Process] = []

    async def start_remote() -> None:
        while not addresses:
            await trio.sleep(0.01)
        host, port, token = addresses[0]
        env = {**os.environ, "NEWMARKET_CONNECT": f"{host}:{port}", "NEWMARKET_TOKEN": token}
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "tests.referee.bots.good"], cwd=REPO, env=env
        )
        processes.append(process)

    remote = BotSpec("remote", (), transport="tcp")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(start_remote)
        async with open_bot(remote, CONTROL, on_listen=listening) as session:
            assert session.alive, session.death
            async with open_bots(good(2), CONTROL) as others:
                result = await play_match(
                    [session, *others], RULES, 3, time_control=CONTROL, match_id="r"
                )
    assert session.reported_name == "good"
    assert all(seat.status == "ok" for seat in result.seats)
    with trio.fail_after(10):
        assert await processes[0].wait() == 0  # it read shutdown and exited


async def test_a_stalled_or_wrong_connection_does_not_keep_the_real_bot_out() -> None:
    """TCP: a connection that says nothing and one with a wrong token; then the real one."""
    addresses: list[tuple[str, int, str]] = []
    streams: list[trio.SocketStream] = []

    async def ready(stream: trio.SocketStream, token: str) -> None:
        framer = LineFramer()
        while not framer.feed(await stream.receive_some(65536)):
            pass  # hello
        line = {"type": "ready", "name": "remote", "protocol": 1, "token": token}
        await stream.send_all(json.dumps(line).encode() + b"\n")

    async def connect() -> None:
        while not addresses:
            await trio.sleep(0.01)
        host, port, token = addresses[0]
        streams.append(await trio.open_tcp_stream(host, port))  # stalls: never speaks
        wrong = await trio.open_tcp_stream(host, port)
        streams.append(wrong)
        await ready(wrong, "guess")
        right = await trio.open_tcp_stream(host, port)
        streams.append(right)
        await ready(right, token)

    remote = BotSpec("remote", (), transport="tcp")
    control = TimeControl(startup_time=10.0)
    started = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(connect)
        async with open_bot(
            remote, control, on_listen=lambda h, p, t: addresses.append((h, p, t))
        ) as session:
            assert session.alive, session.death
            assert session.reported_name == "remote"
            assert trio.current_time() - started < 5  # not held up by the stalled one
    for stream in streams:
        await stream.aclose()


# trio retires a worker thread idle for IDLE_TIMEOUT seconds (10); the bot must outlive
# that.  The test sets it to 1 s: the same retirement, without waiting ten seconds for it.
TRIO_THREAD_IDLE_RETIREMENT = 1.0


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_a_bot_that_dies_with_its_parent_outlives_the_thread_that_forked_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """--die-with-parent (PR_SET_PDEATHSIG) follows the forking *thread*, not the process.

    Bots forked from a trio worker thread were SIGKILLed when trio retired that
    thread, 10 s after it went idle: an isolated bot thinking a second a move
    died mid-match.  Here a bot under bubblewrap's --die-with-parent must still
    run after the forking thread would have been retired.
    """
    probe = subprocess.run(
        ["bwrap", "--dev-bind", "/", "/", "--die-with-parent", "true"], capture_output=True
    )
    if probe.returncode != 0:
        pytest.skip(f"bubblewrap cannot run here: {probe.stderr.decode().strip()}")
    # Read by each idle worker as it starts waiting, so every thread open_child uses.
    monkeypatch.setattr(thread_cache, "IDLE_TIMEOUT", TRIO_THREAD_IDLE_RETIREMENT)

    async def main() -> int | None:
        child = await open_child(
            ["bwrap", "--dev-bind", "/", "/", "--die-with-parent", "sleep", "600"],
            stdio=False,
            cwd=None,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
        try:
            await trio.sleep(TRIO_THREAD_IDLE_RETIREMENT + 3.0)
            return child.poll()
        finally:
            child.kill()
            await child.wait()

    assert trio.run(main) is None, "the bot was killed when the thread that forked it retired"
