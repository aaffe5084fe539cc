"""``--sandbox``: each level, what a machine without a protection gets, and saying so plainly.

``referee.sandbox.detect`` finds what this machine supports by trying it;
these tests replace its answer (a ``Support`` with pieces missing) to check
the paths this machine does not take: a level that cannot be had is refused
with the reason, ``auto`` names every protection it could not apply, and a
bot still runs, unprotected in exactly the ways reported.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine import preset
from referee.bots import BotSpec
from referee.cli import app
from referee.league.league_file import ConfigError, parse_config
from referee.match.log import read_log
from referee.match.referee import play_match
from referee.sandbox import (
    BWRAP_NO_NETWORK,
    ENV_SANDBOX,
    MIB,
    BotCgroups,
    Limits,
    SandboxError,
    Support,
    detect,
    resolve,
    setting_from_env,
    setting_to_env,
    sweep_stale,
)
from referee.sandbox import levels as sandbox_levels
from referee.sandbox.isolation import Isolation
from referee.transport.process import group_members
from referee.transport.session import open_bots
from referee.transport.timecontrol import TimeControl
from tests.match_logs import kept_logs, only_log

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")

REPO = Path(__file__).resolve().parents[2]
RULES = preset("boodle").with_options({"hand_limit": 1})
CONTROL = TimeControl(move_time=3.0, time_bank=0.0, startup_time=30.0, margin=1.0)

NOTHING = Support(
    prlimit=None,
    prlimit_why="the prlimit program (util-linux) is not installed",
    cgroup_v1={},
    cgroup_v2=None,
    cgroup_why="cannot create a cgroup in /sys/fs/cgroup/memory: Permission denied",
    netns=None,
    netns_why="unshare --net: Operation not permitted; bubblewrap is not installed",
    root=True,
    isolation=None,
    isolation_why="bubblewrap is not installed (Debian: apt-get install bubblewrap)",
)
EVERYTHING = Support(
    prlimit="/usr/bin/prlimit",
    prlimit_why="",
    cgroup_v1={
        "memory": Path("/cg/memory/me"),
        "pids": Path("/cg/pids"),
        "cpuacct": Path("/cg/cpuacct"),
    },
    cgroup_v2=Path("/cg/unified"),
    cgroup_why="",
    netns=("/usr/bin/unshare", "--net", "--"),
    netns_why="",
    root=True,
    isolation=Isolation("/usr/bin/bwrap", "/usr/bin/setpriv", 64 * MIB, seccomp=b"a filter"),
    isolation_why="",
)
# Everything but bubblewrap: the network is taken away by ``unshare --net`` alone.
NO_BWRAP = dataclasses.replace(
    EVERYTHING, isolation=None, isolation_why="bubblewrap is not installed"
)


def os_bot(script: str, *args: str, name: str | None = None) -> BotSpec:
    command = (sys.executable, "-m", f"tests.hostile.os_bots.{script}", *args)
    return BotSpec(name or script, command, cwd=REPO)


# ---------------------------------------------------------------- levels and what is missing


def test_auto_on_a_bare_machine_says_what_it_cannot_do() -> None:
    sandbox = resolve("auto", support=NOTHING)
    assert sandbox.active() == ["process group"]
    text = sandbox.describe()
    assert text.startswith("sandbox auto: process group; NOT active: ")
    for piece in (
        "rlimits: the prlimit program (util-linux) is not installed",
        "memory limit: no memory cgroup (cannot create a cgroup in /sys/fs/cgroup/memory",
        "process count limit: no pids cgroup",
        "no-network: unshare --net: Operation not permitted; bubblewrap is not installed",
        "isolation: bubblewrap is not installed (Debian: apt-get install bubblewrap)",
    ):
        assert piece in text


def test_strict_is_refused_where_its_protections_are_missing() -> None:
    with pytest.raises(SandboxError) as caught:
        resolve("strict", support=NOTHING)
    message = str(caught.value)
    assert message.startswith("--sandbox strict is not possible on this machine: ")
    assert "no-network: unshare --net: Operation not permitted" in message
    assert "use --sandbox auto" in message
    # With everything there, strict is what auto would be, named strict.
    assert resolve("strict", support=EVERYTHING).missing == ()


def test_without_a_lock_filter_the_line_says_bots_can_signal_through_locks() -> None:
    assert EVERYTHING.isolation is not None
    unfiltered = dataclasses.replace(
        EVERYTHING, isolation=dataclasses.replace(EVERYTHING.isolation, seccomp=None)
    )
    for level in ("auto", "strict"):  # not x86_64 is no reason to refuse strict
        (line,) = resolve(level, support=unfiltered).missing
        assert line.startswith("lock filter: ") and "through file locks" in line
    assert "no file locks or inotify" in resolve("auto", support=EVERYTHING).describe()


def test_basic_as_root_says_the_process_count_is_not_limited() -> None:
    sandbox = resolve("basic", support=dataclasses.replace(NOTHING, prlimit="/usr/bin/prlimit"))
    assert sandbox.rlimits and not sandbox.uses_cgroups and sandbox.netns is None
    assert sandbox.missing == (
        "process count: RLIMIT_NPROC is not enforced for root (level basic)",
    )


def test_an_unknown_level_is_named() -> None:
    with pytest.raises(SandboxError, match="'tight' is not one of none, basic, strict, auto"):
        resolve("tight", support=EVERYTHING)


def test_the_wrapped_command_joins_the_cgroups_first_then_drops_the_network_then_limits() -> None:
    sandbox = resolve("auto", Limits(cpu_seconds=5, processes=9), support=NO_BWRAP)
    procs = [Path("/cg/pids/b/cgroup.procs"), Path("/cg/unified/b/cgroup.procs")]
    argv = sandbox.wrap(["bot", "--fast"], stdio=True, cgroup_procs=procs)
    assert argv[:2] == ["/bin/sh", "-c"]
    separator = argv.index("--")
    assert argv[4:separator] == [str(path) for path in procs]
    rest = argv[separator + 1 :]
    assert rest[:3] == ["/usr/bin/unshare", "--net", "--"]
    assert rest[3] == "/usr/bin/prlimit" and "--cpu=5:6" in rest and "--core=0:0" in rest
    assert not any(option.startswith("--nproc") for option in rest)  # the pids cgroup does it
    assert rest[-3:] == ["--", "bot", "--fast"]
    # A TCP bot needs the network to reach the referee; level none changes nothing.
    assert "/usr/bin/unshare" not in sandbox.wrap(["bot"], stdio=False, cgroup_procs=procs)
    assert resolve("none", support=EVERYTHING).wrap(["bot"], stdio=True, cgroup_procs=[]) == ["bot"]


def test_the_setting_travels_to_the_workers_intact() -> None:
    limits = Limits(cpu_seconds=None, memory_bytes=64 * MIB)
    assert setting_from_env(setting_to_env("basic", limits)) == ("basic", limits)
    assert setting_from_env("strict") == ("strict", Limits())
    assert setting_from_env("") == ("auto", Limits())
    with pytest.raises(SandboxError, match="unknown limit 'gpu'"):
        setting_from_env(json.dumps({"level": "auto", "limits": {"gpu": 1}}))


def test_a_league_file_sets_the_level_and_limits(tmp_path: Path) -> None:
    bots = "\n".join(f'[[bots]]\ncommand = "random"\nname = "r{i}"\n' for i in range(3))
    text = f"""
