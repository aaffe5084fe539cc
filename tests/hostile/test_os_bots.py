"""Bots that attack the operating system's side of the referee, each a real process.

One test per behaviour (the programs are in ``tests/hostile/os_bots/``).
Whatever the bot does, ``play_os_bot`` checks what must always hold: the
match finished, its result is saved (the log ends with it and replays), no
process of the bot's tree is left (its process group, its cgroups, and any
child it told us the pid of, even one that left the group), and the
referee's own memory stayed bounded.  Each test then asserts its verdict:
the fault's kind and detail, or, for a bot a limit tamed, what the limit did.

The bots run under the sandbox this machine supports (``auto``) with small
limits; a test that needs a protection the machine lacks is skipped, saying
which.  Limits are generous real seconds: the machine may be loaded, and
none of these verdicts is a close call.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import sys
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from engine import preset
from protocol.timing import DEFAULT_STDERR_CAP_BYTES
from referee.bots import BotSpec
from referee.match.log import read_log
from referee.match.referee import play_match
from referee.match.result import MatchResult
from referee.sandbox import MIB, Limits, Sandbox, resolve
from referee.tools.replay import verify_log
from referee.transport.process import TERM_GRACE, group_members
from referee.transport.timecontrol import TimeControl
from tests.match_logs import kept_logs
from tests.tables import open_table

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")

REPO = Path(__file__).resolve().parents[2]
RULES = preset("boodle").with_options({"hand_limit": 2})
CONTROL = TimeControl(move_time=3.0, time_bank=0.0, startup_time=30.0, margin=1.0)
LIMITS = Limits(
    cpu_seconds=120,
    open_files=64,
    file_size_bytes=4 * MIB,
    processes=32,
    memory_bytes=192 * MIB,
)
MEMORY_BOUND = 16 << 20  # the referee's peak traced allocations during one match


def sandbox(level: str = "auto", **changes: Any) -> Sandbox:
    return resolve(level, dataclasses.replace(LIMITS, **changes))


AUTO = sandbox()


def os_bot(script: str, *args: str, name: str | None = None, **env: str) -> BotSpec:
    command = (sys.executable, "-m", f"tests.hostile.os_bots.{script}", *args)
    return BotSpec(name or script, command, cwd=REPO, env=env)


def mates(count: int = 2) -> list[BotSpec]:
    return [os_bot("good", name=f"good{i}", HOSTILE_SEED=str(i)) for i in range(count)]


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (not gone, not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] != b"Z"


def boot_ticks_now() -> int:
    """Now, in the clock ticks since boot that ``/proc/PID/stat`` gives start times in."""
    return int(float(Path("/proc/uptime").read_text().split()[0]) * os.sysconf("SC_CLK_TCK"))


def start_ticks(pid: int) -> int:
    """When ``pid`` started, in clock ticks since boot (field 22 of ``/proc/PID/stat``)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[19])  # counted after the ")" that ends the name


def started_at(pid: int, otherwise: int) -> int:
    """``start_ticks(pid)``, or ``otherwise`` for a process already reaped."""
    try:
        return start_ticks(pid)
    except OSError:
        return otherwise


