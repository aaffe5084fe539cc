"""A table worker: one process that referees one table's matches, one after another.

Why a process per table: refereeing is Python work (the engine, the
protocol, the log), about as much CPU per match as all the bots at the table
together, so one referee process for every table would be the bottleneck of
``--jobs N`` long before the cores are.  A worker per table lets the tables
run on separate cores; the pool's process only hands out matches and writes
the results (SQLite is written by one process only, so there are no write
locks to contend for).

The worker keeps one session per bot it has met and reuses it for later
matches (the protocol's lifecycle), with one exception that fairness
demands: a process never plays the same deal twice.  In a duplicate league
the seat rotations of a table share one deal seed, and a process that played
rotation 0 has seen every hand at its ``hand_ended``; in rotation 1 it would
know what everyone holds.  So a match takes, for each bot, a process that has
not played its deal seed, or starts a fresh one (under the sandbox with a
fresh scratch directory); which one, and which idle ones end to bound the
memory, is ``referee.tables.bot_processes``'s rule.  Plain deals (a seed per
match) reuse one process per bot; a duplicate league starts about one process
per bot and seat rotation.

A session lives in its own small task (``_Keeper``), because trio closes
nurseries and cancel scopes in the order they were opened, and a crashed bot
must be replaceable while the others stay open.  A session that died is
started afresh before the next match with that bot, so one crash costs one
match; a bot that cannot even start is tried twice per worker, then left
dead (the default policy plays for it, and every such match records its
fault).

The conversation with its pool is typed JSON lines on stdin/stdout
(``referee.tables.messages``): a ``Setup``, then ``Play`` after ``Play``, each
answered by its ``Result`` (and ``Warn`` lines before it), or a ``Failed`` and
the end.  A roster that changes as it goes (the competition server,
``referee.server``) sends no bots at setup, and each ``Play`` names the specs
of the bots at its table and the bots still in play.

The worker stops when its stdin ends (the league process finished, was
stopped, or was killed with SIGKILL) or on SIGTERM: the match in progress is
dropped, and every bot process tree is ended on the way out.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio

from engine.rules import Rules
from protocol.timing import DEFAULT_STDERR_CAP_BYTES
from referee.bots import BotSpec
from referee.match.archive import DEFAULT_LOG_FORM, LogForm, kept, kept_path
from referee.match.key import MatchKey
from referee.match.referee import play_match
from referee.match.result import MatchResult, result_json
from referee.sandbox import Sandbox, SandboxError, resolve, setting_from_env
from referee.storage.stderr_files import stderr_path
from referee.tables.bot_processes import Held, ProcessPlan
from referee.tables.messages import (
    Failed,
    FromWorker,
    MessageReader,
    PipeError,
    Play,
    Result,
    Setup,
    ToWorker,
    Warn,
    decode_to_worker,
    encode,
)
from referee.transport.process import SHORTENED, shortened
from referee.transport.session import BotSession, open_bot
from referee.transport.timecontrol import TimeControl

STARTUP_ATTEMPTS = 2  # per bot and worker; after that a bot that cannot start stays dead
UNUSED = BotSpec("unused", ("false",))  # fills a growing roster's gaps; never seated


# ---------------------------------------------------------------- warnings


def one_line(text: str, limit: int = 400, whole_in: Path | None = None) -> str:
    """``text`` on one line for a warning, ``shortened`` past ``limit`` (a bot's stderr
    line in a detail already is, at 200); if anything was left out, here or in the detail,
    it ends by naming ``whole_in``, the file that has it whole (the match's log)."""
    line = shortened(" ".join(text.split()), limit)
    if whole_in is not None and SHORTENED.search(line):
        line += f" (whole in {whole_in})"
    return line


COULD_NOT_START = " could not start"


def could_not_start(name: str, why: str) -> str:
    """The warning a worker sends when bot ``name`` fails to start (``why``: one line).

    A league says this once per bot, from the results (``referee.league.runner.StartupFaults``),
    and drops these (``is_could_not_start``): a worker sends one per attempt, and
    every worker makes its own attempts.
    """
    return f"{name}{COULD_NOT_START}{why}"


def is_could_not_start(text: str, name: str) -> bool:
    """Whether ``text`` is ``could_not_start`` about bot ``name``."""
    return text.startswith(f"{name}{COULD_NOT_START}")


# ---------------------------------------------------------------- sessions


class _Keeper:
    """One bot session, held open by its own task until asked to close."""

    def __init__(self) -> None:
        self.close_requested = trio.Event()
        self.closed = trio.Event()

    async def run(
        self,
        spec: BotSpec,
        control: TimeControl,
        stderr_path: Path | None,
        sandbox: Sandbox | None = None,
        stderr_cap: int = DEFAULT_STDERR_CAP_BYTES,
        *,
        task_status: trio.TaskStatus[BotSession] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        try:
            async with open_bot(
                spec, control, stderr_path=stderr_path, sandbox=sandbox, stderr_cap=stderr_cap
            ) as session:
                task_status.started(session)
                await self.close_requested.wait()
        finally:
            self.closed.set()

    async def close(self) -> None:
        self.close_requested.set()
        await self.closed.wait()


@dataclasses.dataclass(frozen=True, eq=False)
class _Running:
    """One running bot process of a table worker: its keeper task and its session."""

    keeper: _Keeper
    session: BotSession


_Process = Held[_Running]

IDLE_PER_SEAT = 2
"""Idle bot processes a worker keeps, per seat of its table, unless its pool sets a bound.

The bound of a table worker whose pool says nothing of it (the competition
server's tables, a Dask worker's): ``IDLE_PER_SEAT`` idle processes per seat
besides the seats' own.  A league's pool sets its own (``Setup.bot_processes``
and ``Setup.per_bot``, ``referee.tables.local_pool``).
"""


class TableSessions:
    """One table's worth of bot processes, reused match after match, never for a deal twice.

    Which process plays a seat, and which idle ones end, is ``ProcessPlan``'s
    rule (``referee.tables.bot_processes``): a live process of the bot that has
    not played the deal, else a new one, after the idle ones the bounds leave
    no room for have ended.  ``limit`` bounds the processes running at once
    (None: ``IDLE_PER_SEAT`` idle per seat besides the table's), ``per_bot``
    those of one bot (None: no bound).
    """

    def __init__(
        self,
        nursery: trio.Nursery,
        bots: list[BotSpec],
        control: TimeControl,
        logs: Path | None,
        number: int,
        warn: Callable[[str], None],
        sandbox: Sandbox | None = None,
        stderr_cap: int = DEFAULT_STDERR_CAP_BYTES,
        stderr_files: bool = True,
        limit: int | None = None,
        per_bot: int | None = None,
        log_form: LogForm = DEFAULT_LOG_FORM,
    ) -> None:
        self.log_form = log_form  # how each match's log is kept (referee.match.archive)
        self.sandbox = sandbox
        self.stderr_cap = stderr_cap
        self.stderr_files = stderr_files
        self.nursery = nursery
        self.bots = bots
        self.control = control
        self.logs = logs
        self.number = number
        self.warn = warn
        self.limit = limit
        self.plan: ProcessPlan[_Running] = ProcessPlan(limit, per_bot)
        self.failed_starts: dict[int, int] = {}
        self.matches = 0
        self.started = 0  # bot processes started, in all
        self.most = 0  # the most bot processes running at once

    @classmethod
    def for_setup(
        cls, setup: Setup, nursery: trio.Nursery, warn: Callable[[str], None], sandbox: Sandbox
    ) -> TableSessions:
        """A worker's table, as its pool's ``Setup`` asks."""
        return cls(
            nursery,
            list(setup.bots),
            setup.time_control,
            None if setup.logs is None else Path(setup.logs),
            setup.number,
            warn,
            sandbox,
            setup.stderr_cap or DEFAULT_STDERR_CAP_BYTES,
            setup.stderr_files,
            setup.bot_processes or None,
            setup.per_bot or None,
            setup.log_form,
        )

    def _gave_up(self, bot: int, process: _Process) -> bool:
        """Whether ``process`` is a start-up that failed once too often: the policy plays for it."""
        handshaken = process.handle.session.handshaken
        return self.failed_starts.get(bot, 0) >= STARTUP_ATTEMPTS and not handshaken

    async def _drop_dead(self, bot: int) -> _Process | None:
        """Forget (and close) the dead processes of ``bot``; the one kept if it cannot start.

        A dead process is started afresh for the bot's next match, unless the bot
        could not start too often: then it stays, and the default policy plays for
        it in every match.
        """
        given_up = None
        for process in list(self.plan.held.get(bot, [])):
            if process.handle.session.alive:
                continue
            if self._gave_up(bot, process):
                given_up = given_up or process
                continue
            self.plan.forget(process)
            await process.handle.keeper.close()
        return given_up

    async def _start(self, bot: int, log_path: Path | None = None) -> _Process:
        keeper = _Keeper()
        spec = self.bots[bot]
        stderr = None
        if self.logs is not None and self.stderr_files:
            stderr = stderr_path(self.logs / "stderr", spec.name, self.number)
        started: BotSession = await self.nursery.start(
            keeper.run, spec, self.control, stderr, self.sandbox, self.stderr_cap
        )
        self.started += 1
        process = self.plan.add(bot, _Running(keeper, started))
        self.most = max(self.most, len(self.plan))
        if not started.handshaken:
            self.failed_starts[bot] = self.failed_starts.get(bot, 0) + 1
            death = started.death
            why = "" if death is None else f": {one_line(death.detail, whole_in=log_path)}"
            self.warn(could_not_start(spec.name, why))
        return process

    async def session(self, bot: int, seed: int | None = None) -> BotSession:
        """A live session of ``bot`` that has not played deal ``seed`` (None: any deal)."""
        process = await self._drop_dead(bot) or self.plan.reusable(bot, seed)
        if process is None:
            await self._end(self.plan.to_end([bot], []))
            process = await self._start(bot)
        return process.handle.session

    @property
    def sessions(self) -> dict[int, tuple[_Keeper, BotSession]]:
        """Every process's keeper and session (for a caller that closes them all)."""
        every = self.plan.every()
        return {index: (p.handle.keeper, p.handle.session) for index, p in enumerate(every)}

    def learn(self, specs: dict[int, BotSpec]) -> None:
        """Bots of a growing roster (by index): new ones, or ones started anew."""
        for index, spec in specs.items():
            while len(self.bots) <= index:
                self.bots.append(UNUSED)
            self.bots[index] = spec

    async def retire(self, keep: set[int]) -> None:
        """End every process of the bots not in ``keep`` (a roster's superseded versions)."""
        for bot in [bot for bot in self.plan.held if bot not in keep]:
            for process in list(self.plan.held[bot]):
                self.plan.forget(process)
                await process.handle.keeper.close()

    @staticmethod
    async def _end(processes: list[_Process]) -> None:
        """End ``processes`` (idle ones the plan let go) all at once, before others start."""
        if processes:
            async with trio.open_nursery() as ending:
                for process in processes:
                    ending.start_soon(process.handle.keeper.close)

    async def play(self, key: MatchKey, rules: Rules) -> MatchResult:
        self.matches += 1
        # Its stderr record has all a bot that cannot start wrote, which a warning cuts.
        log_path = None if self.logs is None else self.logs / f"{key.match_id}.jsonl"
        # A warning names the file the log will be kept in (``kept`` below).
        kept_in = None if log_path is None else kept_path(log_path, self.log_form)
        given: dict[int, _Process] = {}
        for seat, bot in enumerate(key.bots):
            if (kept_process := await self._drop_dead(bot)) is not None:
                given[seat] = kept_process
        if self.limit is None:  # the default bound: IDLE_PER_SEAT idle per seat, and the seats
            self.plan.limit = (IDLE_PER_SEAT + 1) * len(key.bots)
        chosen, ending = self.plan.seat(key.bots, key.deal_seed, given)
        await self._end(ending)
        starting = [seat for seat, process in enumerate(chosen) if process is None]

        async def start(seat: int) -> None:
            chosen[seat] = await self._start(key.bots[seat], kept_in)

        async with trio.open_nursery() as starting_all:  # start-ups are paid in parallel
            for seat in starting:
                starting_all.start_soon(start, seat)
        playing = [process for process in chosen if process is not None]
        self.plan.played(playing, key.deal_seed)
        result = await play_match(
            [process.handle.session for process in playing],
            rules,
            key.deal_seed,  # the derived seed: this process never sees the league's key
            time_control=self.control,
            match_id=key.match_id,
            log_path=log_path,
            chips=key.start_chips,  # each seat its own (a bankroll league carries bankrolls)
        )
        return kept(result, self.log_form)


# ---------------------------------------------------------------- the process


async def serve(stdin: trio.abc.ReceiveStream, stdout: trio.abc.SendStream) -> None:
    """Play the matches the pool sends until stdin ends.

    A line that is not one of the pool's messages ends the worker with one line
    on stderr (``SystemExit``): the pool sees the exit as a death, as any other.
    """
    lines = MessageReader(stdin, decode_to_worker)
    setup = await _setup(lines)
    if setup is None:
        return
    send = _sender(stdout)
    try:
        # Resolved here, on the machine where the bots run.
        sandbox = resolve(*setting_from_env(setup.sandbox))
    except SandboxError as error:
        await send(Failed(f"sandbox: {error}"))
        return
    with contextlib.suppress(OSError):
        # Asked by the competition server: its tables yield the cores to its web side.
        os.nice(setup.niceness)
    plays_in, plays_out = trio.open_memory_channel[ToWorker](1)
    bad_line: list[str] = []  # why the worker stops, if a line from its pool was not a message

    async def read(scope: trio.CancelScope) -> None:
        # Always reading, so that the end of stdin stops even a match in progress.
        try:
            while (message := await lines.next()) is not None:
                await plays_in.send(message)
        except PipeError as error:
            bad_line.append(f"table worker: a bad line from its pool ({error})")
        scope.cancel()  # the pool's process is done, stopped or gone

    async with trio.open_nursery() as nursery:
        with trio.CancelScope() as scope:
            nursery.start_soon(read, scope)
            nursery.start_soon(_stop_on_sigterm, scope)
            warnings: list[str] = []
            table = TableSessions.for_setup(setup, nursery, warnings.append, sandbox)
            bad_line += await _play_all(table, plays_out, send, warnings)
        await _close_all(table)
        nursery.cancel_scope.cancel()  # ends what is left (the helpers, closing keepers)
    if bad_line:
        raise SystemExit(bad_line[0])


async def _setup(lines: MessageReader[ToWorker]) -> Setup | None:
    """The pool's first message, or None if it sent none; ``SystemExit`` if it is not a setup."""
    try:
        setup = await lines.next()
    except PipeError as error:
        raise SystemExit(f"table worker: a bad line from its pool ({error})") from None
    if setup is not None and not isinstance(setup, Setup):
        raise SystemExit(f"table worker: expected setup, got {type(setup).__name__.lower()}")
    return setup


async def _play_all(
    table: TableSessions,
    plays: trio.MemoryReceiveChannel[ToWorker],
    send: Callable[[FromWorker], Awaitable[None]],
    warnings: list[str],
) -> list[str]:
    """Play each ``Play`` as it comes, until the pool is done or the referee fails.

    The referee's own failure (a log it cannot write) is sent as ``Failed``;
    a message that is not a ``Play`` is returned, as why the worker stops.
    """
    async for message in plays:
        if not isinstance(message, Play):
            return [f"table worker: unexpected {type(message).__name__.lower()}"]
        if message.bots is not None:
            table.learn(message.bots)
        if message.keep is not None:
            await table.retire(set(message.keep))
        key = message.key
        try:
            rules = Rules.from_dict(message.rules)
            result = await table.play(key, rules)
        except (OSError, ValueError) as error:
            # The referee's own failure (a log it cannot write): tell the pool, stop.
            await send(Failed(f"{key.match_id}: {error}"))
            break
        for text in warnings:
            await send(Warn(text))
        warnings.clear()
        await send(Result(result_json(result), table.started, table.most))
    return []


async def _close_all(table: TableSessions) -> None:
    """Shut every bot down while the nursery still runs, all at once.

    Each session's process watcher is a task in the nursery, and sees the exit
    the moment it happens.  Cancelled first, a session would wait out its whole
    shutdown grace and SIGTERM grace (2.5 s) for an exit nobody watches: a tail
    on every league's wall time.
    """
    async with trio.open_nursery() as closing:
        for keeper, _session in table.sessions.values():
            closing.start_soon(keeper.close)


def _sender(stdout: trio.abc.SendStream) -> Callable[[FromWorker], Awaitable[None]]:
    """Send one message at a time on ``stdout`` (the match's and the warnings' tasks share it)."""
    lock = trio.Lock()

    async def send(message: FromWorker) -> None:
        async with lock:
            await stdout.send_all(encode(message))

    return send


async def _stop_on_sigterm(scope: trio.CancelScope) -> None:
    with trio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _signal in signals:
            scope.cancel()


async def _main() -> None:
    stdin = trio.lowlevel.FdStream(sys.stdin.fileno())
    stdout = trio.lowlevel.FdStream(sys.stdout.fileno())
    await serve(stdin, stdout)


def main() -> None:
    # Also here for `python -m referee.tables.worker` by hand: the pool's process decides.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    trio.run(_main)


if __name__ == "__main__":
    main()
