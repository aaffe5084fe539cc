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
know what everyone holds.  So each bot has a small pool of processes, and a
match takes one that has not played its deal seed, or starts a fresh one
(under the sandbox with a fresh scratch directory).  Plain deals (a seed per
match) reuse one process per bot, as before; a duplicate league starts about
one process per bot and seat rotation instead of one per match.

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


@dataclasses.dataclass(eq=False)
class _Process:
    """One running bot process of a table worker, and the deals it has played."""

    keeper: _Keeper
    session: BotSession
    dealt: set[int] = dataclasses.field(default_factory=set)  # deal seeds it has played
    used: int = 0  # the worker's match number when it last played (the oldest idle goes first)


IDLE_PER_SEAT = 2
"""Idle bot processes a worker keeps, per seat of its table, for later deals.

A process that has played a deal may still play any other: in a duplicate
league a bot's process of rotation 0 of one table can play rotation 0 of the
next.  Keeping a few idle processes (the most recently used) saves most
start-ups of a duplicate league for the memory of ``IDLE_PER_SEAT`` extra
processes per seat.
"""


class TableSessions:
    """One table's worth of bot processes, reused match after match, never for a deal twice.

    Each bot has a small pool of processes.  A match takes, for each bot, a
    live process that has not played its deal seed, and starts one only if
    there is none; idle processes beyond ``IDLE_PER_SEAT`` per seat are shut
    down in the background, the least recently used first.
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
        self.processes: dict[int, list[_Process]] = {}
        self.failed_starts: dict[int, int] = {}
        self.matches = 0
        self.started = 0  # bot processes started, in all
        self.fresh_starts = 0  # of which only because every live one had played the deal

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
            setup.log_form,
        )

    async def _process(self, bot: int, seed: int | None, log_path: Path | None = None) -> _Process:
        pool = self.processes.setdefault(bot, [])
        for process in list(pool):
            session = process.session
            if session.alive:
                if seed is None or seed not in process.dealt:
                    return process
                continue
            gave_up = self.failed_starts.get(bot, 0) >= STARTUP_ATTEMPTS and not session.handshaken
            if gave_up:
                return process  # it cannot start: the default policy plays for it
            pool.remove(process)
            await process.keeper.close()  # dead: start it afresh for this match
        if pool:
            self.fresh_starts += 1
        keeper = _Keeper()
        spec = self.bots[bot]
        stderr = None
        if self.logs is not None and self.stderr_files:
            safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in spec.name)
            stderr = self.logs / "stderr" / f"{safe}-{self.number}.stderr"
        started: BotSession = await self.nursery.start(
            keeper.run, spec, self.control, stderr, self.sandbox, self.stderr_cap
        )
        self.started += 1
        process = _Process(keeper, started)
        pool.append(process)
        if not started.handshaken:
            self.failed_starts[bot] = self.failed_starts.get(bot, 0) + 1
            death = started.death
            why = "" if death is None else f": {one_line(death.detail, whole_in=log_path)}"
            self.warn(could_not_start(spec.name, why))
        return process

    async def session(self, bot: int, seed: int | None = None) -> BotSession:
        """A live session of ``bot`` that has not played deal ``seed`` (None: any deal)."""
        return (await self._process(bot, seed)).session

    @property
    def sessions(self) -> dict[int, tuple[_Keeper, BotSession]]:
        """Every process's keeper and session (for a caller that closes them all)."""
        every = [process for pool in self.processes.values() for process in pool]
        return {index: (p.keeper, p.session) for index, p in enumerate(every)}

    def learn(self, specs: dict[int, BotSpec]) -> None:
        """Bots of a growing roster (by index): new ones, or ones started anew."""
        for index, spec in specs.items():
            while len(self.bots) <= index:
                self.bots.append(UNUSED)
            self.bots[index] = spec

    async def retire(self, keep: set[int]) -> None:
        """End every process of the bots not in ``keep`` (a roster's superseded versions)."""
        for bot in [bot for bot in self.processes if bot not in keep]:
            for process in self.processes.pop(bot):
                await process.keeper.close()

    def _end_idle(self, playing: list[_Process], keep: int) -> None:
        """Shut down (in the background) all but the ``keep`` most recently used idle ones."""
        idle = [
            process
            for pool in self.processes.values()
            for process in pool
            if process.session.alive and process not in playing
        ]
        idle.sort(key=lambda process: process.used, reverse=True)
        for process in idle[keep:]:
            for pool in self.processes.values():
                if process in pool:
                    pool.remove(process)
            process.keeper.close_requested.set()

    async def play(self, key: MatchKey, rules: Rules) -> MatchResult:
        self.matches += 1
        chosen: list[_Process | None] = [None] * len(key.bots)
        # Its stderr record has all a bot that cannot start wrote, which a warning cuts.
        log_path = None if self.logs is None else self.logs / f"{key.match_id}.jsonl"
        # A warning names the file the log will be kept in (``kept`` below).
        kept_in = None if log_path is None else kept_path(log_path, self.log_form)

        async def get(seat: int, bot: int) -> None:
            chosen[seat] = await self._process(bot, key.deal_seed, kept_in)

        async with trio.open_nursery() as starting:  # start-ups are paid in parallel
            for seat, bot in enumerate(key.bots):
                starting.start_soon(get, seat, bot)
        playing = [process for process in chosen if process is not None]
        for process in playing:
            process.dealt.add(key.deal_seed)
            process.used = self.matches
        self._end_idle(playing, IDLE_PER_SEAT * len(key.bots))
        result = await play_match(
            [process.session for process in playing],
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
        await send(Result(result_json(result)))
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
