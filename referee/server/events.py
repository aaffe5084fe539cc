"""What happened in a competition, one row per event: the participants' feeds and the webhook.

Whatever a participant would want to be told without watching the pages (a
version admitted or rejected, its first crash or timeout, a phase change, a
final result) is published here once, by ``publish_event``, and read from
here by the Atom feeds (``referee.server.feed``) and the organiser's webhook
(``referee.server.webhook``), whose outbox this table also is: a row is
``delivered`` once the webhook's receiver took it.

An event is public text: whoever can read a participant's page can read its
feed, so a title names a match and a fault kind, never a card, and an event
about a match still in play says no more than its page does.  ``once`` keys
an event that may be published from several places, or again after a
restart (the first crash of a version): the second publication is a no-op.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from referee.match.result import MatchResult
from referee.server.competition_db import CompetitionStore, Group, match_id

RETRY_FIRST = 5.0  # seconds before a failed delivery is tried again, doubled each time
RETRY_LONGEST = 3600.0
# The faults a participant is told about the first time a version has them: the ones that
# mean the bot itself stopped (the others are in its match pages and counts).
TOLD_FAULTS = ("crash", "timeout")


@dataclasses.dataclass(frozen=True)
class Event:
    id: int
    participant: int | None  # None: everyone's
    kind: str
    title: str
    link: str
    detail: str
    at: float
    attempts: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "participant": self.participant,
            "kind": self.kind,
            "title": self.title,
            "link": self.link,
            "detail": self.detail,
            "at": self.at,
        }


_COLUMNS = "id, participant, kind, title, link, detail, at, attempts"


def publish_event(
    store: CompetitionStore,
    participant_id: int | None,
    kind: str,
    title: str,
    link: str,
    *,
    detail: str = "",
    once: str | None = None,
    at: float | None = None,
) -> int | None:
    """Record one event (``participant_id`` None: every participant's); its id, or None when
    an event with the same ``once`` key was published before.

    ``link`` is a path of the server's (``/matches/g3r1``): the feed and the webhook make it
    whole.  Writes one row and does not wait on any delivery: play never waits for a feed.
    """
    cursor = store.connection.execute(
        "INSERT OR IGNORE INTO events (participant, kind, title, link, detail, once, at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (participant_id, kind, title, link, detail, once, time.time() if at is None else at),
    )
    return cursor.lastrowid if cursor.rowcount else None


def decide(
    store: CompetitionStore,
    version_id: int,
    status: str,
    detail: str,
    transcript: str = "",
    spec: dict[str, Any] | None = None,
) -> None:
    """``store.decide`` and, for an admission or a rejection, its event, in one transaction:
    a decision is never written without its event, nor told twice."""
    with store.connection:
        store.connection.execute("BEGIN IMMEDIATE")
        store.decide(version_id, status, detail, transcript, spec)
        version = store.version(version_id)
        if version is None or status not in ("admitted", "rejected"):
            return
        title = f"{version.label} {status}"
        if status == "rejected":
            title += f": {detail.splitlines()[0] if detail else 'no reason given'}"
        publish_event(
            store,
            version.participant,
            status,
            title,
            f"/versions/{version.id}",
            detail=detail,
            once=f"{status}:v{version.id}",
        )


def publish_first_faults(
    store: CompetitionStore, match_id: str, seating: Sequence[int], result: MatchResult
) -> list[int]:
    """The first crash and the first timeout of each version seated in a finished match, told
    to its owner with a link to the match; the new events' ids.

    Only the kind and the match are said: the fault's detail is on the match's page once
    its group has finished, and may name a card before.
    """
    published = []
    for seat in result.seats:
        if seat.seat >= len(seating):
            continue
        version = store.version(seating[seat.seat])
        if version is None:
            continue
        for kind in TOLD_FAULTS:
            fault = next((f for f in seat.faults if f.kind == kind), None)
            if fault is None:
                continue
            found = publish_event(
                store,
                version.participant,
                kind,
                f"{version.label}: its first {kind}, in match {match_id} (hand {fault.hand})",
                f"/matches/{match_id}",
                once=f"first-{kind}:v{version.id}",
            )
            if found is not None:
                published.append(found)
    return published


def participant_events(
    store: CompetitionStore, participant_id: int, limit: int = 50, without: Sequence[str] = ()
) -> list[Event]:
    """A participant's events and everyone's, newest first; none of the kinds ``without``."""
    marks = ", ".join("?" * len(without))
    rows = store.connection.execute(
        f"SELECT {_COLUMNS} FROM events WHERE (participant = ? OR participant IS NULL) "
        f"AND kind NOT IN ({marks}) ORDER BY id DESC LIMIT ?",
        (participant_id, *without, limit),
    )
    return [Event(*row) for row in rows]


def undelivered(store: CompetitionStore, now: float, limit: int = 20) -> list[Event]:
    """The events the webhook has still to deliver whose next attempt is due, oldest first."""
    rows = store.connection.execute(
        f"SELECT {_COLUMNS} FROM events WHERE delivered = 0 AND next_attempt <= ? "
        "ORDER BY id LIMIT ?",
        (now, limit),
    )
    return [Event(*row) for row in rows]


def mark_delivered(store: CompetitionStore, event_id: int) -> None:
    store.connection.execute("UPDATE events SET delivered = 1 WHERE id = ?", (event_id,))


def retry_later(store: CompetitionStore, event: Event, now: float) -> float:
    """Count a failed delivery and put the next one off, twice as long each time; the wait."""
    wait = min(RETRY_FIRST * math.pow(2, event.attempts), RETRY_LONGEST)
    store.connection.execute(
        "UPDATE events SET attempts = attempts + 1, next_attempt = ? WHERE id = ?",
        (now + wait, event.id),
    )
    return wait


def record_match(
    store: CompetitionStore,
    group: Group,
    rotation: int,
    versions: Sequence[int],
    result: MatchResult,
    log_path: Path | None,
    *,
    identity: int,
) -> bool:
    """``store.record`` and then the first crashes and timeouts it holds told to their owners
    (``publish_first_faults``): what the tables call for each finished match."""
    stored = store.record(group, rotation, versions, result, log_path, identity=identity)
    # Also when it was stored already: a retry after the events' write met a locked database
    # must still tell them, and ``once`` keeps each from being told twice.
    publish_first_faults(store, match_id(group.id, rotation), versions, result)
    return stored
