"""A table worker: one process that referees one table's matches, one after another.

Why a process per table: refereeing is Python work (the engine, the
protocol, the log), about as much CPU per match as all the bots at the table
together, so one referee process for every table would be the bottleneck of
``--jobs N`` long before the cores are.  A worker per table lets the tables
run on separate cores; the league process only hands out matches and writes
the results (SQLite is written by one process only, so there are no write
locks to contend for).

The worker keeps one session per bot it has met and reuses it for later
matches (the protocol's lifecycle), with one exception that fairness
demands: a process never plays the same deal twice.  In a duplicate league
the seat rotations of a table share one deal seed, and a process that played
rotation 0 has seen every hand at its ``hand_ended``; in rotation 1 it would
know what everyone holds.  So a bot whose current process has already played
a match's seed gets a fresh process (and, under the sandbox, a fresh scratch
directory) for it; the old one is shut down in the background.  Plain deals
(a seed per match) reuse processes as before.

A session lives in its own small task (``_Keeper``), because trio closes
nurseries and cancel scopes in the order they were opened, and a crashed bot
must be replaceable while the others stay open.  A session that died is
started afresh before the next match with that bot, so one crash costs one
match; a bot that cannot even start is tried twice per worker, then left
dead (the default policy plays for it, and every such match records its
fault).

The conversation with the league process is JSON lines on stdin/stdout::

    league -> worker   {"type": "setup", "bots": [...], "time_control": {...},
                        "logs": DIR | null, "number": N}
                       {"type": "play", "key": {...}, "rules": {...}}
    worker -> league   {"type": "result", "result": {...}}    (MatchResult.to_json)
                       {"type": "warn", "text": "..."}
                       {"type": "error", "text": "..."}   (then it exits)

The worker stops when its stdin ends (the league process finished, was
stopped, or was killed with SIGKILL) or on SIGTERM: the match in progress is
dropped, and every bot process tree is ended on the way out.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import trio

from engine.rules import Rules
from protocol import MalformedMessageError, decode_json
from referee.bots import BotSpec
from referee.league.store import MatchKey
from referee.match import MatchResult, play_match
from referee.sandbox import ENV_SANDBOX, Sandbox, SandboxError, resolve, setting_from_env
from referee.session import BotSession, open_bot
from referee.timecontrol import TimeControl

STARTUP_ATTEMPTS = 2  # per bot and worker; after that a bot that cannot start stays dead


# ---------------------------------------------------------------- messages


def setup_message(
    bots: list[BotSpec], control: TimeControl, logs: Path | None, number: int
) -> dict[str, object]:
    return {
        "type": "setup",
        "bots": [spec.to_json() for spec in bots],
        "time_control": control.to_json(),
        "logs": None if logs is None else str(logs),
        "number": number,
        # The league's --sandbox / [sandbox] setting, which ``newmarket league`` puts in
        # the environment (so Dask workers started by it inherit it too).
        "sandbox": os.environ.get(ENV_SANDBOX, ""),
    }


def play_message(key: MatchKey, rules: Rules) -> dict[str, object]:
    return {"type": "play", "key": dataclasses.asdict(key), "rules": rules.to_dict()}


def spec_from_json(data: dict[str, Any]) -> BotSpec:
    return BotSpec(
        name=data["name"],
        command=tuple(data["command"]),
        cwd=None if data["cwd"] is None else Path(data["cwd"]),
        env=dict(data["env"]),
        transport=data["transport"],
        unavailable=data.get("unavailable"),
    )


def key_from_json(data: dict[str, Any]) -> MatchKey:
    return MatchKey(
        **{**data, "bots": tuple(data["bots"]), "start_chips": tuple(data["start_chips"])}
    )


def one_line(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


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
        *,
        task_status: trio.TaskStatus[BotSession] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        try:
            async with open_bot(spec, control, stderr_path=stderr_path, sandbox=sandbox) as session:
                task_status.started(session)
                await self.close_requested.wait()
        finally:
            self.closed.set()

    async def close(self) -> None:
        self.close_requested.set()
        await self.closed.wait()


class TableSessions:
    """One table's worth of bot sessions, reused match after match, never for a deal twice."""

    def __init__(
        self,
        nursery: trio.Nursery,
        bots: list[BotSpec],
        control: TimeControl,
        logs: Path | None,
        number: int,
        warn: Any,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.nursery = nursery
        self.bots = bots
        self.control = control
        self.logs = logs
        self.number = number
        self.warn = warn
        self.sessions: dict[int, tuple[_Keeper, BotSession]] = {}
        self.failed_starts: dict[int, int] = {}
        # The deal seeds each bot's current process has played: it must not meet one again.
        self.dealt: dict[int, set[int]] = {}
        self.fresh_starts = 0  # processes started only because a deal came round again

    def _retire(self, bot: int) -> None:
        """Shut the bot's process down in the background; its next match starts a new one."""
        keeper, _session = self.sessions.pop(bot)
        keeper.close_requested.set()
        self.dealt.pop(bot, None)

    async def session(self, bot: int) -> BotSession:
        held = self.sessions.get(bot)
        if held is not None:
            old_keeper, old = held
            gave_up = self.failed_starts.get(bot, 0) >= STARTUP_ATTEMPTS and not old.handshaken
            if old.alive or gave_up:
                return old
            await old_keeper.close()  # dead: start it afresh for this match
            del self.sessions[bot]
        keeper = _Keeper()
        spec = self.bots[bot]
        stderr = None
        if self.logs is not None:
            safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in spec.name)
            stderr = self.logs / "stderr" / f"{safe}-{self.number}.stderr"
        session: BotSession = await self.nursery.start(
            keeper.run, spec, self.control, stderr, self.sandbox
        )
        self.sessions[bot] = (keeper, session)
        self.dealt[bot] = set()
        if not session.handshaken:
            self.failed_starts[bot] = self.failed_starts.get(bot, 0) + 1
            death = session.death
            why = "" if death is None else f": {one_line(death.detail)}"
            self.warn(f"{spec.name} could not start{why}")
        return session

    async def play(self, key: MatchKey, rules: Rules) -> MatchResult:
        for bot in key.bots:
            if bot in self.sessions and key.seed in self.dealt.get(bot, ()):
                self._retire(bot)
                self.fresh_starts += 1
        sessions: list[BotSession | None] = [None] * len(key.bots)

        async def get(seat: int, bot: int) -> None:
            sessions[seat] = await self.session(bot)

        async with trio.open_nursery() as starting:  # start-ups are paid in parallel
            for seat, bot in enumerate(key.bots):
                if bot not in self.sessions:
                    starting.start_soon(get, seat, bot)
        for seat, bot in enumerate(key.bots):
            if sessions[seat] is None:
                sessions[seat] = await self.session(bot)
            self.dealt.setdefault(bot, set()).add(key.seed)
        ready = [session for session in sessions if session is not None]
        log_path = None if self.logs is None else self.logs / f"{key.match_id}.jsonl"
        return await play_match(
            ready,
            rules,
            key.seed,
            time_control=self.control,
            match_id=key.match_id,
            log_path=log_path,
            chips=key.start_chips,  # each seat its own (a bankroll league carries bankrolls)
        )


