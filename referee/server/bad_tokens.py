"""A request with a token that signs nobody in is a 401, never an anonymous request.

``Authorization: Bearer TOKEN`` must be a participant's token or the
organiser's, wherever it is sent: the API, and the one page that reads it (a
participant's feed, whose challenges are in it for its owner).  Before this
rule a wrong, rotated or revoked token was taken for no token at all: a
participant whose token the organiser had rotated downloaded a match log
without its own stderr, read a match without its transcripts, or followed a
feed without its challenges, and was not told why.  Now the request is
refused with one line before its handler (or its body) is read.

The organiser's own addresses (``/organiser``, ``/api/organiser/...``) are
left alone: they answer 404 to everyone who is not the organiser, a bad token
included, so that they do not say they exist.
"""

from __future__ import annotations

import sqlite3

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from referee.server.auth import bearer_token
from referee.server.competition_db import CompetitionStore, StoreError
from referee.server.middleware import answer
from referee.server.organiser_auth import is_organiser_token

UNKNOWN_TOKEN = (
    "unknown token: it is wrong, or the organiser rotated or revoked it "
    "(send the current one, or none for the public data)"
)

ORGANISERS = ("/organiser", "/api/organiser")  # a 404 to all but the organiser, as they are


def token_refused(store: CompetitionStore, request: Request) -> bool:
    """Whether ``request`` carries a bearer token that is neither a participant's nor the
    organiser's.  A database that cannot answer now refuses nothing: the handler meets it."""
    token = bearer_token(request)
    if token is None:
        return False
    try:
        return store.participant_by_token(token) is None and not is_organiser_token(store, token)
    except (sqlite3.Error, StoreError):
        return False


class BadTokens:
    """ASGI middleware: ``UNKNOWN_TOKEN`` (401) for a request whose token is unknown."""

    def __init__(self, app: ASGIApp, store: CompetitionStore) -> None:
        self.app = app
        self.store = store

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if (
            scope["type"] == "http"
            and not path.startswith(ORGANISERS)
            and token_refused(self.store, Request(scope))
        ):
            await answer(send, 401, UNKNOWN_TOKEN)
            return
        await self.app(scope, receive, send)
