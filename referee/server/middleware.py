"""Two ASGI middlewares around the whole app: security headers, and request body limits.

``SecurityHeaders`` gives every response a strict Content-Security-Policy
(scripts, styles and fetches from this origin only; no inline script or
style, no frames, no plugins, forms post only here), ``nosniff``, no
referrer and no framing; and it hands out the browser id cookie
(``referee.server.auth``) on a browser's first request, so a form's CSRF
token can be computed before the page is rendered.

``BodyLimit`` refuses a request body larger than its cap: at once (413) when
the ``Content-Length`` says so, before a byte is read, and otherwise by
counting the bytes as the app reads them and stopping the read the moment
the cap is passed.  A 1 GB upload therefore costs the server the cap, never
the gigabyte: nothing beyond it is read, kept in memory or written.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from http.cookies import CookieError, SimpleCookie

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from referee.server.auth import BROWSER_COOKIE, new_browser_id

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


class SecurityHeaders:
    def __init__(self, app: ASGIApp, *, secure_cookies: bool) -> None:
        self.app = app
        self.secure = secure_cookies

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cookies: SimpleCookie = SimpleCookie()
        for name, value in scope.get("headers", []):
            if name == b"cookie":
                with contextlib.suppress(CookieError):  # a malformed header: no cookies
                    cookies.load(value.decode("latin-1"))
        existing = cookies.get(BROWSER_COOKIE)
        fresh = None if existing is not None and existing.value else new_browser_id()
        scope.setdefault("state", {})["browser_id"] = fresh or (existing.value if existing else "")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [
                    (b"content-security-policy", CSP.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY"),
                ]
                if fresh is not None:
                    flags = "; Path=/; HttpOnly; SameSite=Lax" + ("; Secure" if self.secure else "")
                    headers.append((b"set-cookie", f"{BROWSER_COOKIE}={fresh}{flags}".encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class BodyTooLargeError(Exception):
    """Raised by the capped ``receive`` the moment a body passes its cap.

    A form-reading endpoint catches it and answers 413 itself (Starlette's error
    middleware would otherwise answer 500 first); ``BodyLimit`` answers for
    any other endpoint that lets it escape before responding.
    """

    def __init__(self, cap: int) -> None:
        super().__init__(too_large(cap))


class BodyLimit:
    """Caps request bodies: ``cap_for(path)`` bytes for a request to ``path``."""

    def __init__(self, app: ASGIApp, cap_for: Callable[[str], int]) -> None:
        self.app = app
        self.cap_for = cap_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        cap = self.cap_for(scope["path"])
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared < 0 or declared > cap:
                    await _refuse(send, cap)
                    return
        seen = 0
        started = False
        overflowed = False

        async def counting_receive() -> Message:
            nonlocal seen, overflowed
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > cap:
                    overflowed = True
                    raise BodyTooLargeError(cap)
            return message

        async def watching_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                if overflowed:
                    # Whoever answered the 413, the rest of the body must not be read:
                    # without this the server drains (reads and drops) all of it to keep
                    # the connection alive, a gigabyte if the client sends one.
                    headers = [(k, v) for k, v in message.get("headers", []) if k != b"connection"]
                    message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        try:
            await self.app(scope, counting_receive, watching_send)
        except BodyTooLargeError:
            if not started:
                await _refuse(send, cap)


def too_large(cap: int) -> str:
    return f"request too large: at most {cap // 1024} KiB may be sent here"


async def _refuse(send: Send, cap: int) -> None:
    body = json.dumps({"error": too_large(cap)}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
