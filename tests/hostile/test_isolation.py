"""Hostile participants against the isolation: each attack is a real bot in a real league.

One league seats every attack bot of ``tests/hostile/attack_bots/attack.py`` and a
victim at one table (one match: the attacks all happen at the first request,
so one match is as good as many, and cheap).  The referee is the real
``newmarket league`` command in a subprocess, so its pid, environment, open
match log and database are the real targets.  Secrets are planted where a
bot must not reach (the referee's environment, the victim's environment and
directory, the league file, a tokens file); a bot knows only their prefix and
reports every one it finds, so "learned nothing" is checked on its stderr.
"Touched nothing" is checked on the host: the database and league file, the
league directory, the victim's verdict, a listener on the host's loopback,
and no process left behind.

The league runs twice: with the referee as root (each bot its own uid), and
as an unprivileged user (the machine's user namespaces; every bot then has
that user's uid), each skipped with the reason where the machine cannot.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from referee.sandbox import detect, resolve
from tests.match_logs import kept_logs, log_records

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")

ATTACKS = Path(__file__).resolve().parent / "attack_bots"
REPO = Path(__file__).resolve().parents[2]
SUPPORT = detect()
NEEDS_ISOLATION = pytest.mark.skipif(
    SUPPORT.isolation is None, reason=f"no isolation on this machine: {SUPPORT.isolation_why}"
)
ATTACKERS = ("read_files", "proc_spy", "signals", "net_escape", "cgroup_escape", "fill_scratch")
UNPRIVILEGED = 65534  # nobody
# The first match's log and the victim's stderr, both open in the referee at the attack.
# The first match's log, live (full) and once kept (its compact record, which the bots of
# the later rotations try), and a bot's whole-session stderr file.
LOGS = ("c1-t00001-r0.jsonl", "c1-t00001-r0.nmr", "stderr/victim-1.stderr")


class Listener:
    """A TCP listener on the host's 127.0.0.1 that counts who reached it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = int(self.sock.getsockname()[1])
        self.reached = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.reached += 1
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cgroup_targets() -> list[str]:
    """The referee's own cgroups' ``cgroup.procs``: a bot that got in there would be free."""
    sandbox = resolve("auto")
    parents = [*sandbox.cgroups.values(), *([sandbox.cgroup_v2] if sandbox.cgroup_v2 else [])]
    return [str(parent / "cgroup.procs") for parent in parents]


def write_league(
    home: Path, planted: dict[str, str], port: int, mark: str, also_list: Sequence[str] = ()
) -> Path:
    """The league file, the victim's directory and a tokens file, with secrets planted.

    ``also_list``: more directories the file reader lists (and reads what it finds in).
    """
    victim = home / "victim"
    victim.mkdir()
    shutil.copy(ATTACKS / "attack.py", victim / "attack.py")
    (victim / "secret.txt").write_text(planted["victim_file"] + "\n")
    tokens = home / "league.tokens.json"
    tokens.write_text(json.dumps({"someone": planted["token"]}))
    db = home / "league.db"
    logs = home / "league-logs"
    targets = {
        "files": [str(home / "league.toml"), str(tokens), str(db), str(victim / "secret.txt")]
        + [str(logs / name) for name in LOGS],  # (by name: no listing needed)
        "dirs": [str(logs), str(victim), str(home), *also_list],
        "pids": ["REFEREE_PID"],
        "writable": [str(db), str(home / "league.toml")],
        # The league's one-writer lock: held by a bot, it would refuse the league's resume.
        "lockable": [f"{db}.lock"],
        "fill": [str(home), str(logs)],
        "ports": [port],
        "cgroup_procs": cgroup_targets(),
    }
    encoded = json.dumps(targets).replace('"REFEREE_PID"', "REFEREE_PID")
    bots = [
        f"""
[[bots]]
name = "victim"
command = [{json.dumps(sys.executable)}, "attack.py", "victim"]
cwd = "victim"
env = {{ VICTIM_SECRET = "{planted["victim_env"]}" }}
"""
    ]
    for attacker in ATTACKERS:
        # read_files has no cwd: it runs in the league file's directory, beside the database
        # and tokens, which the sandbox must not show it (only the script it names).
        where = "" if attacker == "read_files" else f"cwd = {json.dumps(str(ATTACKS))}"
        script = str(ATTACKS / "attack.py") if attacker == "read_files" else "attack.py"
        bots.append(
            f"""
[[bots]]
name = "{attacker}"
command = [{json.dumps(sys.executable)}, {json.dumps(script)}, "{attacker}", "{mark}"]
{where}
env = {{ ATTACK_TARGETS = {json.dumps(encoded)} }}
"""
        )
    text = f"""# {planted["league_file"]}
[league]
seed = 7
table_size = {1 + len(ATTACKERS)}
hand_limit = 2
logs = "league-logs"

[schedule]
kind = "round_robin"
duplicate = false

[time_control]
move_time = 5.0
time_bank = 0.0
margin = 2.0
startup_time = 30.0

[sandbox]
level = "auto"
memory_mb = 256
processes = 32
scratch_mb = 8
""" + "".join(bots)
    path = home / "league.toml"
    path.write_text(text)
    return path


