"""Remote bots in a competition: versions that connect from their owner's machine.

A participant registers a remote version (runtime ``remote``, no upload) and
gets its **bot token** on the version's page (owner only) and in the API's
answer.  Their bot then connects to the competition's ``[remote]`` port as a
league's remote bot does: ``newmarket connect HOST:PORT --token T -- COMMAND``
bridges any stdio bot, and the Python SDK connects by itself.  The listener is
the league's lobby (``referee.transport.lobby.RemoteLobby``: handshake deadlines, at
most eight pending connections, tokens compared in constant time, wrong tokens
limited per address, a reconnect replacing a dead session), which this module
extends with a roster that grows as versions are registered.

* **The token** is an HMAC of the version id under the competition's secret:
  nothing more is stored, it survives restarts, and it names one version, so
  a participant's sign-in token never travels over the bot's connection.
* **Admission is the handshake** (a documented lighter admission than an
  upload's ``newmarket check``): a remote version stays ``pending`` until its
  first connection says ``ready`` with its token and the protocol's version,
  and is admitted then.  The check's matches cannot be played against a bot
  the server does not start; from then on every fault it makes is recorded
  in its matches, as for any version.
* **Played only while connected**, at the server's remote table
  (``remote_table_loop``): its groups are played here, in the server's
  process, since a connection cannot be handed to a table worker, one group
  at a time, with the other seats' bots started as a table worker starts
  them (``TableSessions``).  Each rotation of such a group has a deal of its
  own: a remote bot is one process on its owner's machine and could remember
  a deal from one rotation to the next (as a league's remote bots play plain
  deals).  A bot that drops mid-group is waited for ``[remote] wait``
  seconds (``RemotePool``), then its seat plays by the default policy with a
  fault in each match it misses.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import sqlite3
import sys
from collections.abc import Callable
from functools import partial

import trio

from referee.bots import BotSpec
from referee.match.archive import stored_path
from referee.match.result import MatchResult
from referee.server.busy import is_busy, is_disk_full, written
from referee.server.competition import Competition
from referee.server.competition_db import Group, Version
from referee.server.competition_file import REMOTE
from referee.server.events import decide, record_match
from referee.server.operations import log_operation
from referee.server.play import RESTART_DELAY, GroupQueue, group_matches, specs, table_failure
from referee.server.sandboxing import competition_sandbox
from referee.server.worker_table import WorkerError
from referee.storage.private_files import private_dir
from referee.tables.job import TableJob
from referee.tables.remote_pool import RemotePool
from referee.tables.worker import UNUSED, TableSessions
from referee.transport.lobby import RemoteLobby
from referee.transport.session import BotSession


def bot_token(secret: bytes, version_id: int) -> str:
    """The token a remote version connects with (32 URL-safe characters)."""
    digest = hmac.new(secret, f"remote-version:{version_id}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:24]).decode()


def remote_spec(version: Version) -> BotSpec:
    return BotSpec(version.label, (), transport="tcp")


class CompetitionLobby(RemoteLobby):
    """The league's lobby, whose roster (by version id) grows as versions are registered."""

    def __init__(self, competition: Competition) -> None:
        settings = competition.config.remote
        assert settings is not None
        super().__init__([], {}, competition.config.time_control, wait=settings.wait, note=_note)
        self.competition = competition
        for version in competition.store.versions():
            if version.runtime == REMOTE and version.status in ("pending", "admitted"):
                self.register(version)

    def register(self, version: Version) -> None:
        """From now on ``version`` may connect with its token."""
        while len(self.bots) <= version.id:
            self.bots.append(UNUSED)
        self.bots[version.id] = remote_spec(version)
        self._by_token[bot_token(self.competition.store.secret, version.id)] = version.id

    def connected(self, version_id: int) -> bool:
        return self.live(version_id) is not None

    def seat(self, bot: int, session: BotSession) -> None:
        super().seat(bot, session)
        store = self.competition.store
        version = store.version(bot)
        if version is not None and version.status == "pending":
            where = "" if session.address is None else f" from {session.address[0]}"
            # What the bot says it is: its own text, shown escaped, and kept short.
            said = " ".join(filter(None, [session.reported_name, session.reported_version]))[:80]
            try:
                decide(
                    store,
                    bot,
                    "admitted",
                    f"remote: its first connection{where} passed the handshake"
                    + (f" (ready as {said!r})" if said else ""),
                    "",
                    remote_spec(version).to_json(),
                )
                log_operation(
                    "admission",
                    version=bot,
                    participant=version.participant_name,
                    number=version.number,
                    runtime=REMOTE,
                    why="its first connection passed the handshake",
                )
            except sqlite3.OperationalError as error:
                if not is_busy(error):
                    raise
                # Still pending, so never seated: its next connection admits it.
                _note(f"version {bot} connected while the database was locked; not admitted yet")
        self.competition.notify()  # a connected version can be seated now


