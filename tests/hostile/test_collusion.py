"""Two colluding bots cannot pass a secret through the files every sandbox shares.

Each isolated bot has its own namespaces and uid, but all see the same
read-only ``/etc`` and ``/usr``, and locks and inotify belong to the file:
a bot holding ``flock`` on ``/etc/hostname`` or a record lock on byte N of
``/etc/passwd`` was seen by another bot asking (``F_GETLK`` names the byte:
one call carries a whole hand), and opening a file woke another's inotify
watch.  ``referee.sandbox.seccomp`` refuses those calls inside the sandbox.
The two bots here (``attack_bots/collude.py``) run under the real sandbox at
the same time; each step waits for the other's line, so nothing depends on
timing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio

from referee.process import BotProcess, clean_environment, start_process
from referee.sandbox import detect, resolve

SUPPORT = detect()
pytestmark = [
    pytest.mark.skipif(
        SUPPORT.isolation is None, reason=f"no isolation on this machine: {SUPPORT.isolation_why}"
    ),
    pytest.mark.skipif(
        SUPPORT.isolation is not None and SUPPORT.isolation.seccomp is None,
        reason="no seccomp filter for this machine (not x86_64, or bwrap without --seccomp)",
    ),
]
BOT = Path(__file__).resolve().parent / "attack_bots" / "collude.py"


class Lines:
    """A bot's stdout, a line at a time, with a generous deadline per line."""

    def __init__(self, bot: BotProcess) -> None:
        self.bot = bot
        self.buffer = b""

    async def line(self) -> str:
        assert self.bot.process.stdout is not None
        with trio.fail_after(60):
            while b"\n" not in self.buffer:
                data = await self.bot.process.stdout.receive_some(4096)
                assert data, f"the bot ended: {self.bot.stderr.text()}"
                self.buffer += data
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()

    async def tell(self, text: str) -> None:
        assert self.bot.process.stdin is not None
        await self.bot.process.stdin.send_all(text.encode() + b"\n")


async def start(role: str, nursery: trio.Nursery) -> Lines:
    bot = await start_process(
        [sys.executable, str(BOT), role],
        cwd=BOT.parent,
        env=clean_environment(),
        stdio=True,
        sandbox=resolve("auto"),
    )
    nursery.start_soon(bot.watch)
    nursery.start_soon(bot.drain_stderr)
    return Lines(bot)


async def test_two_bots_cannot_signal_through_locks_or_inotify_on_shared_files() -> None:
    async with trio.open_nursery() as nursery:
        signaller = await start("signal", nursery)
        listener: Lines | None = None
        try:
            held = await signaller.line()
            assert (
                held
                == "held flock: refused (No locks available); lockf: refused (No locks available)"
            )
            listener = await start("listen", nursery)
            assert await listener.line() == "watching"
            await signaller.tell("open")
            assert await signaller.line() == "opened"
            await listener.tell("report")
            report = await listener.line()
        finally:
            for bot in (signaller, listener):
                if bot is not None:
                    await bot.bot.end()
            nursery.cancel_scope.cancel()
    assert "LEARNED" not in report, report
    assert report == (
        "report flock: refused (No locks available); F_GETLK: refused (No locks available); "
        "inotify: refused (Function not implemented)"
    )
