"""Fair duplicate deals, and table workers that die: real bot processes in real leagues.

* A legal bot that remembers every hand it saw (``remembers_deals``) never
  meets a deal twice in a duplicate league: each rotation of a table's deal is
  played by fresh processes.  The control test shows the same bot does notice
  when one process plays two rotations, so the league test can fail.  A
  bot's process goes on to the other tables' deals, and a table held to
  fewer processes (``--bot-processes``) restarts bots instead of repeating
  a deal, and runs no more bot processes at once than that bound.  (The same
  rule through whole 32- and 64-bot leagues, in-process:
  ``tests/pools/test_bot_processes.py``.)
* A table worker SIGKILLed in the middle of a match: the match is played
  again on a fresh worker, and after ``MATCH_ATTEMPTS`` deaths it is left
  unplayed with one line naming it while the league goes on and finishes.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest
import trio

from engine import preset
from referee.bots import BotSpec
from referee.league.league_db import LeagueStore
from referee.league.league_file import LeagueConfig, parse_config
from referee.league.runner import LeagueRun, SilentReporter, round_robin_jobs, run_league
from referee.match.dealkey import DealKey
from referee.match.referee import play_match
from referee.match.result import MatchResult
from referee.tables.job import MATCH_ATTEMPTS
from referee.tables.local_pool import BOT_PROCESSES, TablePool
from referee.transport.session import open_bots
from referee.transport.timecontrol import TimeControl

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")

REPO = Path(__file__).resolve().parents[2]
BOT_MODULE = "tests.league.remembers_deals"


def league_config(
    tmp_path: Path, *, duplicate: bool, slow: bool = False, bots: int = 3
) -> LeagueConfig:
    argument = ', "slow"' if slow else ""
    entries = "".join(
        f"""
[[bots]]
name = "memory{index}"
command = ["{sys.executable}", "-m", "{BOT_MODULE}"{argument}]
cwd = "{REPO}"
"""
        for index in range(bots)
    )
    text = f"""
[league]
seed = 5
table_size = 3
hand_limit = {1 if slow else 3}
logs = "logs"

[schedule]
duplicate = {"true" if duplicate else "false"}

