"""The organiser's webhook: each event POSTed as JSON to ``[webhook] url``, retried with backoff.

The events table (``referee.server.events``) is the outbox: a row is sent
until the receiver answers 2xx, then marked ``delivered``, so an event is
delivered once, through restarts, and a receiver that was down gets what it
missed, oldest first.  A failed delivery waits 5 s, then twice as long each
time, up to an hour, and the others are tried meanwhile.  A receiver that
took an event but whose answer was lost (or a server killed between the two)
is sent it again: the body carries the event's ``id`` (also the
``X-Newmarket-Event`` header) for the receiver to see it twice.

Play never waits for it: the loop is a task of its own, each POST runs in a
worker thread with ``[webhook] timeout``, and nothing it meets (a refused
connection, a slow or broken receiver, a locked database) ends the server.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from functools import partial
from typing import Any

import trio

from referee.server.busy import written
from referee.server.competition import Competition
from referee.server.events import Event, mark_delivered, retry_later, undelivered

POLL = 2.0  # seconds between looks at the outbox

Post = Callable[[str, bytes, dict[str, str], float], str | None]


def post_json(url: str, body: bytes, headers: dict[str, str], timeout: float) -> str | None:
    """POST ``body``; None when the receiver answered 2xx, else why not, in one line."""
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            status = int(answer.status)
    except urllib.error.HTTPError as error:
        return f"HTTP {error.code}"
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        return " ".join(str(reason).split()) or type(error).__name__
    return None if 200 <= status < 300 else f"HTTP {status}"


def payload(competition: Competition, event: Event) -> dict[str, Any]:
    store = competition.store
    who = None if event.participant is None else store.participant(event.participant)
    return {
        "competition": competition.config.name,
        **event.to_json(),
        "participant": None if who is None else who.name,  # its name, not its row
    }


async def deliver_due(competition: Competition, post: Post, now: float) -> int:
    """Try each event whose delivery is due once; how many the receiver took."""
    webhook = competition.config.webhook
    if webhook is None:
        return 0
    store = competition.store
    taken = 0
    for event in undelivered(store, now):
        body = json.dumps(payload(competition, event)).encode()
        headers = {"Content-Type": "application/json", "X-Newmarket-Event": str(event.id)}
        failure = await trio.to_thread.run_sync(
            post, webhook.url, body, headers, webhook.timeout, abandon_on_cancel=True
        )
        if failure is None:
            await written(
                f"marking event {event.id} delivered", partial(mark_delivered, store, event.id)
            )
            taken += 1
            continue
        wait = await written(
            f"putting off event {event.id}", partial(retry_later, store, event, now)
        )
        _note(f"webhook: event {event.id} not delivered ({failure}); trying again in {wait:g} s")
    return taken


async def webhook_loop(
    competition: Competition, post: Post = post_json, now: Callable[[], float] = time.time
) -> None:
    """Deliver the outbox for as long as the server runs (nothing without ``[webhook]``)."""
    if competition.config.webhook is None:
        return
    while True:
        try:
            await deliver_due(competition, post, now())
        except Exception as error:  # never the server's end: said, and tried again later
            _note(f"webhook: {type(error).__name__}: {' '.join(str(error).split())}")
        await trio.sleep(POLL)


def _note(text: str) -> None:
    print(f"newmarket serve: {text}", file=sys.stderr, flush=True)
