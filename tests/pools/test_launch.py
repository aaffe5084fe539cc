"""One launch command for every table worker, ignoring Ctrl-C from its first line.

Ctrl-C in a terminal reaches the whole process group: a table worker still
importing (trio, the engine: a second at start) would print a
KeyboardInterrupt traceback over the league's own "interrupted", and die
before its pool has decided anything.  The league, the server and a Dask
worker's tables all start their workers the same way, so none of them can.
"""

from __future__ import annotations

import ast
import signal
import subprocess
from pathlib import Path

import trio

from referee.bots import BotSpec
from referee.sandbox import Limits, setting_to_env
from referee.server.worker_table import WorkerTable
from referee.tables.local_pool import TablePool
from referee.tables.process import WORKER_COMMAND
from referee.transport.timecontrol import TimeControl

CONTROL = TimeControl()


def test_the_launch_command_ignores_sigint_before_it_imports_anything_else() -> None:
    code = ast.parse(WORKER_COMMAND[2]).body
    assert ast.unparse(code[0]) == "import signal"
    assert ast.unparse(code[1]) == "signal.signal(signal.SIGINT, signal.SIG_IGN)"
    later = [node for node in code[2:] if isinstance(node, ast.Import | ast.ImportFrom)]
    assert [ast.unparse(node) for node in later] == ["from referee.tables.worker import main"]


def _ignores_sigint(pid: int) -> bool:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            return bool(int(line.split()[1], 16) >> (signal.SIGINT - 1) & 1)
    return False


async def test_a_worker_interrupted_while_it_starts_goes_on_and_ends_quietly() -> None:
    process = await trio.lowlevel.open_process(
        WORKER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdin is not None and process.stderr is not None
    with trio.fail_after(60):  # a real process on a loaded machine: generous
        while not _ignores_sigint(process.pid):
            await trio.sleep(0.001)
        for _ in range(3):  # Ctrl-C, again, while it is still importing or just after
            process.send_signal(signal.SIGINT)
            await trio.sleep(0.01)
        await process.stdin.aclose()  # what a pool does to end it
        stderr = await process.stderr.receive_some(65536)
        await process.wait()
    assert process.returncode == 0
    assert stderr == b""


async def _command_of(pid: int) -> list[str]:
    # Empty for a moment after the fork returns: the kernel sets a new program's
    # arguments after the exec that lets the parent go on.
    with trio.fail_after(60):
        while not (command := Path(f"/proc/{pid}/cmdline").read_bytes()):
            await trio.sleep(0.001)
    return command.decode().split("\0")[:-1]


async def test_the_league_and_the_server_start_their_workers_with_the_same_command(
    tmp_path: Path,
) -> None:
    pool = TablePool([BotSpec("r", ("true",))], CONTROL, 1, lambda *_: None, None, print)
    league = await pool._start_worker(0)
    server = await WorkerTable.start(CONTROL, tmp_path, 1, setting_to_env("none", Limits()))
    try:
        assert await _command_of(league.process.pid) == WORKER_COMMAND
        assert await _command_of(server.process.pid) == WORKER_COMMAND
    finally:
        await league.close()
        await server.aclose()
