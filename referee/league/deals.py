"""Which deals a league may use given who plays in it: duplicate deals need bots that forget.

Duplicate deals (``[schedule] duplicate``, the default) replay one deal in
every seat rotation of a table, which cancels the luck of the cards only if
no bot carries a deal from one rotation to the next.  For local bots the
referee guarantees it: a table worker never lets one process play a deal
twice (``referee.league.worker``), and the sandbox gives each process a
fresh scratch directory.  A remote bot runs on its owner's machine and can
always remember, so in a league with any remote bot duplicate deals would
let it know every hand of the later rotations.

The safe default is therefore plain deals (a fresh deal per match) when a
remote bot plays, unless the league file itself writes
``[schedule] duplicate = true``: the organiser's explicit opt-in, for a
league among trusted participants.  The league's start line says which
applies (``deal_note``).
"""

from __future__ import annotations

import dataclasses
import tomllib

from referee.league.config import LeagueConfig


def duplicate_written(config: LeagueConfig) -> bool | None:
    """``[schedule] duplicate`` as the league file writes it, or None if it does not."""
    try:
        data = tomllib.loads(config.path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None  # a league built in memory: only the defaults can have applied
    schedule = data.get("schedule")
    value = schedule.get("duplicate") if isinstance(schedule, dict) else None
    return value if isinstance(value, bool) else None


def with_deal_policy(config: LeagueConfig) -> LeagueConfig:
    """``config`` with plain deals if a remote bot plays and the file did not opt in."""
    if not _remote(config) or config.format != "round_robin" or not config.schedule.duplicate:
        return config
    if duplicate_written(config) is True:
        return config
    schedule = dataclasses.replace(config.schedule, duplicate=False)
    return dataclasses.replace(config, schedule=schedule)


def deal_note(config: LeagueConfig) -> str | None:
    """One line for the start of a league with remote bots: which deals, and why."""
    if not _remote(config) or config.format != "round_robin":
        return None
    if config.schedule.duplicate:
        return (
            "deals: duplicate, as the league file asks; remote bots can remember a deal "
            "from one seat rotation to the next"
        )
    return (
        "deals: plain (a fresh deal per match), since remote bots could remember a "
        "duplicate deal; write [schedule] duplicate = true to opt in"
    )


def _remote(config: LeagueConfig) -> bool:
    return any(bot.remote for bot in config.bots)
