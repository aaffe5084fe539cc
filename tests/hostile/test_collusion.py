"""Two colluding bots cannot pass a secret through the files every sandbox shares.

Each isolated bot has its own namespaces and uid, but all see the same
read-only ``/usr`` and the few files of ``/etc`` the sandbox shows, and locks and
inotify belong to the file: a bot holding ``flock`` on ``/etc/ld.so.cache`` or a record
lock on byte N of ``/etc/ld.so.conf`` was seen by another bot asking (``F_GETLK`` names the byte:
one call carries a whole hand), and opening a file woke another's inotify
watch.  ``referee.sandbox.seccomp`` refuses those calls inside the sandbox.
Kernel keyrings held without a filter: each bot's user namespace has keyrings
of its own, even for a later bot given the same uid; so did an abstract Unix
socket and a port on 127.0.0.1 (each bot's network namespace is its own).  The bots here
(``attack_bots/collude.py``) run under the real sandbox at the same time, then
a third after the signaller has ended (the uid pool hands it the signaller's
uid); each step waits for the other's line, so nothing depends on timing.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
import trio

from referee.process import BotProcess, clean_environment, start_process
from referee.sandbox import Sandbox, detect, resolve
from referee.sandbox.isolation import UID_BASE, UID_COUNT, UidPool

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


def own_pool_sandbox(directory: Path) -> Sandbox:
    """The real sandbox, leasing uids from a pool of the test's own (above the referee's
    range): the lowest free uid is then known, whatever else runs on the machine."""
    sandbox = resolve("auto")
    assert sandbox.isolation is not None
    pool = UidPool(directory, base=UID_BASE + UID_COUNT)
    return dataclasses.replace(sandbox, isolation=dataclasses.replace(sandbox.isolation, pool=pool))


async def start(role: str, nursery: trio.Nursery, sandbox: Sandbox) -> Lines:
    bot = await start_process(
        [sys.executable, str(BOT), role],
        cwd=BOT.parent,
        env=clean_environment(),
        stdio=True,
        sandbox=sandbox,
    )
    nursery.start_soon(bot.watch)
    nursery.start_soon(bot.drain_stderr)
    return Lines(bot)


async def test_two_bots_cannot_signal_through_locks_inotify_or_keys(tmp_path: Path) -> None:
    refused = "refused (No locks available)"
    sandbox = own_pool_sandbox(tmp_path / "uids")
    async with trio.open_nursery() as nursery:
        signaller = await start("signal", nursery, sandbox)
        listener: Lines | None = None
        later: Lines | None = None
        try:
            held = await signaller.line()
            assert held == f"held flock: {refused}; lockf: {refused}; session key: ok; user key: ok"
            listener = await start("listen", nursery, sandbox)
            assert await listener.line() == "watching"
            await signaller.tell("open")
            assert await signaller.line() == "opened"
            await listener.tell("report")
            report = await listener.line()
            await signaller.bot.end()  # its uid goes back to the pool, for the next bot
            later = await start("listen", nursery, sandbox)
            assert later.bot.uid == signaller.bot.uid  # None for both, if not root
            assert await later.line() == "watching"
            await later.tell("report")
            later_report = await later.line()
        finally:
            for bot in (signaller, listener, later):
                if bot is not None:
                    await bot.bot.end()
            nursery.cancel_scope.cancel()
    assert "LEARNED" not in report + later_report, (report, later_report)
    expected = (
        f"report flock: {refused}; F_GETLK: {refused}; inotify: refused (Function not implemented)"
    )
    assert report == later_report == expected
