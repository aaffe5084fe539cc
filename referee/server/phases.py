"""A contest's phases: which one it is now, what each allows, and the countdown to the next.

The competition file gives the dates ([phases]: opens, freeze, finals, ends;
``competition_file.contest_settings``), the organiser may move any of them while the
server runs (``newmarket serve move-phase``, kept in the database, read at every
look), and the time comes from the competition's clock (``Competition.clock``), so
the tests move time instead of waiting for it.  The phases, in order::

    before   until ``opens``: pages are up, nothing may be uploaded
    open     uploads, the ladder and challenges
    frozen   from ``freeze``: no uploads; the ladder and challenges go on
    finals   from ``finals``: the final evaluation plays (``referee.server.finals``)
    ended    from ``ends``: the finals' ranking is the contest's result

A date the file leaves out never comes: without ``freeze`` uploads never close.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.competition_file import (
    PHASE_NAMES,
    CompetitionConfig,
    PhaseDates,
    check_phase_order,
    parse_moment,
)
from referee.server.contest_db import move_phase, moved_phases

# The phase that begins at each date, and its words on the page.
BEGINS = {"opens": "open", "freeze": "frozen", "finals": "finals", "ends": "ended"}
LABELS = {
    "before": "not open yet",
    "open": "open for submissions",
    "frozen": "submissions closed",
    "finals": "final evaluation",
    "ended": "ended",
}
NEXT_WORDS = {
    "opens": "opens",
    "freeze": "submissions close",
    "finals": "finals start",
    "ends": "ends",
}


@dataclasses.dataclass(frozen=True)
class PhaseNow:
    name: str  # before | open | frozen | finals | ended
    label: str
    next_date: str | None  # the next date's name (opens, freeze, finals, ends)
    next_at: datetime | None
    seconds_left: float | None

    @property
    def countdown(self) -> str | None:
        """``submissions close in 2 d 3 h`` or None when nothing is ahead."""
        if self.next_date is None or self.seconds_left is None:
            return None
        return f"{NEXT_WORDS[self.next_date]} in {duration(self.seconds_left)}"

    def as_json(self) -> dict[str, object]:
        return {
            "phase": self.name,
            "label": self.label,
            "next": self.next_date,
            "next_at": None if self.next_at is None else self.next_at.isoformat(),
            "seconds_left": None if self.seconds_left is None else round(self.seconds_left),
            "countdown": self.countdown,
        }


def duration(seconds: float) -> str:
    """``2 d 3 h``, ``3 h 5 min``, ``4 min``: the two largest units, for a countdown."""
    minutes = max(0, int(seconds // 60))
    days, hours, mins = minutes // 1440, minutes // 60 % 24, minutes % 60
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {mins} min"
    return f"{mins} min" if mins else "under a minute"


def dates(competition: Competition) -> PhaseDates:
    """The file's dates with the organiser's moves over them."""
    return dates_of(competition.config, competition.store)


def dates_of(config: CompetitionConfig, store: CompetitionStore) -> PhaseDates:
    moved = moved_phases(store)
    base = config.contest.phases
    return PhaseDates(**{name: moved.get(name, getattr(base, name)) for name in PHASE_NAMES})


def now(competition: Competition) -> datetime:
    return datetime.fromtimestamp(competition.clock(), UTC)


def phase_at(given: PhaseDates, moment: datetime) -> PhaseNow:
    name = "before" if given.opens is not None else "open"
    upcoming: tuple[str, datetime] | None = None
    for date in PHASE_NAMES:
        at = getattr(given, date)
        if at is None:
            continue
        if moment >= at:
            name = BEGINS[date]
        elif upcoming is None:
            upcoming = (date, at)
    if upcoming is None:
        return PhaseNow(name, LABELS[name], None, None, None)
    date, at = upcoming
    return PhaseNow(name, LABELS[name], date, at, (at - moment).total_seconds())


def current(competition: Competition) -> PhaseNow:
    return phase_at(dates(competition), now(competition))


def upload_refusal(competition: Competition) -> str | None:
    """Why no version may be uploaded now (one line), or None."""
    given = dates(competition)
    phase = phase_at(given, now(competition))
    if phase.name == "before":
        assert given.opens is not None
        return f"submissions open at {given.opens.isoformat()}; nothing can be uploaded before"
    if phase.name in ("frozen", "finals", "ended"):
        assert given.freeze is not None
        return (
            f"submissions closed at {given.freeze.isoformat()} (the freeze); "
            "the last admitted version of each participant is the one that counts"
        )
    return None


def challenge_refusal(competition: Competition) -> str | None:
    """Why no challenge may be asked for now, or None: from the opening until the finals."""
    phase = current(competition)
    if phase.name == "before":
        return "the competition is not open yet: challenges start when it opens"
    if phase.name in ("finals", "ended"):
        return "challenges ended when the finals started: the tables are the finals' now"
    return None


def move(competition_dates: PhaseDates, phase: str, text: str) -> tuple[PhaseDates, datetime]:
    """``competition_dates`` with ``phase`` moved to ``text``; ``ValueError`` with one line
    if the phase is unknown, the time not ISO 8601 with a zone, or the order broken."""
    if phase not in PHASE_NAMES:
        raise ValueError(f"unknown phase {phase!r} (known: {', '.join(PHASE_NAMES)})")
    at = parse_moment(text)
    moved = dataclasses.replace(competition_dates, **{phase: at})
    wrong = check_phase_order(moved)
    if wrong is not None:
        raise ValueError(wrong)
    return moved, at


def move_date(
    config: CompetitionConfig, store: CompetitionStore, phase: str, text: str
) -> datetime:
    """Move ``phase`` to ``text`` in the database (``move``'s refusals as ``ValueError``);
    a running server reads it at its next look."""
    _moved, at = move(dates_of(config, store), phase, text)
    move_phase(store, phase, at)
    return at