def _note(text: str) -> None:
    print(f"newmarket serve: {text}", file=sys.stderr, flush=True)


def record_result(
    competition: Competition,
    nursery: trio.Nursery,
    group: Group,
    job: TableJob,
    result: MatchResult,
) -> None:
    """Store the remote table's finished match now, or in a task of ``nursery`` once it can.

    The pool's result callback is not async, so it cannot wait out a locked (or
    full) database as the local tables do (``referee.server.busy.written``);
    the finished match must not be lost either, so the waiting write goes on
    beside the table.
    """
    log = stored_path(competition.config.logs_dir, job.key.match_id, result)
    store = competition.store
    write = partial(
        record_match,
        store,
        group,
        job.key.rotation,
        job.key.bots,
        result,
        log,
        identity=job.key.seed,
    )
    try:
        write()
    except sqlite3.OperationalError as error:
        if not (is_busy(error) or is_disk_full(error)):
            raise
        nursery.start_soon(_record_when_written, competition, job.key.match_id, write)
        return
    competition.notify()


async def _record_when_written(
    competition: Competition, match_id: str, write: Callable[[], bool]
) -> None:
    await written(f"recording match {match_id}", write)
    competition.notify()


async def remote_table_loop(
    competition: Competition, queue: GroupQueue, lobby: CompetitionLobby, number: int
) -> None:
    """The remote table: groups with a connected remote version, played in this process."""
    config = competition.config
    private_dir(config.logs_dir)
    roster = lobby.bots  # one list, by version id, for the lobby, the pool and the local bots
    playing: list[Group] = []

    def record(job: TableJob, result: MatchResult) -> None:
        record_result(competition, nursery, playing[0], job, result)

    async with trio.open_nursery() as nursery:
        sandbox = competition_sandbox(config)
        local = TableSessions(
            nursery,
            roster,
            config.time_control,
            config.logs_dir,
            number,
            _note,
            sandbox,
            config.storage.stderr_bytes,
            stderr_files=False,  # as at a worker's table: each match's log keeps its stderr
            log_form=config.match_logs,
        )
        pool = RemotePool(roster, config.time_control, lobby, local, record, config.logs_dir, _note)
        pool.bots = roster  # the pool copies its roster; this one grows
        try:
            while True:
                group, done = await queue.next_group(remote=True)
                playing[:] = [group]
                if await _play_group(competition, queue, pool, local, number, group, done):
                    queue.group_played(group)
        finally:
            with trio.CancelScope(shield=True):
                for keeper, _session in list(local.sessions.values()):
                    await keeper.close()
            nursery.cancel_scope.cancel()


async def _play_group(
    competition: Competition,
    queue: GroupQueue,
    pool: RemotePool,
    local: TableSessions,
    number: int,
    group: Group,
    done: set[int],
) -> bool:
    """Play ``group`` at the remote table; False once the referee's own failure is judged."""
    seated = specs(competition, group.versions)
    local.learn({version: spec for version, spec in seated.items() if not spec.remote})
    playing_now = {v.id for v in competition.store.playing_versions()}
    await local.retire(playing_now | set(group.versions))
    keys = group_matches(competition, group, number, done)
    competition.playing_now[number] = f"g{group.id}, remote"
    try:
        await pool.play([TableJob(key, competition.config.rules) for key in keys])
    except (OSError, ValueError) as error:
        # The referee's own failure (a log it cannot write), as a table worker
        # reports it, and judged alike (a full disk is nobody's fault).
        failure = WorkerError(str(error))
        failure.match_id = f"g{group.id}"
        await table_failure(competition, queue, number, group, failure)
        await trio.sleep(RESTART_DELAY)
        return False
    finally:
        competition.playing_now.pop(number, None)
    return True