[time_control]
move_time = 30.0
startup_time = 60.0
{entries}"""
    path = tmp_path / "fair.toml"
    path.write_text(text)
    return parse_config(text, path)


async def play(
    tmp_path: Path,
    config: LeagueConfig,
    jobs: int,
    cluster: str | None = None,
    bot_processes: int = BOT_PROCESSES,
) -> tuple[LeagueRun, SilentReporter, int]:
    reporter = SilentReporter()
    with LeagueStore.for_league(tmp_path / "fair.db", config) as store:
        run = await run_league(
            config,
            store,
            jobs=jobs,
            reporter=reporter,
            logs=tmp_path / "logs",
            handle_signals=False,
            cluster=cluster,
            bot_processes=bot_processes,
        )
        return run, reporter, store.count()


def stderr_lines(tmp_path: Path) -> list[str]:
    return [
        line
        for path in sorted((tmp_path / "logs" / "stderr").glob("*.stderr"))
        for line in path.read_text().splitlines()
    ]


async def test_the_remembering_bot_notices_a_deal_it_played_before_in_one_process() -> None:
    # The control: one process per bot playing two rotations of the same deal.
    rules = preset("boodle").with_options({"hand_limit": 3})
    control = TimeControl(move_time=30.0, startup_time=60.0)
    spec = BotSpec("memory", (sys.executable, "-m", BOT_MODULE), cwd=REPO)
    async with open_bots([spec, spec, spec], control) as sessions:
        await play_match(sessions, rules, 5, time_control=control, match_id="r0")
        await play_match(sessions[1:] + sessions[:1], rules, 5, time_control=control, match_id="r1")
        said = "".join(session.stderr_text() for session in sessions)
    assert "SEEN BEFORE" in said


@pytest.mark.parametrize(
    ("jobs", "cluster"), [(1, None), (2, None), (1, "local:1")], ids=["1", "2", "cluster"]
)
async def test_in_a_duplicate_league_no_process_meets_a_deal_twice(
    tmp_path: Path, jobs: int, cluster: str | None
) -> None:
    # On the cluster too: its tables keep their bots as --jobs's do, batches pipelined.
    config = league_config(tmp_path, duplicate=True)
    run, _, stored = await play(tmp_path, config, jobs, cluster)
    assert run.done == run.total == stored == 3  # one table, three rotations of one deal
    lines = stderr_lines(tmp_path)
    dealt = [line for line in lines if line.startswith("dealt")]
    assert len(dealt) == 3 * 3 * 3  # three bots, three hands, three matches: all seen
    assert not [line for line in lines if line.startswith("SEEN BEFORE")]
    assert lines.count("started") == 3 * 3  # each rotation of the one deal: fresh processes


async def test_a_process_that_played_one_deal_goes_on_to_other_deals(tmp_path: Path) -> None:
    # Four bots at tables of 3: four deals, three rotations each, 36 seats to fill.
    config = league_config(tmp_path, duplicate=True, bots=4)
    run, _, stored = await play(tmp_path, config, 1)
    assert run.done == stored == 12
    lines = stderr_lines(tmp_path)
    assert len([line for line in lines if line.startswith("dealt")]) == 12 * 3 * 3
    assert not [line for line in lines if line.startswith("SEEN BEFORE")]
    # One process per bot and rotation (12), not one per seat (36): the league hands
    # out every table's rotation 0 first, and a bot's process of rotation 0 of one
    # deal plays rotation 0 of the next.
    assert lines.count("started") == 4 * 3


async def test_a_table_held_to_its_seats_restarts_bots_and_still_never_repeats_a_deal(
    tmp_path: Path,
) -> None:
    # --bot-processes 3 at tables of 3: every idle process ends before another starts.
    config = league_config(tmp_path, duplicate=True, bots=4)
    run, _, stored = await play(tmp_path, config, 1, bot_processes=3)
    assert run.done == stored == 12
    lines = stderr_lines(tmp_path)
    assert len([line for line in lines if line.startswith("dealt")]) == 12 * 3 * 3
    assert not [line for line in lines if line.startswith("SEEN BEFORE")]
    assert lines.count("started") > 4 * 3  # memory held down, paid for in start-ups


async def test_bot_processes_bounds_the_bot_processes_a_table_runs_at_once(
    tmp_path: Path,
) -> None:
    # The setting that bounds a league's memory, counted by the table worker itself: at most
    # 3 at once with --bot-processes 3, where the same league unbounded keeps one for each
    # of its 4 bots; and still no deal met twice.
    config = league_config(tmp_path, duplicate=True, bots=4)
    jobs = round_robin_jobs(config, 5, DealKey.public())
    most: dict[int, int] = {}
    results: list[MatchResult] = []
    for bound in (3, BOT_PROCESSES):
        results.clear()
        pool = TablePool(
            config.bots,
            config.time_control,
            1,
            lambda _job, result: results.append(result),
            tmp_path / str(bound) / "logs",
            lambda _line: None,
            bot_processes=bound,
        )
        try:
            await pool.play(jobs)
            most[bound] = pool.most_bots
        finally:
            await pool.aclose()
        assert len(results) == len(jobs) == 12
        lines = stderr_lines(tmp_path / str(bound))
        assert len([line for line in lines if line.startswith("dealt")]) == 12 * 3 * 3
        assert not [line for line in lines if line.startswith("SEEN BEFORE")]
    assert most[3] <= 3 < most[BOT_PROCESSES]


async def test_plain_deals_keep_reusing_one_process_per_bot(tmp_path: Path) -> None:
    run, _, stored = await play(tmp_path, league_config(tmp_path, duplicate=False), 1)
    assert run.done == stored == 3
    files = sorted((tmp_path / "logs" / "stderr").glob("*.stderr"))
    # One process per bot played all three matches: its file is one unbroken session.
    assert len(files) == 3
    for path in files:
        assert path.read_text().splitlines().count("started") == 1
        assert len(path.read_text().splitlines()) == 1 + 3 * 3


def parent_of(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def descends_from_this_test(pid: int) -> bool:
    """Whether ``pid`` was started (at any depth) by this process: under pytest-xdist
    another worker may be running the same league, whose workers are not ours to kill."""
    for _ in range(16):
        parent = parent_of(pid)
        if parent is None or parent <= 1:
            return False
        if parent == os.getpid():
            return True
        pid = parent
    return False


def worker_of(pid: int) -> int | None:
    """The table worker process above ``pid`` (through any sandbox wrapper), if any."""
    for _ in range(8):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        parent = int(stat.rpartition(")")[2].split()[1])
        try:
            command = Path(f"/proc/{parent}/cmdline").read_bytes()
        except OSError:
            return None
        if b"referee.tables.worker" in command:
            return parent
        pid = parent
    return None


async def kill_workers_under_bots(kills: int | None, killed: list[int]) -> None:
    """SIGKILL the table worker of every new bot process seen, ``kills`` times at most."""
    seen: set[int] = set()
    while kills is None or len(killed) < kills:
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in seen:
                continue
            try:
                command = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if BOT_MODULE.encode() not in command or b"slow" not in command:
                continue
            seen.add(int(entry))
            worker = worker_of(int(entry))
            if worker is not None and worker not in killed and descends_from_this_test(worker):
                os.kill(worker, signal.SIGKILL)
                killed.append(worker)
        await trio.sleep(0.02)


@pytest.mark.parametrize("cluster", [None, "local:1"], ids=["jobs", "cluster"])
async def test_a_worker_killed_twice_mid_match_costs_two_replays_and_the_league_finishes(
    tmp_path: Path, cluster: str | None
) -> None:
    config = league_config(tmp_path, duplicate=False, slow=True)
    killed: list[int] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(kill_workers_under_bots, MATCH_ATTEMPTS - 1, killed)
        run, reporter, stored = await play(tmp_path, config, 1, cluster)
        nursery.cancel_scope.cancel()
    assert len(killed) == MATCH_ATTEMPTS - 1
    assert run.done == run.total == stored == 3 and not run.abandoned and not run.stopped
    replays = [w for w in reporter.warnings if "playing the match again" in w]
    assert len(replays) == MATCH_ATTEMPTS - 1
    ended = "c1-t00001-r0: its table worker ended (killed by signal 9 (SIGKILL))"
    assert replays[0].startswith(ended)


async def test_a_worker_killed_in_every_attempt_leaves_each_match_unplayed_and_named(
    tmp_path: Path,
) -> None:
    config = league_config(tmp_path, duplicate=False, slow=True)
    killed: list[int] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(kill_workers_under_bots, None, killed)
        run, reporter, stored = await play(tmp_path, config, 1)
        nursery.cancel_scope.cancel()
    assert len(killed) == 3 * MATCH_ATTEMPTS
    assert not run.stopped and stored == 0 and run.done == 0
    assert [line.split()[3] for line in run.abandoned] == [
        "c1-t00001-r0",
        "c1-t00001-r1",
        "c1-t00001-r2",
    ]
    for line in run.abandoned:
        assert line.startswith("league error: match c1-t00001-r")
        assert f"killed by signal 9 (SIGKILL)) in each of {MATCH_ATTEMPTS} attempts" in line
        assert line in reporter.warnings
