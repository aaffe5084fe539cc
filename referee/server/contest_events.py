"""What a contest announces: the finals planned and published, a challenge played.

Each is one line in the operations log and an event for each participant told
(``referee.server.events``: their Atom feed and the organiser's webhook), once.
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.server.competition_db import CompetitionStore
from referee.server.events import publish_event
from referee.server.operations import log_operation

KINDS = ("finals_started", "finals_published", "challenge_played", "challenge_failed")


def announce(
    store: CompetitionStore, kind: str, participants: Sequence[int], text: str, link: str
) -> None:
    """Tell ``participants`` (ids) that ``kind`` happened: ``text``, one line; ``link`` a page."""
    assert kind in KINDS, kind
    log_operation("contest", event=kind, what=text, link=link)
    for participant in participants:
        publish_event(store, participant, kind, text, link, once=f"{kind} {link} {participant}")
