"""Hostile bots against what changed with reused bot processes, per-bot stderr files and
compact records: each attack is a real bot in a real league or match.

* Processes of one bot pass nothing to each other (``attack_bots/remember.py``): a table
  worker reuses a bot's process across deals and gives a duplicate group's rotations to
  different processes of it, so a note one leaves where another can read it would tell
  the second the hands the first held.  As root (each process its own uid) and as an
  unprivileged referee (every bot the operator's uid).
* A bot's stderr file is its own: ``echo-2``'s text never shows as ``echo``'s on the
  report, and a league refuses two names that would share one file.
* Whatever bytes a bot's replies are made of, the compact record keeps them exactly
  (``proto_bots/encodings.py``), and only that bot's seat carries a fault.
* A bot padding every reply with random JSON whitespace (``proto_bots/padded.py``):
  its match's record must not cost the disk hundreds of times a normal one's (it did:
  the log now counts such whitespace instead of keeping it).  Nor one repeating a reply's
  key with 64 kB of random letters before the value played (``proto_bots/doubled.py``).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from referee.league.league_file import ConfigError, parse_config
from referee.match import compact
from referee.match.archive import full_log_lines, keep_log
from referee.match.log import LogError
from referee.sandbox import detect
from referee.tools.replay import verify_log
from tests.clirun import newmarket
from tests.hostile.test_isolation import unprivileged_home
from tests.match_logs import log_records, only_log

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")

REPO = Path(__file__).resolve().parents[2]
ATTACKS = Path(__file__).resolve().parent / "attack_bots"
PROTO = f"{sys.executable} -m tests.hostile.proto_bots."
SUPPORT = detect()
NEEDS_ISOLATION = pytest.mark.skipif(
    SUPPORT.isolation is None, reason=f"no isolation on this machine: {SUPPORT.isolation_why}"
)


# ---------------------------------------------------------------- one bot's processes


def remember_league(home: Path, mark: str) -> str:
    """A duplicate league where ``remember`` plays 3 groups of 3 rotations at one worker."""
    return f"""
[league]
seed = 11
table_size = 3
hand_limit = 3
logs = "league-logs"

[schedule]
kind = "round_robin"
duplicate = true

[time_control]
move_time = 5.0
time_bank = 0.0
startup_time = 30.0

[sandbox]
level = "auto"

[[bots]]
name = "remember"
command = [{sys.executable!r}, "remember.py", {mark!r}]
cwd = {str(ATTACKS)!r}

[[bots]]
name = "random"
command = "random"

[[bots]]
name = "lowest"
command = "lowest"

