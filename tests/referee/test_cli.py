"""``newmarket match`` as a script sees it: exit codes, one-line errors, and the JSON result."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.match.log import LogError
from referee.tools.replay import verify_log
from tests.clirun import newmarket
from tests.match_logs import only_log

runner = CliRunner()
GOOD = f"{sys.executable} -m tests.referee.bots.good"
DIES = f"{sys.executable} -c 'import sys; sys.exit(3)'"  # starts, then exits before ready


def match(*args: str) -> tuple[int, str, str]:
    return newmarket("match", *args)


def test_a_match_prints_one_json_object_and_writes_a_log_that_replays(tmp_path: Path) -> None:
    code, out, _err = match(
        "--bot", "random", "--bot", "lowest", "--bot", GOOD,
        "--seed", "9", "--hands", "3", "--log-dir", str(tmp_path), "--json",
    )  # fmt: skip
    assert code == 0
    log = only_log(tmp_path)
    data = json.loads(out)
    assert data["seed"] == 9 and data["hands"] <= 3
    assert data["rules"]["hand_limit"] == 3
    assert [seat["name"] for seat in data["seats"]] == ["random", "lowest", "good"]
    for seat in data["seats"]:
        assert set(seat) >= {"seat", "name", "place", "chips", "status", "faults"}
        assert seat["status"] == "ok" and seat["faults"] == []
    assert verify_log(log).result.places == [seat["place"] for seat in data["seats"]]


def test_a_table_prints_places_and_the_log(tmp_path: Path) -> None:
    code, out, _err = match(
        "--bot", "random", "--bot", "random", "--bot", "random",
        "--rules", "stops", "--seed", "1", "--log-dir", str(tmp_path),
    )  # fmt: skip
    assert code == 0
    log = only_log(tmp_path)
    assert "random#2" in out and "random#3" in out
    # Off a terminal nothing is wrapped at 80 columns or cut: a script can read each line.
    assert f"Log: {log}   (newmarket replay {log})" in out.splitlines()


def test_a_table_in_a_pipe_keeps_every_word_and_each_line_whole(tmp_path: Path) -> None:
    log_dir = tmp_path / ("a-long-directory-name-" * 3)
    code, out, err = match(
        "--bot", "random", "--bot", "lowest", "--bot", DIES, "--hands", "2",
        "--seed", "4", "--log-dir", str(log_dir),
    )  # fmt: skip
    assert code == 0
    log = only_log(log_dir)
    lines = out.splitlines()
    # What is about to be played: on stderr, stdout is the result.
    notes = err.splitlines()
    assert notes[0].startswith("sandbox ") and notes[1].endswith(f"log {log}")
    assert "…" not in out
    assert any("disqualified" in line and "startup" in line for line in lines)


def test_a_bot_that_dies_at_start_up_is_its_fault_not_an_error(tmp_path: Path) -> None:
    code, out, _err = match(
        "--bot", "random", "--bot", "lowest", "--bot", DIES, "--hands", "2",
        "--log-dir", str(tmp_path), "--json",
    )  # fmt: skip
    assert code == 0
    seat = json.loads(out)["seats"][2]
    assert seat["status"] == "disqualified"
    assert seat["faults"][0]["kind"] == "startup"


def test_a_program_that_cannot_start_is_a_usage_error_before_any_bot_starts(
    tmp_path: Path,
) -> None:
    script = tmp_path / "bot.sh"
    script.write_text("#!/bin/sh\n")  # not executable
    log_dir = tmp_path / "logs"
    for bot, why in [
        ("/no/such/program", "program '/no/such/program' does not exist"),
        (str(script), f"program '{script}' is not executable"),
        ("python3 no_such_bot.py", "script 'no_such_bot.py' does not exist"),
    ]:
        code, out, err = match(
            "--bot", "random", "--bot", "lowest", "--bot", bot, "--log-dir", str(log_dir)
        )
        assert (code, out) == (2, ""), err
        assert err.count("\n") == 1 and err.startswith("error: --bot: ") and why in err, err
    assert not log_dir.exists() or not any(log_dir.iterdir())  # no match was played


def test_a_seat_is_named_by_name_equals_command(tmp_path: Path) -> None:
    code, out, err = match(
        "--bot", "alice=random", "--bot", f"bob={GOOD}", "--bot", "lowest", "--hands", "1",
        "--seed", "2", "--log-dir", str(tmp_path), "--json",
    )  # fmt: skip
    assert code == 0, err
    assert [seat["name"] for seat in json.loads(out)["seats"]] == ["alice", "bob", "lowest"]


THREE = ["--bot", "random"] * 3


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--bot", "random", "--bot", "random"], "--bot: a table seats 3 to 8 bots, got 2"),
        ([*THREE, "--rules", "poker"], "--rules: unknown preset 'poker'"),
        ([*THREE, "--option", "lead_suit"], "--option 'lead_suit': expected KEY=VALUE"),
        ([*THREE, "--option", "lead_suit=up"], "--option: lead_suit: 'up' is not one of"),
        ([*THREE, "--option", "colour=red"], "--option: unknown rule option 'colour'"),
        ([*THREE, "--hands", "0"], "--hand-limit: must be at least 1"),
        ([*THREE, "--hand-limit", "x"], "Invalid value for '--hand-limit'"),
        ([*THREE, "--no-such-flag"], "No such option: --no-such-flag"),
        (["--rules", "stops"], "Missing option '--bot'"),
        ([*THREE, "--move-time", "0"], "--move-time: must be a number of seconds > 0"),
        ([*THREE, "--time-bank", "-1"], "--time-bank: must be a number of seconds >= 0"),
        ([*THREE, "--max-faults", "0"], "--max-faults: must be a whole number >= 1"),
        ([*THREE, "--transport", "udp"], "--transport: 'udp' is not stdio or tcp"),
        ([*THREE, "--bot", "'open"], '--bot: bot "\'open": No closing quotation'),
        ([*THREE, "--option", "end_players=3"], "--bot: 3 bots, but the rules end the match at 3"),
    ],
)
def test_bad_arguments_are_one_line_naming_the_argument(
    tmp_path: Path, args: list[str], named: str
) -> None:
    code, out, err = match(*args, "--log-dir", str(tmp_path))
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert named in lines[0], lines[0]


def test_a_log_that_fills_the_disk_mid_match_is_one_error_line(tmp_path: Path) -> None:
    # The log is DIR/MATCH-ID.jsonl, and with --seed 5 the match id is the UTC second it
    # starts, then -5: every name of the next ten minutes is a link to a full disk.
    start = datetime.now(UTC)
    links = []
    for second in range(-2, 600):
        stamp = (start + timedelta(seconds=second)).strftime("%Y%m%d-%H%M%S")
        links.append(tmp_path / f"{stamp}-5.jsonl")
        links[-1].symlink_to("/dev/full")
    code, _out, err = match(
        "--bot", "random", "--bot", "lowest", "--bot", "boodle", "--hands", "2",
        "--seed", "5", "--log-dir", str(tmp_path),
    )  # fmt: skip
    assert code == 1
    assert "Traceback" not in err
    log = next(link for link in links if f" log {link}\n" in err)  # the one it was told
    assert err.splitlines()[-1] == (
        f"error: the match stopped: [Errno 28] No space left on device: '{log}'"
    )


def test_an_unwritable_log_is_a_bad_argument(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, _out, err = match("--bot", "random", "--bot", "random", "--bot", "random",
                            "--log-dir", str(blocker))  # fmt: skip
    assert code == 2 and err.startswith("error: --log-dir: cannot write")
    # The older spelling, --log FILE, is named as it was given.
    code, _out, err = match("--bot", "random", "--bot", "random", "--bot", "random",
                            "--log", str(blocker / "m.jsonl"))  # fmt: skip
    assert code == 2 and err.splitlines()[-1].startswith("error: --log: cannot write"), err


def test_ctrl_c_ends_every_bot_and_keeps_the_log(tmp_path: Path) -> None:
    marker = f"marker-{os.getpid()}-{time.time_ns()}"
    bot = f"{GOOD} {marker}"
    command = [sys.executable, "-m", "referee.cli", "match", "--bot", bot, "--bot", bot,
               "--bot", bot, "--hands", "100000", "--option", "starting_chips=1000000",
               "--log-dir", str(tmp_path)]  # fmt: skip
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # a shell's background job ignores SIGINT; this child must not
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 30
    logs: list[Path] = []
    while time.monotonic() < deadline:
        logs = list(tmp_path.glob("*.jsonl"))
        if logs and logs[0].stat().st_size >= 20_000:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _out, err = process.communicate(timeout=30)
    assert process.returncode == 130
    log = only_log(tmp_path)
    assert err.decode().strip().endswith(f"interrupted; the log so far is in {log}")
    assert not [pid for pid in os.listdir("/proc") if pid.isdigit() and marker in _cmdline(pid)]
    # the log is a readable prefix: every line whole, the result missing
    with pytest.raises(LogError, match="before the match's result"):
        verify_log(log)


def _cmdline(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().decode(errors="replace")
    except OSError:
        return ""
