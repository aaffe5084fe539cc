"""The server's side of a table: a table worker, told each match's bots as it goes.

A competition's roster changes with every admitted version, so the server
runs the table worker every pool runs (``referee.tables.worker``, started by
``referee.tables.process.WorkerProcess.launch``) with no bots at setup, and
each ``play`` names the specs of the versions at the table (by version id: a
worker learns a new version the first time it seats it) and the versions
still in play (the sessions of the others are ended, so a
superseded version's process does not linger).  Sessions, start-up retries,
logs, the sandbox and the way a worker ends (its stdin closing drops the
match in progress and ends every bot process tree) are the table worker's.

The same messages go to a Dask worker's table with ``--cluster``
(``referee.server.cluster``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import trio

from engine.rules import Rules
from protocol.timing import DEFAULT_STDERR_CAP_BYTES
from referee.bots import BotSpec
from referee.match.archive import DEFAULT_LOG_FORM, LogForm
from referee.match.key import MatchKey
from referee.match.result import MatchResult
from referee.tables.job import WORKER_EXIT_GRACE, TableError
from referee.tables.messages import Play, Setup
from referee.tables.process import WorkerProcess
from referee.transport.timecontrol import TimeControl

TABLE_NICENESS = 5
"""A table and its bots yield the CPU to the web side when the cores are contended,
so pages stay quick while tables fill the machine.  Every bot has the same
niceness, so the tables stay fair among themselves."""


class WorkerError(Exception):
    """The referee side of a table failed (its worker died, a log it cannot write); one line.

    What is known of the failure, for ``referee.server.failures`` to judge whose
    it was: ``returncode`` (the worker's, if it has ended: negative for a
    signal), ``oom`` (whether the kernel's out-of-memory killer acted in the
    server's own cgroup during the match; None when this machine cannot say),
    and ``match_id`` (the match in progress, set by the table's loop).
    """

    def __init__(self, text: str, returncode: int | None = None, oom: bool | None = None) -> None:
        super().__init__(text)
        self.text = text
        self.returncode = returncode
        self.oom = oom
        self.match_id: str | None = None


class WorkerTable(WorkerProcess):
    """One table worker process: the league's client, whose ``play`` names the roster."""

    @classmethod
    async def start(
        cls,
        control: TimeControl,
        logs: Path,
        number: int,
        sandbox: str,
        stderr_cap: int = DEFAULT_STDERR_CAP_BYTES,
        log_form: LogForm = DEFAULT_LOG_FORM,
    ) -> WorkerTable:
        setup = Setup(
            control,
            str(logs),
            number,
            sandbox=sandbox,
            niceness=TABLE_NICENESS,
            # Each match's log keeps each bot's stderr (capped); a whole-session file
            # per bot process as well grew without bound, a cap's worth per process.
            stderr_cap=stderr_cap,
            stderr_files=False,
            log_form=log_form,
        )
        # A worker's warnings (a bot slow to start, restarted) repeat what each
        # match's result and log record, which is what the server shows.
        return await cls.launch(setup, warn=lambda _text: None)

    async def play(  # the server's roster grows per message: specs and keep come with each
        self, key: MatchKey, rules: Rules, specs: Mapping[int, BotSpec], keep: Iterable[int]
    ) -> MatchResult:
        oom_before = oom_kills()
        try:
            return await self.result_of(Play(key, rules.to_dict(), dict(specs), sorted(set(keep))))
        except TableError as error:  # WorkerDied included: the table is restarted
            if self.process.returncode is None:
                # It reported a failure, or stopped answering: its end is part of the verdict.
                with trio.move_on_after(WORKER_EXIT_GRACE):
                    await self.process.wait()
            oom_after = oom_kills()
            oom = None if oom_before is None or oom_after is None else oom_after > oom_before
            raise WorkerError(str(error), self.process.returncode, oom) from None

    async def aclose(self) -> None:
        await self.close()


def oom_kills() -> int | None:
    """How many processes of the server's own cgroup the OOM killer has killed, or None.

    A table worker is in the server's cgroup (its bots are in cgroups of their
    own, below it), so a worker killed by SIGKILL while this count rose was the
    kernel's choice, not a bot's.  The count is the cgroup's own: cgroup v2's
    ``memory.events.local`` (not ``memory.events``, which adds the bots'), or
    cgroup v1's ``memory.oom_control``.  None when neither can be read.
    """
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return None
    v2_mount: Path | None = None
    memory_mount: Path | None = None
    for mount in mounts:
        fields = mount.split()
        if len(fields) >= 4 and fields[2] == "cgroup2" and v2_mount is None:
            v2_mount = Path(fields[1])
        elif len(fields) >= 4 and fields[2] == "cgroup" and "memory" in fields[3].split(","):
            memory_mount = Path(fields[1])
    files: list[Path] = []
    for line in lines:
        number, controllers, path = line.split(":", 2)
        relative = path.lstrip("/")
        if number == "0" and not controllers and v2_mount is not None:
            files.append(v2_mount / relative / "memory.events.local")
        elif "memory" in controllers.split(",") and memory_mount is not None:
            files.append(memory_mount / relative / "memory.oom_control")
    for file in files:
        try:
            text = file.read_text()
        except OSError:
            continue
        for entry in text.splitlines():
            key, _, value = entry.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
    return None
