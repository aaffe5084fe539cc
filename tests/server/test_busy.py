"""A locked database (a management command's open write) is waited out, never fatal.

Another connection holds ``BEGIN IMMEDIATE``, as ``newmarket serve pause`` does
while it writes; the server's store is opened with a 50 ms busy timeout, so
every write meets ``database is locked`` at once.  Before, a table's
``record`` raised it out of the table loop and ended the server, the finished
match lost; a request answered 500.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import trio
import trio.testing

from referee.match.key import MatchKey
from referee.match.result import MatchResult
from referee.server import busy, play
from referee.server.competition_db import CompetitionStore, StoreError
from referee.server.competition_file import load_config
from tests.server.inprocess import (
    PLAIN_BOT,
    admitted_group,
    api_upload,
    finished,
    open_competition,
)
from tests.server.serving import add_participant, competition_file, running, upload, uploaded

BUSY_TIMEOUT = 0.05  # seconds: each attempt meets the lock at once


@contextmanager
def held_for_writing(database: Path) -> Iterator[sqlite3.Connection]:
    """Another process's write transaction on ``database``, until committed (or the end)."""
    holder = sqlite3.connect(database, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        yield holder
    finally:
        if holder.in_transaction:
            holder.execute("COMMIT")
        holder.close()


async def test_a_finished_match_is_recorded_once_the_lock_is_let_go(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, capsys: pytest.CaptureFixture[str]
) -> None:
    competition = open_competition(tmp_path, BUSY_TIMEOUT)
    store = competition.store
    group = admitted_group(store)
    played: list[str] = []

    class OneMatchTable:
        async def play(self, key: MatchKey, *_args: object) -> MatchResult:
            played.append(key.match_id)
            return finished(key.match_id, key.seed, len(key.bots))

        async def aclose(self) -> None:
            pass

    with held_for_writing(store.path) as holder:
        async with trio.open_nursery() as nursery:
            done = [0]  # only the first rotation is left to play

            async def play_it() -> None:
                await play.play_group(competition, OneMatchTable(), 1, group, {1, 2})
                done[0] = 1

            nursery.start_soon(play_it)
            await trio.sleep(20)  # virtual: the table retries, backing off, all along
            assert played == ["g1r0"] and done == [0] and store.match_count() == 0
            holder.execute("COMMIT")  # the command is done
            await trio.sleep(busy.LONGEST_WAIT)
        assert done == [1]
    assert store.rotations_done(group.id) == {0}
    said = capsys.readouterr().err.splitlines()
    assert said[0] == (
        "newmarket serve: the database is locked by another process while recording "
        "match g1r0; trying again in 0.5 s"
    )
    waits = [line.rsplit(" ", 2)[-2] for line in said]
    assert waits[:4] == ["0.5", "1", "2", "4"]  # backing off, bounded by LONGEST_WAIT
    store.close()


async def test_a_request_that_meets_a_locked_database_gets_503_with_retry_after(
    tmp_path: Path,
) -> None:
    competition = open_competition(tmp_path, BUSY_TIMEOUT)
    store = competition.store
    alice, token = store.add_participant("alice")
    with held_for_writing(store.path):
        sent = await api_upload(competition, token)
    assert sent.status_code == 503
    assert sent.json() == {"error": busy.BUSY_REASON}
    assert sent.headers["Retry-After"] == str(busy.RETRY_AFTER)
    assert store.versions(alice.id) == []  # nothing half-done to count against alice
    again = await api_upload(competition, token)
    assert again.status_code == 201, again.text
    store.close()


def test_a_store_opened_while_another_process_writes_says_so_in_one_line(
    tmp_path: Path,
) -> None:
    # A management command, or the server starting, while `sqlite3` holds a transaction:
    # "not a usable competition database: database is locked" sent the operator to restore it.
    database = tmp_path / "competition.sqlite"
    CompetitionStore.open(database).close()
    with held_for_writing(database), pytest.raises(StoreError) as refused:
        CompetitionStore.open(database, busy_timeout=BUSY_TIMEOUT)
    assert str(refused.value) == (
        f"{database}: locked by another process for 0.05 s "
        "(a management command, or sqlite3 with a transaction open?); try again"
    )


async def test_the_remote_tables_finished_match_is_recorded_beside_it_once_unlocked(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    # The remote table's pool reports a result through a plain callback, which cannot
    # wait: the locked write raised out of the pool and ended the server.
    from referee.server.remote import record_result
    from referee.tables.job import TableJob

    competition = open_competition(tmp_path, BUSY_TIMEOUT)
    store = competition.store
    group = admitted_group(store)
    key = play.group_matches(competition, group, 9, set())[0]
    job = TableJob(key, competition.config.rules)
    with held_for_writing(store.path) as holder:
        async with trio.open_nursery() as nursery:
            record_result(competition, nursery, group, job, finished(key.match_id, key.seed))
            await trio.sleep(10)
            assert store.match_count() == 0  # waiting, not lost
            holder.execute("COMMIT")
    assert store.rotations_done(group.id) == {0}
    store.close()


def test_a_running_server_answers_within_seconds_while_its_database_is_held(
    tmp_path: Path,
) -> None:
    # A real server, and sqlite3 (or a management command) holding the database: each
    # of the server's writes waits SERVING_LOCK_WAIT for it, on the trio thread that also
    # serves every page.  With the start-up's 10 s, this upload took at least 10 s.
    config = competition_file(tmp_path)
    token = add_participant(config, "alice")
    bot = tmp_path / "main.py"
    bot.write_bytes(PLAIN_BOT)
    with running(config) as server:
        with held_for_writing(load_config(config).database):
            started = time.monotonic()
            refused = upload(server, token, bot, "python3")
            took = time.monotonic() - started
        assert refused.status_code == 503, refused.text
        assert refused.headers["Retry-After"] == str(busy.RETRY_AFTER)
        assert took < 8, f"the upload waited {took:.1f} s for the lock"
        assert uploaded(server, token, bot) > 0  # once the lock is let go
