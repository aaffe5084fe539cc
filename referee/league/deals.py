"""Which deals a league may use given who plays in it: duplicate deals need bots that forget.

Duplicate deals (``[schedule] duplicate``, the default) replay one deal in
every seat rotation of a table, which cancels the luck of the cards only if
no bot carries a deal from one rotation to the next.  For local bots the
referee guarantees it: a table worker never lets one process play a deal
twice (``referee.tables.worker``), and the sandbox gives each process a
fresh scratch directory.  A remote bot runs on its owner's machine and can
always remember, so in a league with any remote bot duplicate deals would
let it know every hand of the later rotations.

The safe default is therefore plain deals (a fresh deal per match) when a
remote bot plays, unless the league file itself writes
``[schedule] duplicate = true``: the organiser's explicit opt-in, for a
league among trusted participants.  The league file's reader applies that
default (``referee.league.league_file``); the league's start line says which
applies (``deal_note``).
"""

from __future__ import annotations

from referee.league.league_file import LeagueConfig


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