[league]
seed = 1
table_size = 3

[sandbox]
level = "basic"
memory_mb = 64
cpu_seconds = false
{bots}"""
    config = parse_config(text, tmp_path / "l.toml")
    assert config.sandbox_level == "basic"
    assert config.sandbox_limits.memory_bytes == 64 * MIB
    assert config.sandbox_limits.cpu_seconds is None
    assert config.sandbox_limits.open_files == Limits().open_files
    with pytest.raises(ConfigError, match=r"sandbox\.level: 'tight' is not one of"):
        parse_config(text.replace('"basic"', '"tight"'), tmp_path / "l.toml")
    with pytest.raises(ConfigError, match=r"sandbox\.memory: unknown key"):
        parse_config(text.replace("memory_mb", "memory"), tmp_path / "l.toml")


# ---------------------------------------------------------------- real bots, protections missing


async def test_without_cgroups_or_network_isolation_a_bot_runs_and_the_log_says_so(
    tmp_path: Path,
) -> None:
    bare = dataclasses.replace(NOTHING, prlimit=detect().prlimit, prlimit_why=detect().prlimit_why)
    sandbox = resolve("auto", support=bare)
    log = tmp_path / "m.jsonl"
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        port = str(listener.getsockname()[1])
        specs = [os_bot("network", port), os_bot("good", name="g1"), os_bot("good", name="g2")]
        async with open_bots(specs, CONTROL, sandbox=sandbox) as sessions:
            groups = [s.pgid for s in sessions if s.pgid is not None]
            assert all(s.process is not None and s.process.cgroups is None for s in sessions)
            result = await play_match(
                sessions, RULES, 3, time_control=CONTROL, match_id="bare", log_path=log
            )
        stderr = sessions[0].stderr_text()
    # Reported missing, and really missing: the bot reached the network.
    assert "connect: succeeded" in stderr
    header = next(read_log(log))[1]
    assert any(line.startswith("no-network: ") for line in header["sandbox"]["missing"])
    assert header["sandbox"]["active"][0] == "process group"
    # CPU time still measured, from /proc, without a cgroup; the tree still ended.
    assert all(seat.cpu_ms is not None for seat in result.seats)
    assert all(group_members(pgid) == [] for pgid in groups)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
async def test_bubblewrap_alone_also_takes_the_network_away(tmp_path: Path) -> None:
    # Where unshare is not permitted (not root), detection falls back to bubblewrap.
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    support = dataclasses.replace(NOTHING, netns=(bwrap, *BWRAP_NO_NETWORK), netns_why="")
    sandbox = resolve("auto", support=support)
    assert "no network for stdio bots (bubblewrap)" in sandbox.active()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        port = str(listener.getsockname()[1])
        specs = [os_bot("network", port), os_bot("good", name="g1"), os_bot("good", name="g2")]
        async with open_bots(specs, CONTROL, sandbox=sandbox) as sessions:
            groups = [s.pgid for s in sessions if s.pgid is not None]
            result = await play_match(
                sessions, RULES, 3, time_control=CONTROL, match_id="bwrap", log_path=None
            )
        stderr = sessions[0].stderr_text()
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing reached the referee's side
    # bwrap brings up a loopback of its own (refused there); unshare leaves none (unreachable).
    assert "connect: failed: " in stderr
    assert [seat.faults for seat in result.seats] == [[], [], []]
    assert all(group_members(pgid) == [] for pgid in groups)


async def test_a_missing_program_under_the_sandbox_is_named_as_without_it(
    tmp_path: Path,
) -> None:
    spec = BotSpec("ghost", ("no-such-bot-program",), cwd=REPO)
    details = []
    for sandbox in (None, resolve("auto")):
        async with open_bots([spec], CONTROL, sandbox=sandbox) as (session,):
            pass
        assert session.death is not None and session.death.kind == "startup"
        details.append(session.death.detail)
    # The wrappers would only have exited 127: the program is looked for first.
    assert details[1] == details[0]
    assert details[0] == f"cannot start 'no-such-bot-program' in {REPO}: No such file or directory"


# ---------------------------------------------------------------- the command line


runner = CliRunner()


def test_match_prints_the_protections_and_refuses_an_impossible_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = tmp_path / "logs"
    args = ["match", "--bot", "random", "--bot", "random", "--bot", "random", "--hands", "1"]
    done = runner.invoke(app, [*args, "--log-dir", str(logs), "--sandbox", "tight"])
    assert done.exit_code == 2
    assert "--sandbox: 'tight' is not one of none, basic, strict, auto" in done.output
    monkeypatch.setattr(sandbox_levels, "detect", lambda: NOTHING)
    done = runner.invoke(app, [*args, "--log-dir", str(logs), "--sandbox", "strict"])
    assert done.exit_code == 2
    assert "--sandbox strict is not possible on this machine" in done.output
    done = runner.invoke(app, [*args, "--log-dir", str(logs), "--sandbox", "auto"])
    assert done.exit_code == 0, done.output
    assert "sandbox auto: NOT active: rlimits, memory limit, process limit," in done.output
    done = runner.invoke(app, [*args, "--log-dir", str(logs / "v"), "--sandbox", "auto", "-v"])
    assert "sandbox auto: process group; NOT active: rlimits:" in done.output  # in full
    assert next(read_log(only_log(logs / "v")))[1]["sandbox"]["level"] == "auto"


def test_detection_on_this_machine_is_consistent_with_what_auto_applies() -> None:
    support = detect()
    sandbox = resolve("auto")
    assert sandbox.rlimits == (support.prlimit is not None)
    assert sandbox.uses_cgroups == bool(support.cgroup_v1 or support.cgroup_v2)
    assert (sandbox.netns is None) == any(m.startswith("no-network") for m in sandbox.missing)
    # Every protection is either active or named as missing.
    for controller, name in (("memory", "memory cgroup"), ("pids", "pids cgroup")):
        active = any(line.startswith(name) for line in sandbox.active())
        assert active == (controller in support.cgroup_v1)


@pytest.mark.skipif("pids" not in detect().cgroup_v1, reason="no pids cgroup can be made here")
def test_the_cgroup_of_a_referee_that_was_killed_is_swept_with_its_bot() -> None:
    parent = detect().cgroup_v1["pids"]
    dead_referee = subprocess.Popen(["true"])
    dead_referee.wait()
    stale = parent / f"newmarket-{dead_referee.pid}-1"
    stale.mkdir()
    orphan = subprocess.Popen(["sleep", "600"])
    try:
        (stale / "cgroup.procs").write_text(str(orphan.pid))
        sweep_stale(parent)
        assert orphan.wait(timeout=10) == -signal.SIGKILL
        for _ in range(100):  # rmdir waits until the killed member has left
            sweep_stale(parent)
            if not stale.exists():
                break
            time.sleep(0.05)
        assert not stale.exists()
    finally:
        orphan.kill()
        orphan.wait()
        if stale.exists():
            stale.rmdir()


@pytest.mark.skipif("pids" not in detect().cgroup_v1, reason="no pids cgroup can be made here")
def test_a_dead_referees_cgroup_under_this_referees_own_pid_is_reclaimed() -> None:
    """A SIGKILLed referee's pid can be reused: its leftover cgroup must not stop our bots."""
    sandbox = resolve("auto")
    cgroups = BotCgroups(sandbox)
    leftover = cgroups.dirs["pids"]
    leftover.mkdir()  # as if a dead referee with our pid had left it behind
    orphan = subprocess.Popen(["sleep", "600"])
    try:
        (leftover / "cgroup.procs").write_text(str(orphan.pid))
        for _ in range(100):  # the killed member must leave before rmdir can succeed
            try:
                procs = cgroups.create()
                break
            except OSError:
                time.sleep(0.05)
        else:
            pytest.fail("the leftover cgroup was never reclaimed")
        assert orphan.wait(timeout=10) == -signal.SIGKILL
        assert all(path.exists() for path in procs)
        assert (leftover / "cgroup.procs").read_text() == ""
    finally:
        orphan.kill()
        orphan.wait()
        cgroups.remove()