def lingering(marker: str) -> list[int]:
    """The processes on this machine with ``marker`` as one of their arguments."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                cmdline = Path(entry.path, "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline.split(b"\0"):
                found.append(int(entry.name))
    return found


def play_attack_league(
    home: Path, wrapper: list[str], also_list: Sequence[str] = ()
) -> dict[str, Any]:
    """Run the league with ``wrapper`` in front of the referee; check what must always hold."""
    planted = {
        key: f"NMSECRET-{secrets.token_hex(8)}"
        for key in ("referee_env", "victim_env", "victim_file", "league_file", "token")
    }
    mark = f"NMLINGER-{secrets.token_hex(4)}"  # (other tests' bots on this machine have theirs)
    listener = Listener()
    try:
        league = write_league(home, planted, listener.port, mark, also_list)
        before = {"league": digest(league)}
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "REFEREE_SECRET": planted["referee_env"],
        }
        # $$ is the shell, which becomes the referee by exec: the bots are told its real pid.
        script = (
            'sed -i "s/REFEREE_PID/$$/" league.toml && exec "$@" -m referee.cli league '
            "league.toml --db league.db --jobs 1 -v"  # -v: the start line's full sandbox
        )
        done = subprocess.run(
            [*wrapper, "/bin/sh", "-c", script, "referee", sys.executable],
            cwd=home,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        listener.close()
    assert done.returncode == 0, done.stderr[-3000:]
    assert "bubblewrap" in done.stderr.splitlines()[0], done.stderr  # the start line says so
    stderr = {
        name: "\n".join(
            path.read_text() for path in (home / "league-logs" / "stderr").glob(f"{name}-*")
        )
        for name in ("victim", *ATTACKERS)
    }
    everything = "\n".join(stderr.values())
    # Learned nothing: no planted secret reached any bot.
    for key, value in planted.items():
        assert value not in everything, f"a bot read the {key} secret"
    assert "FOUND" not in everything
    for name in ATTACKERS:
        assert "ATTACK DONE" in stderr[name] or name == "fill_scratch", (name, stderr[name])
    # Touched nothing: the league file, the league directory, the listener, the processes.
    league_text = (home / "league.toml").read_text()
    assert "forged" not in league_text and digest(league) != before["league"]  # (the pid, by sed)
    assert not (home / "filler").exists() and not (home / "league-logs" / "filler").exists()
    assert listener.reached == 0, "a bot reached a listener on the host's loopback"
    assert lingering(mark) == [], "a process of a bot outlived the league"
    # The verdicts: the league finished; only the scratch filler has a fault.
    with sqlite3.connect(home / "league.db") as db:
        (stored,) = db.execute("SELECT COUNT(*) FROM matches").fetchone()
    logs = kept_logs(home / "league-logs")
    assert stored == len(logs) >= 1  # (every seat rotation of the one table)
    crashes = 0
    for log in logs:
        records = log_records(log)
        header, result = records[0], records[-1]
        assert result["type"] == "result"
        assert any("bubblewrap" in item for item in header["sandbox"]["active"])
        seats = {seat["name"]: seat for seat in result["seats"]}
        assert seats["victim"]["faults"] == [] and seats["victim"]["status"] == "ok"
        filler = seats["fill_scratch"]
        if filler["decisions"]:  # (a seat may go two hands without a request)
            (fault,) = filler["faults"]
            assert fault["kind"] == "crash" and "No space left on device" in fault["detail"]
            crashes += 1
        for name in ATTACKERS[:-1]:
            assert seats[name]["status"] == "ok", (name, seats[name])
    assert crashes >= 1
    assert "scratch full after" in stderr["fill_scratch"]
    assert "No space left on device" in stderr["fill_scratch"]
    (referee_pid,) = set(re.findall(r'\\"pids\\": \[(\d+)\]', league_text))
    return {
        "stderr": stderr,
        "planted": planted,
        "referee": done.stderr,
        "referee_pid": int(referee_pid),
    }


def refused(stderr: str, attempt: str) -> None:
    lines = [line for line in stderr.splitlines() if line.startswith(f"TRIED {attempt}")]
    assert lines, f"never tried {attempt}"
    for line in lines:
        assert ": refused: " in line, line


def check_attacks(outcome: dict[str, Any], home: Path) -> None:
    stderr = outcome["stderr"]
    # Every bot, the last of seven started too (after the others' pipes existed), holds its
    # stdio alone: no pipe to a neighbour, no match log, no database.
    for name, text in stderr.items():
        held = [line for line in text.splitlines() if line.startswith("held fds ")]
        assert held and all(line.startswith("held fds ['0', '1', '2'] ") for line in held), (
            name,
            held,
        )
    files = stderr["read_files"]
    for directory in ("/", "/dev", "/etc", "/var/tmp", "/run"):
        refused(files, f"create {directory}/nmforged")
    # /dev/shm is a tmpfs of its own, capped like the scratch (8 MiB here), not bwrap's
    # half-the-machine /dev.
    refused(files, "fill /dev/shm")
    assert "fill /dev/shm with 64 MiB: refused: OSError: [Errno 28]" in files
    # (The cwd is the league's directory, refused as root; the non-root league lies under /tmp,
    # so there it is a directory of the bot's own scratch: the host's is checked below.)
    forged = [line for line in files.splitlines() if "/nmforged: " in line]
    assert len(forged) == 7
    assert all(
        ": refused: " in line for line in forged if not line.startswith("TRIED create /tmp/")
    )
    assert not (home / "nmforged").exists()
    assert "TRIED create /tmp/nmscratch: succeeded" in files  # its scratch is writable
    for name in ("league.toml", "league.tokens.json", "league.db", "victim/secret.txt"):
        refused(files, f"read {home / name}")
    for name in LOGS:
        refused(files, f"read {home / 'league-logs' / name}")
    # (the names the bots tried are right: the first log is kept as a compact record)
    assert all((home / "league-logs" / name).is_file() for name in LOGS[1:])
    for directory in ("league-logs", "victim"):
        refused(files, f"list {home / directory}")
    refused(files, f"write {home / 'league.db'}")
    assert (home / "league.db.lock").is_file()  # (the name the bot tried is right)
    refused(files, f"lock {home / 'league.db.lock'}")
    refused(files, f"fill {home}")
    refused(files, "list /proc/")  # the referee's open files (its live match log)
    spy = stderr["proc_spy"]
    assert "visible pids [1, 2" in spy and "unsafe" not in spy  # its own pid namespace
    # Its namespace's init (bwrap, the bot's uid) holds nothing a bot could open its way
    # out through (a host file or directory), and its root and cwd are the bot's own view.
    links = re.findall(r"^link /proc/1/fd/\d+ -> (.*)$", spy, re.MULTILINE)
    assert links, spy
    for link in links:
        assert link == "/dev/null" or link.startswith(("pipe:", "anon_inode:")), links
    (view,) = re.findall(r"^/ shows (.*)$", spy, re.MULTILINE)
    assert f"/proc/1/root/ shows {view}" in spy, spy
    assert "/proc/1/cwd/ shows None" not in spy
    net = stderr["net_escape"]
    for kind in ("net", "mnt", "pid", "user", "ipc", "uts", "cgroup"):
        refused(net, f"setns /proc/{outcome['referee_pid']}/ns/{kind}")
    refused(net, "connect 127.0.0.1:")
    refused(net, "resolve example.com")
    escape = stderr["cgroup_escape"]
    for path in cgroup_targets():
        refused(escape, f"write {path}")
    refused(escape, "write /sys/fs/cgroup/memory/cgroup.procs")
    refused(escape, "mount cgroup2")
    refused(escape, "mount cgroup")
    refused(escape, "unshare user namespace")
    assert "TRIED linger: running as ['" in escape  # (and play_attack_league found it gone)
    signals = stderr["signals"]
    assert "unsafe" not in signals and "TRIED SIGKILL -1" in signals, signals
    # Of the pids 1 to 65535, only its namespace's init and itself answer signal 0: no
    # sibling bot, worker or referee can even be named, let alone signalled.
    assert "probed pids [1, 2] (me 2)" in signals, signals
    refused(signals, f"ptrace attach {outcome['referee_pid']}")
    for line in signals.splitlines():
        if line.startswith("TRIED SIGSTOP") and "parent" not in line and "-1" not in line:
            assert ": refused: " in line, line  # the referee's host pid is not in its world


@NEEDS_ISOLATION
@pytest.mark.skipif(os.geteuid() != 0, reason="the root variant needs a root referee")
def test_attack_bots_in_a_league_as_root_learn_and_touch_nothing(tmp_path: Path) -> None:
    home = tmp_path / "league"
    home.mkdir()
    outcome = play_attack_league(home, [])
    check_attacks(outcome, home)
    assert "own uid per bot" in outcome["referee"]


def unprivileged_wrapper(home: Path) -> tuple[list[str], str]:
    """How to run the referee as ``nobody`` here, or why it cannot be done ('' if it can).

    The interpreter may live where ``nobody`` cannot go (``/root/.pyenv``): a
    root bubblewrap gives the referee a view of the machine with just that
    opened up (the referee's own sandbox is then nested in it, as on a
    machine where the operator's Python is their own).
    """
    if os.geteuid() != 0 or shutil.which("setpriv") is None or shutil.which("bwrap") is None:
        return [], "needs root (to become nobody), setpriv and bwrap"
    prefix = Path(sys.base_prefix).resolve()
    view = ["bwrap", "--dev-bind", "/", "/", "--die-with-parent"]
    root = Path("/root")
    if root in prefix.parents:
        view += ["--perms", "0755", "--tmpfs", str(root)]
        for parent in reversed(prefix.parents):
            if root in parent.parents:
                view += ["--perms", "0755", "--dir", str(parent)]
        view += ["--ro-bind", str(prefix), str(prefix)]
    setpriv = [
        "setpriv",
        f"--reuid={UNPRIVILEGED}",
        f"--regid={UNPRIVILEGED}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
    ]
    wrapper = [*view, "--", *setpriv, "--"]
    probe = subprocess.run(
        [*wrapper, sys.executable, "-c", "import referee.cli, trio"],
        capture_output=True,
        text=True,
        check=False,
        cwd=home,
    )
    if probe.returncode != 0:
        return [], f"the referee cannot run as nobody here: {probe.stderr.strip()[-300:]}"
    return wrapper, ""


@contextlib.contextmanager
def unprivileged_home() -> Iterator[tuple[Path, list[str]]]:
    """A home the unprivileged referee owns, and the wrapper that runs it there.

    Skips the test, saying why, where the referee cannot run as ``nobody``.
    """
    home = Path(os.environ.get("TMPDIR", "/tmp")) / f"newmarket-nonroot-{secrets.token_hex(4)}"
    home.mkdir(mode=0o755)
    try:
        if os.geteuid() == 0:
            os.chown(home, UNPRIVILEGED, UNPRIVILEGED)
        wrapper, why = unprivileged_wrapper(home)
        if why:
            pytest.skip(why)
        yield home, wrapper
    finally:
        shutil.rmtree(home, ignore_errors=True)


@NEEDS_ISOLATION
def test_attack_bots_in_a_league_of_an_unprivileged_referee_learn_and_touch_nothing(
    tmp_path: Path,
) -> None:
    with unprivileged_home() as (home, wrapper):
        outcome = play_attack_league(home, wrapper)
        check_attacks(outcome, home)
        assert "the referee is not root" in outcome["referee"]


def kill_the_referee_mid_match(home: Path, wrapper: list[str]) -> None:
    """SIGKILL a referee whose bot left a process behind and hangs: nothing of the bots stays.

    A SIGKILLed referee runs no clean-up of its own: what ends the bots is the
    sandbox alone (each bwrap dies with its parent, and a pid namespace dies
    with its first process, taking the bot's setsid'd grandchild with it).
    """
    script = ATTACKS / "attack.py"
    mark = f"NMLINGER-{secrets.token_hex(4)}"  # on every bot, and on what the hanging one leaves
    bots = [f"hang={sys.executable} {script} hang {mark}"]
    bots += [f"victim{index}={sys.executable} {script} victim {mark}" for index in (1, 2)]
    # Seed 2 deals the first lead to seat 0 (the hanging bot): with a random seed, one
    # match in several never asked it anything in its one hand, so it left nothing behind
    # and the referee ended on its own (boodle's only decisions are leads).
    argv = [*wrapper, sys.executable, "-m", "referee.cli", "match", "--hands", "1", "--seed", "2"]
    argv += ["--move-time", "120", "--startup-time", "60", "--log-dir", str(home / "logs")]
    for bot in bots:
        argv += ["--bot", bot]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
    referee = subprocess.Popen(
        argv, cwd=home, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        for _ in range(600):  # until the hanging bot has left its process behind
            if left_behind(mark) or referee.poll() is not None:
                break
            time.sleep(0.1)
        assert left_behind(mark), referee.stderr.read().decode()[-2000:]  # type: ignore[union-attr]
        # The referee itself, not the wrapper's bwrap around it (whose argv has it too).
        (pid,) = [
            pid
            for pid in lingering(str(home / "logs"))
            if b"bwrap" not in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
        ]
        os.kill(pid, signal.SIGKILL)
        for _ in range(300):
            if not lingering(mark):
                break
            time.sleep(0.1)
        assert left_behind(mark) == [], "the bot's process outlived its SIGKILLed referee"
        assert lingering(mark) == [], "a bot (or its sandbox) outlived its SIGKILLed referee"
    finally:
        if referee.poll() is None:
            referee.kill()
        referee.wait(timeout=60)  # (the wrapper's bwrap ends with the referee)
        for pid in lingering(mark):  # only if the test failed
            os.kill(pid, signal.SIGKILL)


def left_behind(mark: str) -> list[int]:
    """The process the hanging bot left behind (the bots' sandboxes carry ``mark`` too)."""
    return [pid for pid in lingering(mark) if pid in lingering("import time; time.sleep(600)")]


@NEEDS_ISOLATION
@pytest.mark.skipif(os.geteuid() != 0, reason="the root variant needs a root referee")
def test_a_sigkilled_root_referee_leaves_no_bot_process(tmp_path: Path) -> None:
    kill_the_referee_mid_match(tmp_path, [])


@NEEDS_ISOLATION
def test_a_sigkilled_unprivileged_referee_leaves_no_bot_process() -> None:
    with unprivileged_home() as (home, wrapper):
        kill_the_referee_mid_match(home, wrapper)