def processes_of(uid: int, started_from: int, started_by: int) -> list[int]:
    """The live processes whose real uid is ``uid``, started within the ticks given."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and alive(int(entry.name)):
            try:
                status = Path(entry.path, "status").read_text()
                started = start_ticks(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
            if not started_from <= started <= started_by:
                continue
            for line in status.splitlines():
                if line.startswith("Uid:") and int(line.split()[1]) == uid:
                    found.append(int(entry.name))
    return found


def told_pids(stderr: str, word: str) -> list[int]:
    """The pids a bot told on stderr as ``<word> <pid>``."""
    pids = []
    for line in stderr.splitlines():
        head, _, number = line.strip().partition(" ")
        if head == word and number.isdigit():
            pids.append(int(number))
    return pids


@dataclasses.dataclass
class Played:
    """One match with the hostile bot in seat 0, after the shared checks passed."""

    result: MatchResult
    records: list[dict[str, Any]]
    stderr: str  # seat 0's, all of it that was kept
    peak_bytes: int
    seconds: float  # from the start of the bots to the end of every tree

    def faults(self, seat: int = 0) -> list[tuple[str, str]]:
        return [(fault.kind, fault.detail) for fault in self.result.seats[seat].faults]

    def kinds(self, seat: int = 0) -> list[str]:
        return [kind for kind, _ in self.faults(seat)]

    @property
    def seat(self) -> Any:
        return self.result.seats[0]


async def play_os_bot(
    specs: Sequence[BotSpec],
    tmp_path: Path,
    *,
    under: Sandbox = AUTO,
    control: TimeControl = CONTROL,
    hostile_startup: float | None = None,
) -> Played:
    """One match of ``specs`` (the hostile bot first), and the checks every bot must pass.

    ``hostile_startup``: the hostile bot's own start-up limit, timed alone
    (``tests.tables.open_table``)."""
    log = tmp_path / "match.jsonl"
    started = trio.current_time()
    opened = boot_ticks_now()  # before any of these bots' uids was leased
    tracemalloc.start()
    try:
        async with open_table(
            specs, control, first_startup=hostile_startup, sandbox=under
        ) as sessions:
            entered = boot_ticks_now()
            groups = [s.pgid for s in sessions if s.pgid is not None]
            cgroups = [
                path
                for s in sessions
                if s.process is not None and s.process.cgroups is not None
                for path in s.process.cgroups.dirs.values()
            ]
            # Which processes of a bot's uid are its own: the uid is leased when its process
            # starts and freed when that ends (at once for a start-up that failed, else when
            # the session closes), and another test or run on the machine may lease it next
            # (pytest-xdist, the lowest free uid first).  So they are those started from the
            # session's process on (what an earlier holder left started before it) until the
            # lease ended.
            leases = [
                (s.process.uid, started_at(s.process.pid, opened), s.death is not None)
                for s in sessions
                if s.process is not None and s.process.uid
            ]
            result = await play_match(
                sessions, RULES, 5, time_control=control, match_id="os", log_path=log
            )
            leased_until = boot_ticks_now()  # the sessions close next, freeing their uids
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    seconds = trio.current_time() - started
    stderr = sessions[0].stderr_text()
    # The match finished, with places for every seat.
    assert result.reason in ("hand_limit", "players_left")
    assert sorted(result.places)[0] == 1 and len(result.places) == len(specs)
    # The result is saved: the log ends with it, and replays.
    records = [record for _, record in read_log(log)]
    assert records[0]["sandbox"] == under.to_json()
    assert records[-1]["type"] == "result"
    assert records[-1]["seats"] == msgspec.to_builtins(result.seats)
    verify_log(log)
    # Nothing of any bot is left: its group, its cgroups, any child it named.
    assert groups
    for pgid in groups:
        assert group_members(pgid) == [], f"processes of group {pgid} outlived the session"
    for path in cgroups:
        assert not path.exists(), f"the cgroup {path} was left behind"
    if under.isolation is None:
        for pid in told_pids(stderr, "child") + told_pids(stderr, "grandchild"):
            assert not alive(pid), f"the bot's process {pid} outlived the session"
    else:  # the pids it told are of its own pid namespace; its own uid owns all it ran
        for uid, since, freed_at_start in leases:
            until = entered if freed_at_start else leased_until
            # A killed namespace's processes are reaped by the kernel, not by us: give a
            # loaded machine a generous moment for that, and no more.
            with trio.move_on_after(10):
                while left := processes_of(uid, since, until):
                    await trio.sleep(0.05)
            assert left == [], f"processes of the bot's uid {uid} outlived it"
    assert peak < MEMORY_BOUND, f"the referee's peak allocations were {peak} bytes"
    return Played(result, records, stderr, peak, seconds)


def needs(condition: bool, why: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(not condition, reason=why)


HAS_RLIMITS = AUTO.rlimits
HAS_PIDS = "pids" in AUTO.cgroups
HAS_MEMORY = "memory" in AUTO.cgroups
HAS_CGROUP = AUTO.uses_cgroups
HAS_NETNS = AUTO.netns is not None


# ---------------------------------------------------------------- start-up


async def test_a_crash_before_the_handshake_is_a_startup_fault_with_its_exit(
    tmp_path: Path,
) -> None:
    played = await play_os_bot([os_bot("crash_early"), *mates()], tmp_path)
    assert played.faults() == [
        ("startup", "exited with status 3 before ready; stderr: cannot load my model weights")
    ]
    assert played.seat.status == "disqualified" and played.seat.place == 3


async def test_a_slow_start_is_a_startup_fault_at_the_limit(tmp_path: Path) -> None:
    # Only the slow bot is held to 3 s: its table mates start first, under a generous limit,
    # so the verdict does not hang on how fast a loaded machine starts them.
    played = await play_os_bot(
        [os_bot("slow_start", "120"), *mates()], tmp_path, hostile_startup=3.0
    )
    [(kind, detail)] = played.faults()
    assert (kind, detail.split("; ")[0]) == ("startup", "no ready within 3 s")
    assert played.result.seats[1].faults == played.result.seats[2].faults == []


# ---------------------------------------------------------------- leaving mid-match


async def test_a_crash_mid_match_is_reported_with_its_signal(tmp_path: Path) -> None:
    played = await play_os_bot([os_bot("crash_mid", HOSTILE_AT="2"), *mates()], tmp_path)
    assert played.faults() == [("crash", "killed by signal 11 (SIGSEGV); stderr: segfaulting now")]
    assert played.seat.status == "disqualified" and played.seat.decisions >= 2


async def test_an_exit_with_status_0_mid_match_is_still_a_crash(tmp_path: Path) -> None:
    played = await play_os_bot([os_bot("exit_zero", HOSTILE_AT="2"), *mates()], tmp_path)
    assert played.faults() == [("crash", "exited with status 0; stderr: done here")]
    assert played.seat.status == "disqualified"


async def test_closing_stdout_but_running_on_is_eof(tmp_path: Path) -> None:
    played = await play_os_bot([os_bot("close_stdout"), *mates()], tmp_path)
    assert played.faults() == [("eof", "its output ended")]
    assert played.seat.status == "disqualified"


# ---------------------------------------------------------------- not answering


@needs(HAS_RLIMITS, "no rlimits on this machine (prlimit missing): nothing stops a busy loop")
async def test_a_busy_loop_is_killed_by_its_cpu_limit_and_its_cpu_time_shows_it(
    tmp_path: Path,
) -> None:
    # A move time far beyond the CPU limit: the limit, not the clock, gives the verdict.
    control = dataclasses.replace(CONTROL, move_time=120.0)
    played = await play_os_bot(
        [os_bot("busy_loop"), *mates()], tmp_path, under=sandbox(cpu_seconds=2), control=control
    )
    assert played.faults() == [("crash", "killed by signal 24 (SIGXCPU)")]
    # Its 2 CPU seconds, less the few tenths its start-up took before the match.
    assert played.seat.cpu_ms is not None and played.seat.cpu_ms >= 1500
    # The table mates computed little: their CPU time tells a busy bot from a busy host.
    for mate in played.result.seats[1:]:
        assert mate.cpu_ms is not None and mate.cpu_ms < played.seat.cpu_ms


async def test_a_bot_stopped_by_sigstop_times_out_using_no_cpu(tmp_path: Path) -> None:
    control = dataclasses.replace(CONTROL, move_time=1.5, margin=0.5)
    played = await play_os_bot([os_bot("sigstop"), *mates()], tmp_path, control=control)
    assert played.kinds() == ["timeout"] * 3
    assert all(detail.startswith("no reply to request") for _, detail in played.faults())
    assert played.seat.status == "disqualified"
    # Six seconds of waiting, and the stopped bot used almost none of it.
    assert played.seat.cpu_ms is not None and played.seat.cpu_ms < 1500


async def test_a_flood_of_stderr_while_never_reading_keeps_only_the_capped_buffer(
    tmp_path: Path,
) -> None:
    control = dataclasses.replace(CONTROL, move_time=1.5, margin=0.5)
    played = await play_os_bot([os_bot("stderr_flood"), *mates()], tmp_path, control=control)
    assert played.kinds() == ["timeout"] * 3
    assert played.seat.status == "disqualified"
    (logged,) = [r for r in played.records if r["type"] == "stderr" and r["seat"] == 0]
    # Many times the cap was written; the log and the referee kept a head and a tail only.
    assert logged["bytes"] > 4 * DEFAULT_STDERR_CAP_BYTES and logged["dropped"] > 0
    assert len(logged["text"]) < DEFAULT_STDERR_CAP_BYTES + 100
    assert "bytes of stderr dropped" in logged["text"]
    assert played.peak_bytes < MEMORY_BOUND


async def test_a_bot_that_stops_reading_its_input_is_lost(tmp_path: Path) -> None:
    control = dataclasses.replace(CONTROL, move_time=1.5, margin=0.5)
    played = await play_os_bot([os_bot("stop_reading"), *mates()], tmp_path, control=control)
    assert set(played.kinds()) == {"timeout"}
    assert played.seat.status == "disqualified"
    # Its input pipe (one page) filled: a write to it could not finish.
    assert "did not read its input for 2 s" in played.faults()[-1][1]


# ---------------------------------------------------------------- the process tree


async def test_a_bot_that_ignores_sigterm_is_killed_with_its_child(tmp_path: Path) -> None:
    played = await play_os_bot([os_bot("ignore_sigterm"), *mates()], tmp_path)
    assert played.faults() == [] and played.seat.status == "ok"
    assert told_pids(played.stderr, "child"), "the bot did not say its child's pid"
    # SIGTERM was ignored, so the end waited out the grace and then SIGKILLed the tree.
    assert played.seconds >= TERM_GRACE


async def test_a_grandchild_holding_the_pipes_does_not_hold_the_match(tmp_path: Path) -> None:
    played = await play_os_bot([os_bot("grandchild"), *mates()], tmp_path)
    (fault,) = played.faults()
    assert fault[0] == "crash" and fault[1].startswith("exited with status 9")
    assert told_pids(played.stderr, "grandchild"), "the bot did not say its grandchild's pid"


@needs(HAS_CGROUP, "no cgroup can be made here: a grandchild that calls setsid() escapes")
async def test_a_grandchild_that_leaves_the_process_group_is_ended_by_the_cgroup(
    tmp_path: Path,
) -> None:
    played = await play_os_bot([os_bot("grandchild", "setsid"), *mates()], tmp_path)
    (fault,) = played.faults()
    assert fault[0] == "crash" and fault[1].startswith("exited with status 9")
    (pid,) = told_pids(played.stderr, "grandchild")
    if AUTO.isolation is None:  # (else the pid is its pid namespace's: play_os_bot checked its uid)
        assert not alive(pid)  # (play_os_bot checked it too; this is the point of the test)


@needs(HAS_PIDS, "no pids cgroup here (and RLIMIT_NPROC does not bind root): not run")
async def test_a_fork_bomb_stops_at_the_process_limit(tmp_path: Path) -> None:
    played = await play_os_bot([os_bot("fork_bomb", "400"), *mates()], tmp_path)
    line = next(x for x in played.stderr.splitlines() if x.startswith("forked "))
    forked = int(line.split()[1])
    assert forked < 32 and "Resource temporarily unavailable" in line, line
    # It went on playing once refused: no fault, and every child ended with the match.
    assert played.faults() == [] and played.seat.status == "ok"


# ---------------------------------------------------------------- memory, disk, network


@needs(HAS_MEMORY, "no memory cgroup can be made here: nothing limits a bot's memory")
async def test_a_bot_eating_memory_is_killed_at_its_memory_limit(tmp_path: Path) -> None:
    played = await play_os_bot([os_bot("eat_memory", "1024"), *mates()], tmp_path)
    (fault,) = played.faults()
    assert fault[0] == "crash"
    assert fault[1].startswith("killed by signal 9 (SIGKILL) (its memory limit was reached)")
    assert played.seat.status == "disqualified"


@needs(HAS_RLIMITS, "no rlimits on this machine (prlimit missing): nothing limits file size")
async def test_a_bot_filling_the_disk_is_stopped_at_its_file_size_limit(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    where = str(scratch) if AUTO.isolation is None else "/tmp"  # isolated: its scratch tmpfs
    played = await play_os_bot([os_bot("fill_disk", where, "64"), *mates()], tmp_path)
    # Python ignores SIGXFSZ, so the write past the limit fails with EFBIG and it plays on.
    assert "write refused after 4 MiB: [Errno 27] File too large" in played.stderr
    if AUTO.isolation is None:
        assert (scratch / "filler").stat().st_size <= 4 * MIB
    assert played.faults() == [] and played.seat.status == "ok"


@needs(HAS_NETNS, "no network namespace can be made here (unshare or bubblewrap)")
async def test_a_stdio_bot_cannot_open_a_network_connection(tmp_path: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        listener.setblocking(False)
        port = str(listener.getsockname()[1])
        # Without the network namespace (level basic) the same bot does connect ...
        basic = await play_os_bot(
            [os_bot("network", port), *mates()], tmp_path / "basic", under=sandbox("basic")
        )
        assert "connect: succeeded" in basic.stderr
        listener.accept()[0].close()
        # ... and with it, the connection fails and nothing reaches the listener.
        played = await play_os_bot([os_bot("network", port), *mates()], tmp_path / "auto")
        assert "connect: failed: " in played.stderr
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert played.faults() == [] and played.seat.status == "ok"


# ---------------------------------------------------------------- a league of them


def tagged_processes(tag: str) -> list[int]:
    """Live processes whose environment carries ``HOSTILE_TAG=<tag>``."""
    found = []
    marker = f"HOSTILE_TAG={tag}".encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as handle:
                environ = handle.read().split(b"\0")
        except OSError:
            continue
        if marker in environ and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


async def test_a_league_with_os_level_hostile_bots_finishes_with_their_faults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from referee.league.league_db import LeagueStore
    from referee.league.league_file import parse_config
    from referee.league.runner import SilentReporter, run_league
    from referee.sandbox import setting_to_env

    tag = f"os-league-{os.getpid()}-{tmp_path.name}"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with socket.socket() as probe:  # a port nobody listens on, for the network bot
        probe.bind(("127.0.0.1", 0))
        closed_port = str(probe.getsockname()[1])
    # Every OS-level behaviour whose verdict comes at once; left out are those that cost
    # their full limits by design (slow start, busy loop, SIGSTOP, unread input, a stderr
    # flood while never reading): each of those has its match test above.
    bots = [
        ("good", ()),
        ("crash_mid", ()),
        ("grandchild", ()),
        ("fork_bomb", ("400",)),
        ("crash_early", ()),
        ("exit_zero", ()),
        ("close_stdout", ()),
        ("ignore_sigterm", ()),
        ("eat_memory", ("512",)),
        ("fill_disk", (str(scratch) if AUTO.isolation is None else "/tmp", "64")),
        ("network", (closed_port,)),
    ]
    tables = "\n".join(
        f"""