def test_league_prints_the_protections_and_hands_its_setting_to_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_SANDBOX, "")  # the workers must not take their setting from here
    bots = "\n".join(f'[[bots]]\ncommand = "random"\nname = "r{i}"\n' for i in range(3))
    league = tmp_path / "tiny.toml"
    league.write_text(
        f'[league]\nseed = 3\ntable_size = 3\nhand_limit = 1\n\n[sandbox]\nlevel = "basic"\n'
        f"memory_mb = 300\n{bots}"
    )
    done = runner.invoke(app, ["league", str(league), "--sandbox", "tight"])
    assert done.exit_code == 2
    assert "--sandbox: 'tight' is not one of none, basic, strict, auto" in done.output
    done = runner.invoke(app, ["league", str(league), "--jobs", "1"])
    assert done.exit_code == 0, done.output
    assert "sandbox basic: rlimits only, no isolation" in done.output  # the file's level
    logs = kept_logs(tmp_path / "tiny-logs")
    sandboxes = [next(read_log(log))[1]["sandbox"] for log in logs]
    assert sandboxes and all(sandbox["level"] == "basic" for sandbox in sandboxes)
    # The file's limits too: the setting reached the table workers whole (their setup).
    assert all(sandbox["limits"]["memory_bytes"] == 300 * MIB for sandbox in sandboxes)


