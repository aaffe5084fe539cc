"""Who is asking: signed session cookies, CSRF tokens, and API tokens.

* **Browser id** (``nm_bid``): a random value every browser gets on its first
  page.  The CSRF token of every form is ``HMAC(secret, "csrf:" + bid)``, so a
  page of another site, which can neither read this cookie nor our pages,
  cannot forge a form (the signed double-submit pattern).  It also covers
  the sign-in form itself, where no session exists yet.
* **Session** (``nm_session``): ``participant id . expiry . HMAC`` signed with
  the competition's secret (kept in the database, made at creation).
  ``HttpOnly``, ``SameSite=Lax``, and ``Secure`` unless the competition file
  says ``secure_cookies = false`` (browsers treat ``http://localhost`` as
  secure, so ``Secure`` works there too; behind TLS it is required).
* **API token**: ``Authorization: Bearer TOKEN`` (or a ``token`` form field,
  for ``curl -F``).  A request so authenticated carries no cookie of ours,
  so it needs no CSRF token.

Tokens are compared by hash lookup (``CompetitionStore.participant_by_token``),
signatures with ``hmac.compare_digest``.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time

from starlette.requests import Request

from referee.server.store import CompetitionStore, Participant

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


def session_value(secret: bytes, participant: int, now: float | None = None) -> str:
    expiry = int((now or time.time()) + SESSION_SECONDS)
    body = f"{participant}.{expiry}"
    return f"{body}.{_sign(secret, 'session:' + body)}"


def session_participant(secret: bytes, value: str | None) -> int | None:
    """The participant a session cookie names, if its signature holds and it has not expired."""
    if not value:
        return None
    try:
        participant, expiry, signature = value.split(".")
        if not hmac.compare_digest(_sign(secret, f"session:{participant}.{expiry}"), signature):
            return None
        if int(expiry) < time.time():
            return None
        return int(participant)
    except ValueError:
        return None


def browser_id(request: Request) -> str | None:
    value = request.scope.get("state", {}).get("browser_id")
    return value if isinstance(value, str) else None


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return None


def signed_in(request: Request, store: CompetitionStore) -> Participant | None:
    """The participant of the session cookie, if any."""
    participant = session_participant(store.secret, request.cookies.get(SESSION_COOKIE))
    return None if participant is None else store.participant(participant)
