"""Table workers for a changing roster: the league's worker, told each match's bots as it goes.

A league's table worker (``referee.league.worker``) is given its bots once,
at setup; a competition's roster changes with every admitted version.  This
module is the same worker with two more fields on ``play``: ``bots`` (the
specs of the versions at the table, by version id, so a worker learns a new
version the first time it seats it) and ``keep`` (the versions still in play:
sessions of the others are closed, so a superseded version's process does not
linger).  Sessions, start-up retries, logs and the sandbox are the league
worker's own (``TableSessions``), and so is the way a worker ends: its stdin
closing (the server stopped, or was killed with SIGKILL) drops the match in
progress and ends every bot process tree.

Run as ``python -m referee.server.tables``; ``WorkerTable`` is the server's side.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import trio

from engine.rules import Rules
from referee.bots import BotSpec
from referee.league.runner import LeagueError, WorkerProcess
from referee.league.store import MatchKey
from referee.league.worker import (
    JsonLines,
    TableSessions,
    key_from_json,
    play_message,
    spec_from_json,
)
from referee.match import MatchResult
from referee.sandbox import SandboxError, resolve, setting_from_env
from referee.timecontrol import TimeControl

WORKER_EXIT_GRACE = 15.0
TABLE_NICENESS = 5
_UNUSED = BotSpec("unused", ("false",))  # fills the roster list's gaps; never seated


class WorkerError(Exception):
    """The referee side of a table failed (a log it cannot write); one line."""


class WorkerTable(WorkerProcess):
    """The server's side of one table worker process: the league's client, whose
    ``play`` message also names the roster's new bots and the ones to keep."""

    @classmethod
    async def start(
        cls, control: TimeControl, logs: Path, number: int, sandbox: str
    ) -> WorkerTable:
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "referee.server.tables"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        # A worker's warnings (a bot slow to start, restarted) repeat what each
        # match's result and log record, which is what the server shows.
        table = cls(process, warn=lambda _text: None)
        await table.send(
            {
                "type": "setup",
                "time_control": control.to_json(),
                "logs": str(logs),
                "number": number,
                "sandbox": sandbox,
            }
        )
        return table

    async def play(  # type: ignore[override]  # the server's roster grows per message
        self, key: MatchKey, rules: Rules, specs: dict[int, BotSpec], keep: list[int]
    ) -> MatchResult:
        message = play_message(key, rules)
        message["bots"] = {str(index): spec.to_json() for index, spec in specs.items()}
        message["keep"] = keep
        try:
            return await self.result_of(message)
        except LeagueError as error:  # WorkerDied included: the table is restarted
            raise WorkerError(str(error)) from None

    async def aclose(self) -> None:
        await self.close()


# ---------------------------------------------------------------- the worker process


def _learn(roster: list[BotSpec], specs: dict[str, Any]) -> None:
    for index_text, data in specs.items():
        index = int(index_text)
        while len(roster) <= index:
            roster.append(_UNUSED)
        roster[index] = spec_from_json(data)


async def _retire(table: TableSessions, keep: set[int]) -> None:
    for index in [i for i in table.sessions if i not in keep]:
        keeper, _session = table.sessions.pop(index)
        await keeper.close()


async def serve(stdin: trio.abc.ReceiveStream, stdout: trio.abc.SendStream) -> None:
    lines = JsonLines(stdin)
    setup = await lines.next()
    if setup is None or setup.get("type") != "setup":
        return

    async def send(message: dict[str, object]) -> None:
        await stdout.send_all(json.dumps(message).encode() + b"\n")

    try:
        sandbox = resolve(*setting_from_env(setup.get("sandbox") or None))
    except SandboxError as error:
        await send({"type": "error", "text": f"sandbox: {error}"})
        return
    control = TimeControl(**setup["time_control"])
    logs = Path(setup["logs"])
    roster: list[BotSpec] = []
    warnings: list[str] = []
    plays_in, plays_out = trio.open_memory_channel[dict[str, Any]](1)

    async def read(scope: trio.CancelScope) -> None:
        while (message := await lines.next()) is not None:
            await plays_in.send(message)
        scope.cancel()

    async def stop_on_sigterm(scope: trio.CancelScope) -> None:
        with trio.open_signal_receiver(signal.SIGTERM) as signals:
            async for _signal in signals:
                scope.cancel()

    async with trio.open_nursery() as nursery:
        with trio.CancelScope() as scope:
            nursery.start_soon(read, scope)
            nursery.start_soon(stop_on_sigterm, scope)
            table = TableSessions(
                nursery, roster, control, logs, int(setup["number"]), warnings.append, sandbox
            )
            async for message in plays_out:
                _learn(roster, message.get("bots", {}))
                await _retire(table, {int(i) for i in message.get("keep", [])})
                key = key_from_json(message["key"])
                rules = Rules.from_dict(message["rules"])
                try:
                    result = await table.play(key, rules)
                except (OSError, ValueError) as error:
                    await send({"type": "error", "text": f"{key.match_id}: {error}"})
                    break
                for text in warnings:
                    await send({"type": "warn", "text": text})
                warnings.clear()
                await send({"type": "result", "result": result.to_json()})
        nursery.cancel_scope.cancel()


async def _main() -> None:
    await serve(
        trio.lowlevel.FdStream(sys.stdin.fileno()), trio.lowlevel.FdStream(sys.stdout.fileno())
    )


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server decides when a table stops
    # A table and its bots (which inherit this) yield the CPU to the web side when the
    # cores are contended: pages stay quick while tables fill the machine.  Every bot
    # has the same niceness, so the tables stay fair among themselves.
    with contextlib.suppress(OSError):
        os.nice(TABLE_NICENESS)
    trio.run(_main)


if __name__ == "__main__":
    main()