def test_without_bubblewrap_the_referee_says_exactly_what_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from referee.sandbox import isolation

    real_which = shutil.which

    def no_bwrap(name: str, *args: object, **kwargs: object) -> str | None:
        return None if name == "bwrap" else real_which(name)

    monkeypatch.setattr(shutil, "which", no_bwrap)
    found, why = isolation.detect_isolation(root=True, scratch_bytes=64 * MIB)
    assert found is None
    assert why.startswith("bubblewrap is not installed (Debian: apt-get install bubblewrap)")
    support = dataclasses.replace(EVERYTHING, isolation=None, isolation_why=why)
    assert (
        "NOT active: isolation: bubblewrap is not installed"
        in resolve("auto", support=support).describe()
    )
    with pytest.raises(SandboxError, match="isolation: bubblewrap is not installed"):
        resolve("strict", support=support)


def test_the_isolated_command_drops_to_a_leased_uid_with_no_capabilities() -> None:
    sandbox = resolve("auto", Limits(scratch_bytes=8 * MIB), support=EVERYTHING)
    argv = sandbox.wrap(["bot"], stdio=True, cgroup_procs=[], cwd=Path("/srv/bot"), uid=1900000007)
    switch = argv.index("/usr/bin/setpriv")
    assert argv[switch + 1 : switch + 9] == [
        "--reuid=1900000007",
        "--regid=1900000007",
        "--clear-groups",
        "--inh-caps=-all",
        "--ambient-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
    ]
    inner = argv[switch + 9 :]
    for option in ("--unshare-user", "--unshare-pid", "--unshare-net", "--disable-userns"):
        assert option in inner
    assert ["--size", str(8 * MIB)] == argv[argv.index("--size") : argv.index("--size") + 2]
    assert argv[-1] == "bot"


