"""The server's side of a table: the league's table worker, told each match's bots as it goes.

A competition's roster changes with every admitted version, so the server
runs the league's table worker (``python -m referee.league.worker``) with no
bots at setup, and each ``play`` names the specs of the versions at the table
(by version id: a worker learns a new version the first time it seats it) and
the versions still in play (the sessions of the others are ended, so a
superseded version's process does not linger).  Sessions, start-up retries,
logs, the sandbox and the way a worker ends (its stdin closing drops the
match in progress and ends every bot process tree) are the league worker's.

The same messages go to a Dask worker's table with ``--cluster``
(``referee.server.cluster``).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import trio

from engine.rules import Rules
from referee.bots import BotSpec
from referee.league.runner import LeagueError, WorkerProcess
from referee.league.store import MatchKey
from referee.league.worker import play_message
from referee.match import MatchResult
from referee.timecontrol import TimeControl

TABLE_NICENESS = 5
"""A table and its bots yield the CPU to the web side when the cores are contended,
so pages stay quick while tables fill the machine.  Every bot has the same
niceness, so the tables stay fair among themselves."""


class WorkerError(Exception):
    """The referee side of a table failed (its worker died, a log it cannot write); one line."""


class WorkerTable(WorkerProcess):
    """One table worker process: the league's client, whose ``play`` names the roster."""

    @classmethod
    async def start(
        cls, control: TimeControl, logs: Path, number: int, sandbox: str
    ) -> WorkerTable:
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "referee.league.worker"],
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
                "niceness": TABLE_NICENESS,
            }
        )
        return table

    async def play(  # the server's roster grows per message: specs and keep come with each
        self, key: MatchKey, rules: Rules, specs: Mapping[int, BotSpec], keep: Iterable[int]
    ) -> MatchResult:
        try:
            return await self.result_of(play_message(key, rules, specs, keep))
        except LeagueError as error:  # WorkerDied included: the table is restarted
            raise WorkerError(str(error)) from None

    async def aclose(self) -> None:
        await self.close()
