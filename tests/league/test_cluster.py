"""Leagues on a Dask cluster: the same standings as a local run, a killed worker loses nothing.

A ``LocalCluster`` of two worker processes stands in for machines; the bots
are bundled ones whose moves depend on the seed and what they are told
(``random`` reseeds at every match from the seed and the match id), with
move times far above what they need, so a result depends on the seed alone
and the standings must be equal, not close.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import distributed
import pytest
import trio

from engine.rules import Rules
from referee.bots import BotSpec, resolve_bot
from referee.league.league_db import LeagueStore
from referee.league.league_file import LeagueConfig, load_config
from referee.league.runner import SilentReporter, run_league
from referee.league.standings import standings_of
from referee.match.key import MatchKey
from referee.match.result import MatchResult
from referee.tables.dask_pool import BATCH_MOST, ClusterError, batches, bot_problems
from referee.tables.job import TableJob
from referee.transport.timecontrol import TimeControl
from tests.clirun import newmarket as in_process
from tests.league.files import afresh, write_league_file

REPO = Path(__file__).resolve().parents[2]
DASK: Any = distributed  # its LocalCluster and Client are untyped
BOTS = ("lowest", "longest", "boodle", "tracker", "random")
LEAGUE_TIMEOUT = 600  # seconds: two cores shared with other work


def league_file(directory: Path, extra_bot: str = "", cycles: int = 1) -> Path:
    schedule = f"\n[schedule]\ncycles = {cycles}\n"
    return write_league_file(
        directory, BOTS, name="cluster test", hand_limit=6, sections=schedule, extra_bot=extra_bot
    )


def play(config: LeagueConfig, db: Path, **how: Any) -> dict[str, object]:
    with LeagueStore.for_league(db, config) as store:
        run = trio.run(
            lambda: run_league(config, store, reporter=how.pop("reporter", SilentReporter()), **how)
        )
        assert not run.stopped
        assert run.done == run.total
        return standings_of(store).to_json()


@pytest.fixture(scope="module")
def local_league(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, object], Path]:
    """The league played without Dask, by ``--jobs 2`` table workers, and its database
    (the cluster's runs play a fresh copy of it: the same secret deals)."""
    directory = tmp_path_factory.mktemp("local")
    db = directory / "local.db"
    return play(load_config(league_file(directory)), db, jobs=2), db


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """Two worker processes (one thread each) and a client of our own to watch and kill them."""
    with (
        DASK.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as local,
        DASK.Client(local) as client,
    ):
        yield client


class KillOnce(SilentReporter):
    """After the first result, SIGKILLs a worker process that is playing a match."""

    def __init__(self, client: Any) -> None:
        super().__init__()
        self.client = client
        self.pids: dict[str, int] = client.run(os.getpid)
        self.killed_match: str | None = None

    def finished(self, job: TableJob, result: MatchResult) -> None:
        super().finished(job, result)
        if self.killed_match is not None:
            return
        for address, keys in self.client.processing().items():
            if keys and address in self.pids:
                os.kill(self.pids[address], signal.SIGKILL)
                self.killed_match = str(keys[0]).split("-newmarket-league-")[0]
                return


def test_a_worker_killed_mid_league_loses_nothing_and_standings_match_a_local_run(
    tmp_path: Path, cluster: Any, local_league: tuple[dict[str, object], Path]
) -> None:
    local_standings, local_db = local_league
    config = load_config(league_file(tmp_path))
    afresh(local_db, tmp_path / "cluster.db")
    reporter = KillOnce(cluster)
    address = cluster.scheduler.address
    standings = play(config, tmp_path / "cluster.db", jobs=1, cluster=address, reporter=reporter)

    assert reporter.killed_match is not None, "no worker was playing a match to kill"
    # The killed worker's match was played again elsewhere and recorded once.
    recorded = [result.match_id for result in reporter.results]
    assert recorded.count(reporter.killed_match) == 1
    assert len(recorded) == len(set(recorded))
    assert standings == local_standings
    # The nanny started a new worker process in the killed one's place.
    assert set(cluster.run(os.getpid).values()) != set(reporter.pids.values())


def test_a_bot_missing_on_the_workers_is_named_per_worker_before_any_match(
    tmp_path: Path, cluster: Any
) -> None:
    script = tmp_path / "mine.py"
    script.write_text("print('never started')\n")
    extra = f'\n[[bots]]\nname = "mine"\ncommand = "{sys.executable} mine.py"\n'
    config = load_config(league_file(tmp_path, extra))
    script.unlink()  # present where the league file was read, missing where it would run

    with pytest.raises((ClusterError, BaseExceptionGroup)) as caught:
        play(config, tmp_path / "missing.db", jobs=1, cluster=cluster.scheduler.address)
    error = caught.value
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    assert isinstance(error, ClusterError)
    workers = cluster.run(os.getpid).keys()
    assert sorted(error.lines) == sorted(
        f"worker {address}: bot mine: script 'mine.py' does not exist (looked in {tmp_path})"
        for address in workers
    )
    with LeagueStore.for_league(tmp_path / "missing.db", config) as store:
        assert store.count() == 0


def test_bot_problems_names_a_missing_program_and_passes_the_bundled_bots(
    tmp_path: Path,
) -> None:
    config = load_config(league_file(tmp_path))
    assert bot_problems(config.bots) == []
    gone = [BotSpec("gone", (str(tmp_path / "no-such-bot"),))]
    assert bot_problems(gone) == [
        f"bot gone: program '{tmp_path / 'no-such-bot'}' does not exist (looked in {Path.cwd()})"
    ]


def newmarket(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=LEAGUE_TIMEOUT,
    )


def test_newmarket_league_cluster_local_2_prints_the_local_standings(
    tmp_path: Path, local_league: tuple[dict[str, object], Path]
) -> None:
    local_standings, local_db = local_league
    path = league_file(tmp_path)
    afresh(local_db, path.with_suffix(".db"))  # the league's default database
    done = newmarket("league", str(path), "--cluster", "local:2", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == local_standings


def test_newmarket_league_refuses_a_bad_cluster_option(tmp_path: Path) -> None:
    # In this process, as the console script runs it (tests.clirun): refused before playing.
    path = league_file(tmp_path)
    code, _out, err = in_process("league", str(path), "--cluster", "local:zero")
    assert code == 2
    assert "error: --cluster local:zero: local:N needs a whole number of workers >= 1" in (
        err.splitlines()
    )
    code, _out, err = in_process("league", str(path), "--cluster", "local:2", "--jobs", "2")
    assert code == 2
    assert "--jobs and --cluster" in err


def test_ctrl_c_stops_a_local_cluster_league_cleanly_and_it_resumes(tmp_path: Path) -> None:
    path = league_file(tmp_path, cycles=3)  # 90 matches: still running when stopped
    db = tmp_path / "league.db"
    league = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "league", str(path), "--cluster", "local:2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        start_new_session=True,  # its own process group, as a terminal's Ctrl-C reaches
    )
    try:
        deadline = time.monotonic() + LEAGUE_TIMEOUT
        while finished(db) < 1:
            assert league.poll() is None, league.communicate()
            assert time.monotonic() < deadline, "no match finished"
            time.sleep(0.2)
        os.killpg(league.pid, signal.SIGINT)
        _, stderr = league.communicate(timeout=LEAGUE_TIMEOUT)
    finally:
        if league.poll() is None:
            os.killpg(league.pid, signal.SIGKILL)
            league.wait()
    assert league.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "run the same command to resume" in stderr
    kept = finished(db)
    assert 1 <= kept < 90

    resumed = newmarket("league", str(path), "--jobs", "2", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["matches_done"] == 90


def finished(db: Path) -> int:
    """Matches recorded so far, read as ``newmarket standings`` reads a running league."""
    if not db.exists():
        return 0
    try:
        connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            (count,) = connection.execute("SELECT COUNT(*) FROM matches").fetchone()
        finally:
            connection.close()
    except sqlite3.OperationalError:
        return 0  # not created yet
    return int(count)


def test_batches_hold_every_match_once_one_lane_each_and_shrink_towards_the_end() -> None:
    jobs = [
        TableJob(
            MatchKey(f"m{n}", n, n // 4, n // 4, n % 4, n, (0, 1, 2, 3), (20,) * 4, n), Rules()
        )
        for n in range(280)
    ]
    cut = batches(jobs, 2)
    assert sorted(job.key.match_id for _, batch in cut for job in batch) == sorted(
        job.key.match_id for job in jobs
    )
    for lane, batch in cut:
        # One lane's rotations (a worker thread's, as --jobs splits them), in schedule order.
        assert {job.key.rotation % 2 for job in batch} == {lane}
        assert [job.key.ordinal for job in batch] == sorted(job.key.ordinal for job in batch)
        assert 1 <= len(batch) <= BATCH_MOST
    sizes = [len(batch) for _, batch in cut]
    assert sizes[0] == BATCH_MOST and sizes[-1] == 1  # no long last batch while others wait
    assert len(cut) < len(jobs) / 4  # far fewer tasks than matches


def test_the_cluster_s_tables_keep_their_bots_as_the_local_tables_do() -> None:
    # With the worker's default of two idle processes a seat, a cluster table started a
    # sandboxed bot for most matches and played at 0.28x of --jobs 2: the cluster's tables
    # get --bot-processes and keep one process a bot, as --jobs's tables do.
    from referee.tables.dask_pool import ClusterPool, TableHost

    pool = ClusterPool(
        "local:2", [resolve_bot("random")] * 4, TimeControl(), lambda _job, _result: None,
        None, lambda _line: None, bot_processes=12,
    )  # fmt: skip
    assert pool.bot_processes == 12
    host = TableHost([resolve_bot("random")] * 4, TimeControl(), None, "p", bot_processes=12)
    assert (host.setup_template.bot_processes, host.setup_template.per_bot) == (12, 1)