def test_a_uid_leased_by_another_process_is_never_handed_out_again(tmp_path: Path) -> None:
    """Two table workers on one machine: each bot gets a uid no live bot has."""
    from referee.sandbox import isolation

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from referee.sandbox.isolation import UidPool; "
            f"lease = UidPool(Path({str(tmp_path)!r}), 5000).lease(); "
            "print(lease.uid, flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        held = int(holder.stdout.readline())
        pool = isolation.UidPool(tmp_path, 5000)
        first = pool.lease()
        second = pool.lease()
        assert held == 5000 and (first.uid, second.uid) == (5001, 5002)
        first.release()
        assert pool.lease().uid == first.uid  # released: free again
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait()
    assert pool.lease().uid == held  # its holder is gone


def test_a_shimmed_python_runs_as_the_interpreter_behind_the_shim(tmp_path: Path) -> None:
    # pyenv and asdf put a script named python3 first on PATH that needs the version
    # manager's whole tree; the sandbox shows only the interpreter's prefix, so the
    # bot's command must run the interpreter the shim would have chosen.
    from referee.sandbox.isolation import real_interpreter

    shims = tmp_path / "shims"
    shims.mkdir()
    shim = shims / "python3"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    shim.chmod(0o755)
    argv = real_interpreter(["python3", "bot.py", "--fast"], {"PATH": str(shims)})
    assert argv[1:] == ["bot.py", "--fast"]
    assert Path(argv[0]).samefile(sys.executable)
    # A program that is not a Python, or named by path, is left as it is.
    assert real_interpreter(["node", "bot.js"], {"PATH": str(shims)}) == ["node", "bot.js"]
    assert real_interpreter([str(shim), "bot.py"], {}) == [str(shim), "bot.py"]


