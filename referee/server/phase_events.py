"""Each phase a contest enters is told once to every participant: their feed, the webhook, and
the operations log.

Nothing fires when a date passes, so a loop looks at the phase now and then (and whenever
the competition changes, as a moved date does).  The event's ``once`` key is the phase and
the dates it runs between, so a restart never tells it twice, and a date the organiser
moves tells the phase again (submissions open again when the freeze moves later).  A
competition without dates has no phases to tell.
"""

from __future__ import annotations

import trio

from referee.server.competition import Competition
from referee.server.competition_file import PHASE_NAMES
from referee.server.events import publish_event
from referee.server.operations import log_operation
from referee.server.phases import BEGINS, current, dates

POLL = 30.0  # seconds between looks when nothing changes: a phase is told within this


def announce_phase(competition: Competition) -> int | None:
    """Tell the phase the contest is in, if it was not told yet; the event's id, or None."""
    given = dates(competition)
    if all(getattr(given, name) is None for name in PHASE_NAMES):
        return None  # no [phases]: one open ladder, nothing to tell
    phase = current(competition)
    if phase.name == "before":
        return None  # nobody has anything to do before the opening
    began = _began(competition, phase.name)
    event = publish_event(
        competition.store,
        None,
        "phase",
        f"the contest is now: {phase.label}",
        "/",
        detail=phase.countdown or "",
        # The dates around the phase: told once, and told again if the organiser moves either.
        once=f"phase {phase.name} from {began} until {phase.next_at}",
    )
    if event is not None:
        log_operation("contest", event="phase", what=phase.label)
    return event


def _began(competition: Competition, name: str) -> str:
    """When the phase ``name`` began, as its date's text (the once key's second half)."""
    given = dates(competition)
    date = {begins: date for date, begins in BEGINS.items()}.get(name)
    at = None if date is None else getattr(given, date)
    return "-" if at is None else at.isoformat()


async def phase_loop(competition: Competition) -> None:
    """Announce each phase as the contest enters it, for the server's life."""
    while True:
        announce_phase(competition)
        with trio.move_on_after(POLL):
            await competition.changed.wait()