[[bots]]
name = "longest"
command = "longest"
"""


def play_remember_league(home: Path, wrapper: list[str]) -> str:
    """The league run by ``wrapper`` (empty: as this process's user); ``remember``'s stderr."""
    import subprocess

    mark = f"NMREMEMBER-{os.getpid()}-{len(wrapper)}"
    (home / "league.toml").write_text(remember_league(home, mark))
    if wrapper and os.geteuid() == 0:
        os.chown(home / "league.toml", 65534, 65534)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
    done = subprocess.run(
        [*wrapper, sys.executable, "-m", "referee.cli", "league", "league.toml", "--jobs", "1"],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    files = sorted((home / "league-logs" / "stderr").glob("remember-*.stderr"))
    return "\n".join(path.read_text() for path in files)


def check_remembered_nothing(stderr: str) -> None:
    processes = [line for line in stderr.splitlines() if line.startswith("PROCESS ")]
    # Several processes, each reused for several deals: the case the attack is about.
    assert len(processes) >= 2 and any(not line.endswith(" deals 1") for line in processes)
    assert "NOTE /tmp: written" in stderr  # it could write: its own scratch
    assert "REMEMBERED" not in stderr, stderr
    for line in stderr.splitlines():
        if line.startswith("SIBLING "):  # only its own namespace's init (bwrap) is visible
            assert line.startswith("SIBLING 1 visible ") and "mem refused" in line, line


@NEEDS_ISOLATION
@pytest.mark.skipif(os.geteuid() != 0, reason="the root variant needs a root referee")
def test_processes_of_one_bot_pass_nothing_to_each_other_as_root(tmp_path: Path) -> None:
    check_remembered_nothing(play_remember_league(tmp_path, []))


@NEEDS_ISOLATION
def test_processes_of_one_bot_pass_nothing_to_each_other_under_an_unprivileged_referee() -> None:
    with unprivileged_home() as (home, wrapper):
        check_remembered_nothing(play_remember_league(home, wrapper))


# ---------------------------------------------------------------- stderr files


def test_a_bots_stderr_never_shows_on_the_report_page_of_a_bot_its_name_extends(
    tmp_path: Path,
) -> None:
    python = sys.executable
    (tmp_path / "league.toml").write_text(
        f"""
[league]
seed = 3
table_size = 3
hand_limit = 2
logs = "logs"

[schedule]
kind = "round_robin"
duplicate = false

[sandbox]
level = "none"

[[bots]]
name = "echo"
command = [{python!r}, "-m", "tests.hostile.proto_bots.good"]
cwd = {str(REPO)!r}

[[bots]]
name = "echo-2"
command = [{python!r}, "-m", "tests.hostile.proto_bots.stderr_forge", "m1"]
cwd = {str(REPO)!r}

[[bots]]
name = "random"
command = "random"
"""
    )
    league = str(tmp_path / "league.toml")
    code, _out, err = newmarket("league", league, "--jobs", "1")
    assert code == 0, err
    code, _out, err = newmarket("report", league, "--out", str(tmp_path / "site"))
    assert code == 0, err
    pages = {}
    for page in (tmp_path / "site" / "bots").glob("*.html"):
        text = page.read_text()
        pages[text.split("<title>", 1)[1].split(":", 1)[0]] = text
    assert "echo-2-1.stderr" in pages["echo-2"] and "FORGED-m1" in pages["echo-2"]
    assert "\\x1b[1A" in pages["echo-2"]  # the escape is shown, not obeyed
    assert "echo-2-1.stderr" not in pages["echo"]
    assert "FORGED-m1" not in pages["echo"]


def test_a_league_refuses_two_bot_names_that_would_share_a_stderr_file(tmp_path: Path) -> None:
    text = "[league]\ntable_size = 3\n" + "".join(
        f'[[bots]]\nname = "{name}"\ncommand = "random"\n' for name in ("a b", "c", "a_b")
    )
    with pytest.raises(ConfigError) as refused:
        parse_config(text, tmp_path / "league.toml")
    assert "bots[2].name" in str(refused.value)
    assert "would share the stderr file a_b-N.stderr" in str(refused.value)


# ---------------------------------------------------------------- compact records


def test_every_spelling_of_a_reply_is_kept_exactly_by_the_compact_record(tmp_path: Path) -> None:
    code, _out, err = newmarket(
        "match", "--bot", f"enc={PROTO}encodings", "--bot", "random", "--bot", "tracker",
        "--bot", f"enc2={PROTO}encodings", "--hands", "12", "--sandbox", "none",
        "--log-dir", str(tmp_path),
    )  # fmt: skip
    assert code == 0, err
    full = only_log(tmp_path)
    log = full.read_bytes()
    kept = keep_log(full, "compact")
    assert kept.suffix == ".nmr" and not full.exists()  # compacted, not left as it was
    assert b"".join(full_log_lines(kept)) == log
    records = log_records(kept)
    spelled = [r for r in records if r["type"] == "received" and r["seat"] in (0, 3)]
    assert any("\\u0074ype" in r["line"] for r in spelled)  # (the odd spellings were sent)
    assert any(r["line"].startswith("\t{") for r in spelled)
    result = records[-1]
    assert result["type"] == "result"
    for seat in result["seats"]:
        if seat["seat"] in (1, 2):
            assert seat["faults"] == [], seat  # nobody else blamed for its bytes


def record_bytes(bot: str, where: Path) -> int:
    """The compact record's bytes of a 4-hand match of ``bot`` against three bundled bots."""
    code, _out, err = newmarket(
        "match", "--bot", bot, "--bot", "random", "--bot", "tracker", "--bot", "lowest",
        "--hands", "4", "--seed", "5", "--sandbox", "none", "--log-dir", str(where),
    )  # fmt: skip
    assert code == 0, err
    return len(compact.compact(only_log(where).read_bytes()))


def test_a_bot_padding_its_replies_keeps_its_records_small(tmp_path: Path) -> None:
    honest = record_bytes(f"good={PROTO}good", tmp_path / "good")
    padded = record_bytes(f"pad={PROTO}padded", tmp_path / "padded")
    assert padded < 4 * honest, (honest, padded)  # (kept whole: about 300 times)
    records = log_records(only_log(tmp_path / "padded"))
    replies = [r for r in records if r["type"] == "received" and r["seat"] == 0]
    assert replies and all(60_000 < r["spaces"] < 65_000 for r in replies)  # counted
    assert all(len(r["line"]) < 100 for r in replies)
    assert records[-1]["seats"][0]["faults"] == []  # whitespace is free: no fault
    verify_log(only_log(tmp_path / "padded"))


def test_only_whitespace_outside_a_messages_strings_is_left_out_of_its_log(tmp_path: Path) -> None:
    code, _out, err = newmarket(
        "match", "--bot", f"sp={PROTO}spaced", "--bot", "random", "--bot", "tracker",
        "--hands", "6", "--seed", "5", "--sandbox", "none", "--log-dir", str(tmp_path),
    )  # fmt: skip
    assert code == 0, err
    full = only_log(tmp_path)
    records = log_records(full)
    sent = [r for r in records if r["type"] == "received" and r["seat"] == 0][:7]
    assert len(sent) == 7, sent
    both, inside, kept64, over64, not_json, not_utf8, deep = sent
    # Spaces outside the strings counted and left out; those inside a string kept.
    assert both["spaces"] == 100 and f'"choice":"{" " * 40}","choice":' in both["line"]
    # 80 spaces, but only 40 outside the string: nothing to leave out.
    assert "spaces" not in inside and inside["line"].count(" ") == 80
    assert not any("unread" in r for r in sent)  # (the repeated key's 52 bytes are kept)
    assert "spaces" not in kept64 and kept64["line"].count(" ") == 64  # at most 64: kept
    assert over64["spaces"] == 65 and " " not in over64["line"]
    # Malformed lines are kept as they came (their faults quote them).
    assert "spaces" not in not_json and not_json["line"].endswith(" " * 1000)
    assert "spaces" not in not_utf8 and "line_base64" in not_utf8 and "line" not in not_utf8
    assert "spaces" not in deep and deep["line"].count(" ") == 1000
    seat = records[-1]["seats"][0]
    assert [f["kind"] for f in seat["faults"]] == ["malformed"] * 3, seat["faults"]
    verify_log(full)
    log = full.read_bytes()
    kept = keep_log(full, "compact")
    assert kept.suffix == ".nmr" and b"".join(full_log_lines(kept)) == log


def test_a_bot_repeating_a_key_with_junk_keeps_its_records_small(tmp_path: Path) -> None:
    honest = record_bytes(f"good={PROTO}good", tmp_path / "good")
    doubled = record_bytes(f"dbl={PROTO}doubled", tmp_path / "doubled")
    assert doubled < 4 * honest, (honest, doubled)  # (kept whole: about 400 times)
    records = log_records(only_log(tmp_path / "doubled"))
    replies = [r for r in records if r["type"] == "received" and r["seat"] == 0]
    assert replies and all(64_000 < r["unread"] < 65_000 for r in replies)  # counted
    assert all(len(r["line"]) < 100 and '"choice":' in r["line"] for r in replies)
    assert records[-1]["seats"][0]["faults"] == []  # valid JSON, a legal choice: no fault
    log = only_log(tmp_path / "doubled")
    verify_log(log)
    # A log whose count is not one is refused, naming the line.
    lines = log.read_bytes().splitlines(keepends=True)
    number = next(n for n, line in enumerate(lines, 1) if b'"unread":' in line)
    lines[number - 1] = re.sub(rb'"unread":\d+', b'"unread":"many"', lines[number - 1])
    log.write_bytes(b"".join(lines))
    with pytest.raises(LogError, match=f"line {number}: a received line's unread is not a count"):
        verify_log(log)