def fake_runtime(root: Path, program: str, marks: tuple[str, ...]) -> Path:
    """``root/bin/program`` (a script) in a prefix with a runtime's ``marks``; its path."""
    for mark in marks:
        (root / mark).parent.mkdir(parents=True, exist_ok=True)
        (root / mark).write_text("")
    binary = root / "bin" / program
    binary.parent.mkdir(parents=True, exist_ok=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    return binary


def test_the_view_holds_no_etc_or_opt_whole_only_what_the_runtimes_need(tmp_path: Path) -> None:
    from referee.sandbox.isolation import ETC_SHOWN, view

    # A JDK outside /usr, reached as a system JDK is (a link on PATH, /etc/alternatives-style),
    # whose own link leads into /etc (Debian's lib/jvm.cfg does).
    jdk = tmp_path / "opt" / "jdk-21"
    java = fake_runtime(jdk, "java", ("lib/modules",))
    (jdk / "lib" / "jvm.cfg").symlink_to("/etc/ld.so.conf")
    node = fake_runtime(tmp_path / "opt" / "node", "node", ("lib/node_modules/npm",))
    path = tmp_path / "path"
    path.mkdir()
    for program in (java, node):
        (path / program.name).symlink_to(program)
    env = {"PATH": str(path)}
    own = tmp_path / "bot"
    own.mkdir()
    _, directories, files = view(["java", "-cp", ".", "Main"], own, env)
    assert jdk in directories and tmp_path / "opt" / "node" not in directories
    assert (Path("/etc/ld.so.conf") in files) == Path("/etc/ld.so.conf").exists()
    # A word the participant chose (a class named node) shows nothing; the program a shell
    # wrapper runs (the server's compile) does.
    _, directories, _ = view(["java", "-cp", ".", "node"], own, env)
    assert tmp_path / "opt" / "node" not in directories
    _, directories, _ = view(["/bin/sh", "-c", 'exec "$@"', "out", "node", "x.js"], own, env)
    assert tmp_path / "opt" / "node" in directories
    # The mounts: /usr whole, of /etc only ETC_SHOWN's and the made files, never /opt.
    argv = resolve("auto", Limits(), support=EVERYTHING).wrap(
        ["java", "-cp", ".", "Main"],
        stdio=True,
        cgroup_procs=[],
        cwd=own,
        env=env,
        uid=1900000007,
        etc_fds={"/etc/passwd": 7},
    )
    bound = {argv[i + 2] for i, word in enumerate(argv) if word == "--ro-bind"}
    assert "/usr" in bound and "/etc" not in bound and "/opt" not in bound
    allowed = {*ETC_SHOWN, "/etc/ld.so.conf"}
    assert {name for name in bound if name.startswith("/etc")} <= allowed
    assert argv[argv.index("--ro-bind-data") :][:3] == ["--ro-bind-data", "7", "/etc/passwd"]
