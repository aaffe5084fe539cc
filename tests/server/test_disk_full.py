"""A data disk that fills while real tables play: nobody is suspended, play pauses, and resumes.

The competition's match logs are on a small tmpfs the test mounts (root only)
at ``DATA/logs``, as an operator may put them on a volume of their own, so the
disk really fills: the table workers' logs meet ``ENOSPC``.  (The database
stays on the test's own disk: on a full disk a table waits for room to record
the match it finished, rather than lose it, and would never meet the next
log's failure.)  Real bot processes play (bundled bots, as three
participants' versions), with generous limits; every wait polls with a
generous deadline.  Only the free-space reading the server takes to decide
whether to pause is injected, in the first phase, so that the tables keep
meeting the full disk itself, again and again: before issue 26 three such
failures in a row suspended everyone at the table, for good.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from referee.bots import resolve_bot
from referee.server import play
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore, Group
from referee.server.competition_file import load_config
from referee.server.failures import SUSPECT_FAILURES
from referee.server.quotas import free_bytes
from referee.server.worker_table import WorkerError
from tests.small_disks import MIB, fill, tmpfs

DISK_MB = 48
MIN_FREE_MB = 8


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    with tmpfs(tmp_path / "cup-data" / "logs", DISK_MB) as disk:
        yield disk


async def until(what: str, predicate: object, seconds: float = 240) -> None:
    """Poll ``predicate()`` (real time: real processes play) until it holds."""
    assert callable(predicate)
    with trio.fail_after(seconds):
        while not predicate():
            await trio.sleep(0.2)
    print(f"ok: {what}")


async def test_a_disk_that_fills_while_tables_play_suspends_nobody_and_play_resumes(
    small_disk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_path = tmp_path / "cup.toml"
    config_path.write_text(
        '[competition]\nname = "Cup"\nhouse_bots = []\n'
        "[tables]\nplayers = 3\nhand_limit = 3\n"
        "[time_control]\nmove_time = 10.0\nstartup_time = 30.0\n"
        '[sandbox]\nlevel = "none"\n'
        f"[storage]\nmin_free_mb = {MIN_FREE_MB}\n"
    )
    config = load_config(config_path)
    store = CompetitionStore.open(config.database)
    competition = Competition(config, store)
    for name, bot in (("alice", "random"), ("bob", "lowest"), ("carol", "longest")):
        participant, _token = store.add_participant(name)
        version = store.add_version(participant.id, "python3", "main.py", "", 1)
        spec = resolve_bot(bot, f"{name}-v1").to_json()
        store.decide(version.id, "admitted", "a bundled bot", "", spec)
    monkeypatch.setattr(play, "RESTART_DELAY", 0.2)  # not what is tested: kept short
    monkeypatch.setattr(play, "PLATFORM_DELAY_MAX", 0.5)
    queue = play.GroupQueue(competition)
    failures: list[tuple[WorkerError, str | None]] = []
    table_failed = queue.table_failed

    async def counted(group: Group, error: WorkerError, platform: str | None) -> None:
        failures.append((error, platform))
        await table_failed(group, error, platform)

    queue.table_failed = counted  # type: ignore[method-assign]
    filler = small_disk / "filler"
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                play.table_loop, competition, queue, 1, play.local_tables(competition)
            )
            await until("three matches", lambda: store.match_count() >= 3)

            # The disk fills while the server believes it has room: every table fails to
            # write its match's log, again and again, and it is the platform's fault.
            competition.disk.free = lambda _path: 1 << 40
            fill(filler)
            await until(
                "the tables to fail on the full disk",
                lambda: len(failures) > SUSPECT_FAILURES + 1,
            )
            assert all(platform is not None for _error, platform in failures), failures
            assert any("No space left on device" in error.text for error, _p in failures)
            assert {v.status for v in store.versions()} == {"admitted"}
            assert store.unfinished_groups()  # its group was not given up
            assert str(small_disk) not in competition.status

            # With the server's own reading: play pauses, and says why.
            competition.disk.free = free_bytes
            await until("the pause", lambda: competition.status.startswith("paused"))
            assert competition.status == (
                f"paused: the server is low on disk space (under {MIN_FREE_MB} MiB free); "
                "play resumes by itself when there is room"
            )
            failed = len(failures)
            paused_at = store.match_count()
            await trio.sleep(3 * play.POLL)
            assert (len(failures), store.match_count()) == (failed, paused_at)

            # Space returns: play resumes by itself, its group played again.
            filler.unlink()
            assert free_bytes(small_disk) > MIN_FREE_MB * MIB
            await until("play to resume", lambda: store.match_count() >= paused_at + 3)
            assert competition.status == "playing"
            nursery.cancel_scope.cancel()
    finally:
        with contextlib.suppress(FileNotFoundError):
            filler.unlink()
        store.close()
    assert {v.status for v in CompetitionStore.reader(config.database).versions()} == {"admitted"}