# ---------------------------------------------------------------- the process


async def serve(stdin: trio.abc.ReceiveStream, stdout: trio.abc.SendStream) -> None:
    """Play the matches the league process sends until stdin ends."""
    lines = JsonLines(stdin)
    setup = await lines.next()
    if setup is None:
        return
    if setup.get("type") != "setup":
        raise SystemExit(f"table worker: expected setup, got {setup.get('type')!r}")
    bots = [spec_from_json(spec) for spec in setup["bots"]]
    control = TimeControl(**setup["time_control"])
    logs = None if setup["logs"] is None else Path(setup["logs"])
    send_lock = trio.Lock()

    async def send(message: dict[str, object]) -> None:
        async with send_lock:
            await stdout.send_all(json.dumps(message).encode() + b"\n")

    try:
        # Resolved here, on the machine where the bots run.
        sandbox = resolve(*setting_from_env(setup.get("sandbox") or None))
    except SandboxError as error:
        await send({"type": "error", "text": f"sandbox: {error}"})
        return

    pending_warnings: list[str] = []
    plays_in, plays_out = trio.open_memory_channel[dict[str, Any]](1)

    async def read(scope: trio.CancelScope) -> None:
        # Always reading, so that the end of stdin stops even a match in progress.
        while (message := await lines.next()) is not None:
            await plays_in.send(message)
        scope.cancel()  # the league process is done, stopped or gone

    async with trio.open_nursery() as nursery:
        with trio.CancelScope() as scope:
            nursery.start_soon(read, scope)
            nursery.start_soon(_stop_on_sigterm, scope)
            table = TableSessions(
                nursery,
                bots,
                control,
                logs,
                int(setup["number"]),
                pending_warnings.append,
                sandbox,
            )
            async for message in plays_out:
                if message.get("type") != "play":
                    raise SystemExit(f"table worker: unexpected {message.get('type')!r}")
                key = key_from_json(message["key"])
                rules = Rules.from_dict(message["rules"])
                try:
                    result = await table.play(key, rules)
                except (OSError, ValueError) as error:
                    # The referee's own failure (a log it cannot write): tell the league, stop.
                    await send({"type": "error", "text": f"{key.match_id}: {error}"})
                    break
                for text in pending_warnings:
                    await send({"type": "warn", "text": text})
                pending_warnings.clear()
                await send({"type": "result", "result": result.to_json()})
        nursery.cancel_scope.cancel()  # ends every session (bot processes) and the helpers


class PipeError(ValueError):
    """A line on the pipe between the league and a table worker is not one of its messages."""


PIPE_NESTING = 64  # a result nests about 6 deep; the pipe's reader is bounded all the same


class JsonLines:
    """JSON messages, one per line, from a byte stream.

    Each line must be an object with a string ``type``, or ``next`` raises
    ``PipeError`` naming what was wrong: the reader never raises anything
    else for what arrives, however deep or strange (``protocol.decode_json``).
    """

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.stream = stream
        self.buffer = bytearray()

    async def next(self) -> dict[str, Any] | None:
        while b"\n" not in self.buffer:
            data = await self.stream.receive_some(65536)
            if not data:
                return None
            self.buffer += data
        line, _, rest = bytes(self.buffer).partition(b"\n")
        self.buffer = bytearray(rest)
        return pipe_message(line)


def pipe_message(line: bytes) -> dict[str, Any]:
    """One line of the league-worker pipe as a message, or ``PipeError`` saying why not."""
    try:
        message = decode_json(line, PIPE_NESTING)
    except MalformedMessageError as error:
        raise PipeError(str(error)) from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise PipeError('not a message (an object with a "type")')
    return message


async def _stop_on_sigterm(scope: trio.CancelScope) -> None:
    with trio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _signal in signals:
            scope.cancel()


async def _main() -> None:
    stdin = trio.lowlevel.FdStream(sys.stdin.fileno())
    stdout = trio.lowlevel.FdStream(sys.stdout.fileno())
    await serve(stdin, stdout)


def main() -> None:
    # Ctrl-C in a terminal reaches the whole process group; the league process decides.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    trio.run(_main)


if __name__ == "__main__":
    main()