[[bots]]
name = "{name}"
command = {[sys.executable, "-m", f"tests.hostile.os_bots.{name}", *args]!r}
cwd = "{REPO}"
env = {{ HOSTILE_TAG = "{tag}" }}
""".replace("'", '"')
        for name, args in bots
    )
    text = f"""
[league]
seed = 11
table_size = 3
hand_limit = 1
logs = "logs"

[schedule]
kind = "balanced"
duplicate = false

[time_control]
move_time = 3.0
time_bank = 0.0
margin = 1.0
startup_time = 30.0

[sandbox]
level = "auto"
processes = 32
memory_mb = 256
{tables}
"""
    path = tmp_path / "os.toml"
    path.write_text(text)
    config = parse_config(text, path)
    assert config.sandbox_limits.processes == 32
    # What ``newmarket league`` does: every table worker gets the file's setting.
    setting = setting_to_env(config.sandbox_level, config.sandbox_limits)
    reporter = SilentReporter()
    with LeagueStore.for_league(tmp_path / "os.db", config) as store:
        run = await run_league(
            config,
            store,
            jobs=2,
            reporter=reporter,
            logs=tmp_path / "logs",
            handle_signals=False,
            sandbox=setting,
        )
        stored = store.matches()
    assert not run.stopped and run.total is not None
    assert run.done == run.total == len(stored) >= 4  # every pair of bots met
    # Each bot got only its own kind of fault; the crashing ones crashed at least once
    # (a seat never asked in a one-hand match has nothing to crash at); the bots a limit
    # tames (fork bomb, disk filler, network), the one ignoring SIGTERM and the good bot
    # never had a fault. The memory eater crashes where a memory cgroup limits it.
    kinds: dict[str, set[str]] = {
        "good": set(),
        "fork_bomb": set(),
        "crash_mid": {"crash"},
        "grandchild": {"crash"},
        "crash_early": {"startup"},
        "exit_zero": {"crash"},
        "close_stdout": {"eof"},
        "ignore_sigterm": set(),
        "eat_memory": {"crash"} if HAS_MEMORY else set(),
        "fill_disk": set(),
        "network": set(),
    }
    crashed = set()
    for match in stored:
        for seat, bot in enumerate(match.key.bots):
            name, result = bots[bot][0], match.result.seats[seat]
            assert {fault.kind for fault in result.faults} <= kinds[name], (name, result)
            assert (result.status == "disqualified") == bool(result.faults), (name, result)
            assert result.cpu_ms is not None
            if result.faults:
                crashed.add(name)
    assert {"crash_mid", "grandchild"} <= crashed
    assert crashed == {name for name, kind in kinds.items() if kind}
    logs = kept_logs(tmp_path / "logs")
    assert len(logs) == run.total
    header = next(read_log(logs[0]))[1]
    assert header["sandbox"]["level"] == "auto" and header["sandbox"]["limits"]["processes"] == 32
    for _ in range(50):
        if not tagged_processes(tag):
            break
        await trio.sleep(0.1)
    assert tagged_processes(tag) == []
