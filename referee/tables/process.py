"""The pool's side of one table worker process: how it is started, spoken to, and ended.

Every pool that runs table workers starts them with ``WORKER_COMMAND`` (a
league's ``--jobs``, the competition server's tables, a Dask worker's tables),
so a worker behaves the same wherever it runs: in particular it ignores
Ctrl-C from its first line, since the terminal's SIGINT reaches the whole
process group and the pool's process decides what a stop means.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Callable
from typing import Self

import trio

from referee.match.result import MatchResult, result_from_json
from referee.tables.job import WORKER_EXIT_GRACE, TableError, WorkerDied
from referee.tables.messages import (
    Failed,
    FromWorker,
    MessageReader,
    PipeError,
    Play,
    Result,
    Setup,
    Warn,
    decode_from_worker,
    encode,
)
from referee.transport.process import describe_exit

WORKER_COMMAND = [
    sys.executable,
    "-c",
    # SIGINT is ignored before anything is imported: Ctrl-C in a terminal reaches the
    # whole process group, and a worker still importing (trio, the engine: a second at
    # start) would otherwise print a KeyboardInterrupt traceback over the league's own
    # "interrupted". The pool's process decides, and stops its workers itself.
    "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "from referee.tables.worker import main; main()",
]
"""How every pool starts a table worker (``referee.tables.worker``), here or on a Dask worker."""


class WorkerProcess:
    """The pool's side of one table worker process: the league's, and the server's.

    ``send_play``/``next_result`` turn everything the worker can do wrong (end,
    write a line that is not a message, send a result that does not parse) into
    ``WorkerDied``, and its own reported failure into ``TableError``.
    """

    def __init__(self, process: trio.Process, warn: Callable[[str], None]) -> None:
        self.process = process
        self.warn = warn
        assert process.stdin is not None and process.stdout is not None
        self.stdin = process.stdin
        self.lines = MessageReader(process.stdout, decode_from_worker)
        self.bot_starts = 0  # bot processes it has started, as of its last result
        self.most_bots = 0  # the most it has run at once

    @classmethod
    async def launch(
        cls,
        setup: Setup,
        warn: Callable[[str], None],
        before_setup: Callable[[trio.Process], None] | None = None,
    ) -> Self:
        """A table worker started with ``WORKER_COMMAND`` and sent ``setup``.

        ``before_setup`` sees the process first (a pool pins it to a core there).
        A worker that dies at once shows at its first match, as any other death.
        """
        process = await trio.lowlevel.open_process(
            WORKER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        if before_setup is not None:
            before_setup(process)
        worker = cls(process, warn)
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await worker.send(setup)
        return worker

    async def send(self, message: Setup | Play) -> None:
        await self.stdin.send_all(encode(message))

    async def result_of(self, play: Play) -> MatchResult:
        """Send one ``Play`` and wait for its result (warnings go to ``warn``)."""
        await self.send_play(play)
        return await self.next_result()

    async def send_play(self, play: Play) -> None:
        """Send a ``Play``; the worker plays its plays in order (``next_result``)."""
        try:
            await self.send(play)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise WorkerDied(f"its table worker ended ({await self._exit()})") from None

    async def next_result(self) -> MatchResult:
        """The result of the oldest play sent and not yet answered."""
        while True:
            try:
                message = await self.lines.next()
            except PipeError as error:
                raise WorkerDied(f"its table worker wrote a bad line ({error})") from None
            if message is None:
                raise WorkerDied(f"its table worker ended ({await self._exit()})")
            result = result_or_warning(message, self.warn)
            if result is not None:
                self.bot_starts, self.most_bots = result.bot_starts, result.most_bots
                return result_from(result)

    async def _exit(self) -> str:
        with trio.move_on_after(WORKER_EXIT_GRACE):
            await self.process.wait()
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
            return "killed after it stopped answering"
        return describe_exit(self.process.returncode)

    async def close(self) -> None:
        """End the worker (it ends its bots first); shielded, so a stop cannot skip it."""
        with trio.CancelScope(shield=True):
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await self.stdin.aclose()
            with trio.move_on_after(WORKER_EXIT_GRACE):
                await self.process.wait()
            if self.process.returncode is None:
                self.process.kill()
                await self.process.wait()


def result_or_warning(message: FromWorker, warn: Callable[[str], None]) -> Result | None:
    """A worker's answer to a play: its ``Result``; or None, a ``Warn`` passed to ``warn``
    (more lines follow); ``TableError`` for the worker's own reported failure."""
    if isinstance(message, Failed):
        raise TableError(message.text)
    if isinstance(message, Warn):
        warn(message.text)
        return None
    return message


def result_from(message: Result) -> MatchResult:
    """The match result a worker sent; ``WorkerDied`` if it does not parse."""
    try:
        return result_from_json(message.result)
    except (KeyError, TypeError, ValueError) as error:
        raise WorkerDied(f"its table worker sent a bad result ({error!r})") from None
