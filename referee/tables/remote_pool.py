"""Tables with remote bots: played in the league's own process, around absences.

A remote bot's connection is accepted by the league process (``referee.transport.lobby``)
and cannot be handed to a table worker process, so a league with remote bots
plays its tables here, one at a time (a remote bot has one connection, so it
can sit at one table at a time anyway; ``--jobs`` does not apply).  Local bots
at those tables are started and kept exactly as a table worker keeps them
(``referee.tables.worker.TableSessions``).

Scheduling around absent bots: the next table played is the first, in schedule
order, whose remote bots are all connected.  When every table left needs an
absent bot, the pool waits until one connects or the earliest absence
deadline passes (``remote.wait`` seconds after the start, or after a drop);
then the first table is played with the absent bots' decisions made by the
default policy, each such match recording the bot's ``startup`` fault (a
no-show, or a drop without reconnect).  A bot that connects later plays the
tables still to come.  Each wait for a bot that was connected and left is
reported to the lobby (``RemoteLobby.kept_waiting`` and ``waited``), which
benches a bot that keeps the tables waiting; a benched bot is not waited for
at all (its seat plays by the default policy, the fault saying it was
benched).  Results
are recorded as each match ends, as always, so a stopped league resumes by
match id.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from referee.bots import BotSpec
from referee.match.archive import DEFAULT_LOG_FORM, LogForm, kept
from referee.match.referee import play_match
from referee.match.result import MatchResult
from referee.sandbox import SandboxError, resolve, setting_from_env
from referee.storage.private_files import private_dir
from referee.tables.job import TableError, TableJob
from referee.tables.worker import TableSessions
from referee.transport.lobby import RemoteLobby, TokenFileError, league_tokens, open_lobby
from referee.transport.session import BotSession
from referee.transport.timecontrol import TimeControl


class RemotePool:
    """Tables with remote bots, played in this process; ``play`` records each result."""

    def __init__(
        self,
        bots: Sequence[BotSpec],
        control: TimeControl,
        lobby: RemoteLobby,
        local: TableSessions,
        on_result: Callable[[TableJob, MatchResult], None],
        logs: Path | None,
        warn: Callable[[str], None],
    ) -> None:
        self.bots = list(bots)
        self.control = control
        self.lobby = lobby
        self.local = local
        self.on_result = on_result
        self.logs = logs
        self.warn = warn
        self._absence_warned: set[tuple[int, float]] = set()

    def _absent(self, job: TableJob) -> list[int]:
        return [
            bot for bot in job.key.bots if self.bots[bot].remote and self.lobby.live(bot) is None
        ]

    def _overdue_at(self, job: TableJob) -> float:
        """When the league stops waiting for the last absent bot of ``job`` (trio time)."""
        return max(self.lobby.absent_deadline(bot) for bot in self._absent(job))

    async def play(self, jobs: Sequence[TableJob]) -> None:
        if self.logs is not None:
            private_dir(self.logs)
        pending = list(jobs)
        while pending:
            job = next((job for job in pending if not self._absent(job)), None)
            if job is None:
                # Each table can go ahead once the last of its absent bots is overdue.
                ready_at = [self._overdue_at(job) for job in pending]
                soonest = min(ready_at)
                if trio.current_time() < soonest:
                    # Every table waits for an absent bot: the lobby counts the wait against
                    # those that left, and benches one that keeps the tables waiting.
                    absent = {bot for job in pending for bot in self._absent(job)}
                    since = trio.current_time()
                    again = self.lobby.kept_waiting(absent, since)
                    soonest = min(self._overdue_at(job) for job in pending)  # a bench ends it
                    try:
                        await self.lobby.wait_for_change(min(soonest, again))
                    finally:
                        self.lobby.waited(absent, since)
                    continue
                job = pending[ready_at.index(soonest)]
            pending.remove(job)
            result = await self._play_one(job)
            self.on_result(job, result)

    async def _play_one(self, job: TableJob) -> MatchResult:
        # Busy from the moment its session is picked: a reconnect must not replace it mid-match.
        seated = {bot for bot in job.key.bots if self.bots[bot].remote}
        self.lobby.busy |= seated
        try:
            return await self._play_seated(job)
        finally:
            self.lobby.busy -= seated

    async def _play_seated(self, job: TableJob) -> MatchResult:
        sessions: list[BotSession] = []
        for bot in job.key.bots:
            if self.bots[bot].remote:
                session = self.lobby.live(bot)
                if session is None:
                    session = self.lobby.absent_session(bot)
                    assert session.death is not None
                    self.warn(f"{job.key.match_id}: {self.bots[bot].name} {session.death.detail}")
                sessions.append(session)
            else:
                # A process that has not seen this deal (duplicate deals, if opted in).
                sessions.append(await self.local.session(bot, job.key.deal_seed))
        log_path = None if self.logs is None else self.logs / f"{job.key.match_id}.jsonl"
        result = await play_match(
            sessions,
            job.rules,
            job.key.deal_seed,
            time_control=self.control,
            match_id=job.key.match_id,
            log_path=log_path,
        )
        # Its log kept as the local tables keep theirs, off the loop the remote bots' clocks
        # run on (a compaction takes some milliseconds).
        return await trio.to_thread.run_sync(kept, result, self.local.log_form)


@asynccontextmanager
async def open_remote_pool(
    bots: Sequence[BotSpec],
    control: TimeControl,
    on_result: Callable[[TableJob, MatchResult], None],
    logs: Path | None,
    warn: Callable[[str], None],
    note: Callable[[str], None],
    *,
    host: str,
    port: int,
    wait: float,
    tokens_path: Path,
    sandbox: str = "",
    log_form: LogForm = DEFAULT_LOG_FORM,
) -> AsyncIterator[RemotePool]:
    """Listen for the remote bots and play tables in this process; ends every session on exit.

    Raises ``TableError`` (a remote bot without a token) or ``OSError``
    (the port cannot be listened on) before anything is played.  The local bots start
    here, not in a table worker, under ``sandbox`` (the setting a table worker resolves).
    """
    try:
        tokens = league_tokens(tokens_path, bots)
    except TokenFileError as error:
        raise TableError(str(error)) from None
    try:
        resolved = resolve(*setting_from_env(sandbox))
    except SandboxError as error:
        raise TableError(f"sandbox: {error}") from None
    async with open_lobby(
        bots, tokens, control, host=host, port=port, wait=wait, note=note
    ) as lobby:
        assert lobby.address is not None
        note(
            f"listening for {len(tokens)} remote bots on {lobby.address[0]}:{lobby.address[1]}"
            f" (absent bots are waited for {wait:g} s)"
        )
        async with trio.open_nursery() as nursery:
            local = TableSessions(
                nursery, list(bots), control, logs, 0, warn, resolved, log_form=log_form
            )
            try:
                yield RemotePool(bots, control, lobby, local, on_result, logs, warn)
            finally:
                with trio.CancelScope(shield=True):
                    for keeper, _session in list(local.sessions.values()):
                        await keeper.close()
                nursery.cancel_scope.cancel()
