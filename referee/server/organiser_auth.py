"""The organiser's sign-in: one organiser token, its browser sessions, and who is asking.

The organiser token is made by ``newmarket serve organiser-token COMPETITION.toml``
(each time anew: the old one stops working and every organiser session ends) or,
if there is none, by the server's first start, which prints it once on its
stderr, the organiser's terminal.  As with participants' tokens only its
SHA-256 is kept (meta ``organiser_token_hash``): the database alone signs
nobody in.

The token is typed into the ordinary sign-in form (``/signin``); it opens an
organiser session (cookie ``nm_organiser``, a row of ``organiser_sessions``
holding its hash, 12 hours at most) and the browser lands on ``/organiser``.
Scripts send it as ``Authorization: Bearer TOKEN`` to ``/api/organiser/...``.
A participant's token or session is never an organiser's: the two are looked
up in different places, and a participant's token is refused here however it
is sent.
"""

from __future__ import annotations

import secrets
import time

from starlette.requests import Request
from starlette.responses import Response

from referee.server.auth import bearer_token
from referee.server.competition_db import CompetitionStore, hash_token

ORGANISER_COOKIE = "nm_organiser"
# Shorter than a participant's 14 days: the organiser's session can ban and rerun.
ORGANISER_SESSION_SECONDS = 12 * 3600
TOKEN_KEY = "organiser_token_hash"


def new_organiser_token(store: CompetitionStore) -> str:
    """A new organiser token (shown once): the old one and every organiser session end."""
    token = "org-" + secrets.token_urlsafe(24)
    db = store.connection
    with db:
        db.execute("BEGIN IMMEDIATE")
        db.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            (TOKEN_KEY, hash_token(token)),
        )
        db.execute("DELETE FROM organiser_sessions")
    return token


def first_organiser_token(store: CompetitionStore) -> str | None:
    """A token if the competition has none yet (the server's first start), else None."""
    if store.meta(TOKEN_KEY) is not None:
        return None
    return new_organiser_token(store)


def is_organiser_token(store: CompetitionStore, token: str) -> bool:
    expected = store.meta(TOKEN_KEY)
    # Compared as hashes: a hash lookup, as participants' tokens are.
    return expected is not None and secrets.compare_digest(expected, hash_token(token))


def open_organiser_session(store: CompetitionStore) -> str:
    """A new organiser session: the cookie's value (only its hash is kept)."""
    token = secrets.token_urlsafe(32)
    now = time.time()
    db = store.connection
    with db:
        db.execute("BEGIN IMMEDIATE")
        db.execute("DELETE FROM organiser_sessions WHERE expires_at < ?", (now,))
        db.execute(
            "INSERT INTO organiser_sessions (token_hash, created_at, expires_at) VALUES (?, ?, ?)",
            (hash_token(token), now, now + ORGANISER_SESSION_SECONDS),
        )
    return token


def end_organiser_session(store: CompetitionStore, token: str) -> None:
    store.connection.execute(
        "DELETE FROM organiser_sessions WHERE token_hash = ?", (hash_token(token),)
    )


def organiser_session_live(store: CompetitionStore, token: str) -> bool:
    row = store.connection.execute(
        "SELECT 1 FROM organiser_sessions WHERE token_hash = ? AND expires_at >= ?",
        (hash_token(token), time.time()),
    ).fetchone()
    return row is not None


def organiser_by_cookie(request: Request, store: CompetitionStore) -> bool:
    """The request carries a live organiser session cookie."""
    token = request.cookies.get(ORGANISER_COOKIE)
    return bool(token) and organiser_session_live(store, str(token))


def organiser_by_bearer(request: Request, store: CompetitionStore) -> bool:
    """The request's ``Authorization: Bearer`` is the organiser token."""
    token = bearer_token(request)
    return token is not None and is_organiser_token(store, token)


def set_organiser_cookie(response: Response, store: CompetitionStore, secure: bool) -> Response:
    response.set_cookie(
        ORGANISER_COOKIE,
        open_organiser_session(store),
        max_age=ORGANISER_SESSION_SECONDS,
        httponly=True,
        # Strict: no other site's link or form ever arrives with the organiser's session.
        samesite="strict",
        secure=secure,
    )
    return response
