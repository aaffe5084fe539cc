"""Who is asking: signed session cookies, CSRF tokens, and API tokens.

* **Browser id** (``nm_bid``): a random value every browser gets on its first
  page.  The CSRF token of every form is ``HMAC(secret, "csrf:" + bid)``, so a
  page of another site, which can neither read this cookie nor our pages,
  cannot forge a form (the signed double-submit pattern).  It also covers
  the sign-in form itself, where no session exists yet.
* **Session** (``nm_session``): a random value naming a row of the
  database's ``sessions`` table (which keeps only its hash), for 14 days at
  most.  Signing out deletes the row, and so does the organiser's
  ``newmarket serve revoke-sessions NAME`` for all of a participant's sessions: a
  copied cookie dies with it, which a signed cookie could not.  ``HttpOnly``,
  ``SameSite=Lax``, and ``Secure`` unless the competition file says
  ``secure_cookies = false`` (browsers treat ``http://localhost`` as secure,
  so ``Secure`` works there too; behind TLS it is required).
* **API token**: ``Authorization: Bearer TOKEN``.  A request so authenticated
  carries no cookie of ours, so it needs no CSRF token.  It is a header so
  that it is checked before the request's body is read: a request without
  it is refused before the server takes a byte of its upload.

Tokens and sessions are compared by hash lookup
(``CompetitionStore.participant_by_token``, ``session_participant``), CSRF
tokens with ``hmac.compare_digest``.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from starlette.requests import Request
from starlette.types import Scope

from referee.server.competition_db import CompetitionStore, Participant

SESSION_COOKIE = "nm_session"
BROWSER_COOKIE = "nm_bid"
SESSION_SECONDS = 14 * 24 * 3600


def _sign(secret: bytes, text: str) -> str:
    return hmac.new(secret, text.encode(), hashlib.sha256).hexdigest()[:40]


def new_browser_id() -> str:
    return secrets.token_urlsafe(18)


def csrf_token(secret: bytes, browser_id: str) -> str:
    return _sign(secret, "csrf:" + browser_id)


def csrf_ok(secret: bytes, browser_id: str | None, token: object) -> bool:
    if not browser_id or not isinstance(token, str):
        return False
    return hmac.compare_digest(csrf_token(secret, browser_id), token)


def browser_id(request: Request) -> str | None:
    value = request.scope.get("state", {}).get("browser_id")
    return value if isinstance(value, str) else None


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return None


def bearer_participant(request: Request, store: CompetitionStore) -> Participant | None:
    """The participant whose API token the request carries, if any (no token: None)."""
    token = bearer_token(request)
    return None if token is None else store.participant_by_token(token)


def client_address(scope: Scope) -> str:
    """The address the connection came from (the connection's own, never a header a client
    writes): what per-address limits count."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def session_token(request: Request) -> str | None:
    value = request.cookies.get(SESSION_COOKIE)
    return value if value else None


def signed_in(request: Request, store: CompetitionStore) -> Participant | None:
    """The participant of the session cookie, if the session is live."""
    token = session_token(request)
    return None if token is None else store.session_participant(token)
