"""What a contest announces: the finals planned and published, a challenge played.

Today each is one line in the server's log (the operator's stderr).  This is
the one call site for the participant feed: when ``referee.server.events``
(the per-participant Atom feed and the organiser's webhook, another branch of
issue 30) is merged, ``announce`` also calls its ``publish_event`` with the
same kind, participants, text and link, and every contest event reaches the
feed without touching the finals or the challenges.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

KINDS = ("finals_started", "finals_published", "challenge_played", "challenge_failed")


def announce(kind: str, participants: Sequence[int], text: str, link: str) -> None:
    """Tell ``participants`` (ids) that ``kind`` happened: ``text``, one line; ``link`` a page."""
    assert kind in KINDS, kind
    print(f"newmarket serve: {text} ({link})", file=sys.stderr, flush=True)
