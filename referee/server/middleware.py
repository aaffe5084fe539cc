"""The ASGI middlewares around the whole app: headers, who may send a body, and how much.

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

``BodyDeadline`` ends a body that comes too slowly (408): it must be whole
within ``body_timeout`` seconds, and each ``body_rate`` bytes received give it
one more (Apache's ``mod_reqtimeout`` ``body=20,MinRate=500``).  A body sent
a byte every few seconds is cut off in ``body_timeout``.

``AnonymousRequests`` caps the requests with a body from nobody signed in
(no live session, no good API token) that are in progress at once: a few per
client address and a few dozen in all (503).  Requests that need a sign-in
check it before reading the body (``referee.server.app``, ``api``), so these
are the sign-in and registration forms, whose body must be read to know who
is asking; with the body's deadline, strangers cannot hold the server's
connections open through them.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from http.cookies import CookieError, SimpleCookie

import trio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from referee.server.auth import BROWSER_COOKIE, client_address, new_browser_id

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


class BodyRefusedError(Exception):
    """A request body the server stops reading: too large (413) or too slow (408).

    The app's exception handler answers it (``referee.server.app``): Starlette's
    error middleware would otherwise answer 500 first.  The middleware that
    raised it answers for an endpoint that lets it escape before responding.
    """

    status = 400


class BodyTooLargeError(BodyRefusedError):
    """Raised by the capped ``receive`` the moment a body passes its cap."""

    status = 413

    def __init__(self, cap: int) -> None:
        super().__init__(too_large(cap))


class BodyTimeoutError(BodyRefusedError):
    """Raised by ``BodyDeadline``'s ``receive`` when a body is not whole in time."""

    status = 408

    def __init__(self, seconds: float) -> None:
        super().__init__(f"request body too slow: not received in {seconds:.0f} s")


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


class BodyDeadline:
    """A request body must be whole within ``seconds`` plus a second per ``rate`` bytes."""

    def __init__(
        self,
        app: ASGIApp,
        seconds: float,
        rate: int,
        clock: Callable[[], float] = trio.current_time,
    ) -> None:
        self.app = app
        self.seconds = seconds
        self.rate = rate
        self.clock = clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        started_at = self.clock()
        received = 0
        answered = False
        late = False

        async def timed_receive() -> Message:
            nonlocal received, late
            deadline = started_at + self.seconds + received / self.rate
            with trio.move_on_after(max(0.0, deadline - self.clock())):
                message = await receive()
                if message["type"] == "http.request":
                    received += len(message.get("body", b""))
                return message
            late = True
            raise BodyTimeoutError(self.clock() - started_at)

        async def watching_send(message: Message) -> None:
            nonlocal answered
            if message["type"] == "http.response.start":
                answered = True
                if late:  # the rest of the body is not waited for: the connection ends
                    headers = [(k, v) for k, v in message.get("headers", []) if k != b"connection"]
                    message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        try:
            await self.app(scope, timed_receive, watching_send)
        except BodyTimeoutError as error:
            if not answered:
                await answer(send, error.status, str(error))


class AnonymousRequests:
    """At most ``per_address`` (and ``overall``) requests with a body from nobody signed in
    in progress at once; ``signed_in(scope)`` says whether a request's headers sign it in."""

    def __init__(
        self,
        app: ASGIApp,
        per_address: int,
        overall: int,
        signed_in: Callable[[Scope], bool],
    ) -> None:
        self.app = app
        self.per_address = per_address
        self.overall = overall
        self.signed_in = signed_in
        self.open: dict[str, int] = {}
        self.total = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        if self.signed_in(scope):
            await self.app(scope, receive, send)
            return
        address = client_address(scope)
        if self.open.get(address, 0) >= self.per_address or self.total >= self.overall:
            # Before a byte of the body: the connection is closed with the answer.
            await answer(
                send,
                503,
                "too many requests in progress from nobody signed in; try again in a moment",
                retry_after=10,
            )
            return
        self.open[address] = self.open.get(address, 0) + 1
        self.total += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.total -= 1
            left = self.open[address] - 1
            if left:
                self.open[address] = left
            else:
                del self.open[address]


def too_large(cap: int) -> str:
    return f"request too large: at most {cap // 1024} KiB may be sent here"


async def _refuse(send: Send, cap: int) -> None:
    await answer(send, 413, too_large(cap))


async def answer(send: Send, status: int, reason: str, retry_after: int | None = None) -> None:
    """A one-line JSON error that closes the connection (the body is not read on)."""
    body = json.dumps({"error": reason}).encode()
    extra = [] if retry_after is None else [(b"retry-after", str(retry_after).encode())]
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                *extra,
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
