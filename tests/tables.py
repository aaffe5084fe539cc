"""Seating real bot processes at a table, with one bot's start-up timed alone if need be.

A test of a start-up verdict (a bot that never says ready, floods, or is slow)
gives that bot a limit of a few seconds.  Were its table mates held to the same
limit, started side by side with it on a loaded machine (a flooding bot takes a
core), they could miss it too, and the verdict would be on them.  So
``open_table`` starts the mates first, each under a generous limit, then the bot
under test alone under its own: its verdict depends on nothing but itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import trio

from referee.bots import BotSpec
from referee.sandbox import Sandbox
from referee.transport.session import BotSession, open_bots
from referee.transport.timecontrol import TimeControl

MATES_STARTUP = 60.0
"""The other bots' start-up limit when a test times the first bot's start-up alone."""


@asynccontextmanager
async def open_table(
    specs: Sequence[BotSpec],
    control: TimeControl,
    *,
    first_startup: float | None = None,
    sandbox: Sandbox | None = None,
    began: list[float] | None = None,
) -> AsyncIterator[list[BotSession]]:
    """The sessions of ``specs``, all started side by side under ``control``; or, with
    ``first_startup``, the others first under a generous limit of their own, then the first
    alone under that one.  ``began`` is told when the first bot's start began (trio's
    clock)."""
    if first_startup is None:
        if began is not None:
            began.append(trio.current_time())
        async with open_bots(specs, control, sandbox=sandbox) as sessions:
            yield sessions
        return
    mates_control = dataclasses.replace(
        control, startup_time=max(control.startup_time, MATES_STARTUP)
    )
    first_control = dataclasses.replace(control, startup_time=first_startup)
    async with open_bots(specs[1:], mates_control, sandbox=sandbox) as mates:
        if began is not None:
            began.append(trio.current_time())
        async with open_bots(specs[:1], first_control, sandbox=sandbox) as first:
            yield [*first, *mates]
