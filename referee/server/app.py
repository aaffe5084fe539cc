"""The web pages: a Starlette app whose pages are Jinja2 templates with autoescaping.

Every page is public except what ``referee.server.views`` keeps for a
version's owner.  Every form carries a CSRF token (``referee.server.auth``),
every response the strict CSP of ``referee.server.middleware``, and no
template marks anything safe: a bot's name, a file name, a fault detail or
a stderr line is always text.  The JSON API lives in ``referee.server.api``
and is mounted under ``/api``.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2 import Environment
from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Scope

from referee.report.templating import make_environment
from referee.server import api, contest_pages, organiser_contest, organiser_web, phases
from referee.server.auth import (
    SESSION_COOKIE,
    SESSION_SECONDS,
    bearer_participant,
    browser_id,
    client_address,
    csrf_ok,
    csrf_token,
    session_token,
    signed_in,
)
from referee.server.bad_tokens import BadTokens
from referee.server.board_charts import head_to_head, ratings_svg, refresh_charts
from referee.server.busy import (
    BUSY_REASON,
    DISK_FULL_REASON,
    RETRY_AFTER,
    is_busy,
    is_disk_full,
)
from referee.server.competition import Competition
from referee.server.competition_db import StoreError
from referee.server.competition_file import REMOTE
from referee.server.downloads import download_log, log_response
from referee.server.feed import MEDIA_TYPE as FEED_TYPE
from referee.server.feed import atom_feed
from referee.server.match_builds import first_look
from referee.server.match_faults import match_faults
from referee.server.match_lists import FilterError, match_page, parse_filter
from referee.server.metrics import status_routes
from referee.server.middleware import (
    AnonymousRequests,
    BodyDeadline,
    BodyLimit,
    BodyRefusedError,
    SecurityHeaders,
)
from referee.server.organiser_auth import (
    is_organiser_token,
    organiser_by_bearer,
    organiser_by_cookie,
    set_organiser_cookie,
)
from referee.server.ratelimit import SlidingWindow
from referee.server.uploads import (
    STORAGE_RETRY_AFTER,
    UploadRefusedError,
    accept_upload,
    may_upload,
    register_remote,
)
from referee.server.views import (
    leaderboard,
    match_view,
    participant_view,
    version_json,
)

FORM_CAP = 64 * 1024  # a form without a file
MULTIPART_SLACK = 64 * 1024  # a multipart body's boundaries and fields around the file
# The notices a page may show, by code (``/?notice=signed-out``): a page never prints text
# from its address, or any link could put words in the competition's mouth.
NOTICES = {"signed-out": "You are signed out."}
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf")


def templates() -> Environment:
    """The server's templates, in the report's environment (``make_environment``): the same
    autoescaping, printable text and strict names, and the report's replay viewer."""
    return make_environment("referee.server")


class Pages:
    def __init__(self, competition: Competition) -> None:
        self.competition = competition
        self.env = templates()
        # Self-registration is open to anyone: a few participants per client address an hour.
        self.registrations = SlidingWindow(competition.config.registrations_per_hour, 3600.0)

    # ------------------------------------------------------------ helpers

    def render(
        self, request: Request, template: str, code: int = 200, **context: Any
    ) -> HTMLResponse:
        config = self.competition.config
        bid = browser_id(request) or ""
        base = {
            "competition": config.name,
            "viewer": signed_in(request, self.competition.store),
            "csrf": csrf_token(self.competition.store.secret, bid),
            "self_registration": config.self_registration,
            "message": NOTICES.get(request.query_params.get("notice", "")),
            "organiser": organiser_by_cookie(request, self.competition.store),
            "phase": phases.current(self.competition),  # the banner of every page
        }
        html = self.env.get_template(template).render(**base, **context)
        return HTMLResponse(html, status_code=code)

    def error(
        self, request: Request, status: int, reason: str, headers: Mapping[str, str] = {}
    ) -> HTMLResponse:
        page = self.render(request, "error.html", status, status=status, reason=reason)
        page.headers.update(headers)
        return page

    async def form(self, request: Request) -> dict[str, Any] | HTMLResponse:
        """The posted form, or a 403 page when its CSRF token does not match this browser."""
        try:
            form = await request.form(max_files=1, max_fields=20)
        except BodyRefusedError as error:  # too large, or too slow
            return self.error(request, error.status, str(error))
        if not csrf_ok(self.competition.store.secret, browser_id(request), form.get("csrf")):
            return self.error(
                request, 403, "CSRF token missing or wrong: reload the page and retry"
            )
        return dict(form)

    def sign_in(self, response: Response, participant_id: int) -> Response:
        """``response`` with the session cookie that signs ``participant_id`` in."""
        response.set_cookie(
            SESSION_COOKIE,
            self.competition.store.open_session(participant_id, SESSION_SECONDS),
            max_age=SESSION_SECONDS,
            httponly=True,
            samesite="lax",
            secure=self.competition.config.secure_cookies,
        )
        return response

    # ------------------------------------------------------------ pages

    async def index(self, request: Request) -> Response:
        await refresh_charts(self.competition)
        return self.render(
            request,
            "leaderboard.html",
            board=leaderboard(self.competition),
            ratings=ratings_svg(self.competition),
            head_to_head=head_to_head(self.competition),
        )

    async def ratings_chart(self, request: Request) -> Response:
        await refresh_charts(self.competition)
        chart = ratings_svg(self.competition)
        if chart is None:
            return Response(status_code=204)
        return Response(str(chart), media_type="image/svg+xml")

    async def participants(self, request: Request) -> Response:
        return self.render(
            request, "participants.html", participants=self.competition.store.participants()
        )

    async def participant(self, request: Request) -> Response:
        store = self.competition.store
        who = store.participant_by_name(request.path_params["name"])
        if who is None:
            return self.error(request, 404, "no participant of that name")
        view = participant_view(self.competition, who, signed_in(request, store))
        return self.render(
            request, "participant.html", view=view, chart=history_chart(view["history"])
        )

    async def participant_feed(self, request: Request) -> Response:
        store = self.competition.store
        who = store.participant_by_name(request.path_params["name"])
        if who is None:
            return self.error(request, 404, "no participant of that name")
        base = f"{request.url.scheme}://{request.url.netloc}"
        # A feed reader may send its token; a browser is signed in.
        reader = signed_in(request, store) or bearer_participant(request, store)
        private = reader is not None and reader.id == who.id
        return Response(atom_feed(self.competition, who, base, private), media_type=FEED_TYPE)

    async def participant_matches(self, request: Request) -> Response:
        store = self.competition.store
        who = store.participant_by_name(request.path_params["name"])
        if who is None:
            return self.error(request, 404, "no participant of that name")
        try:
            wanted = parse_filter(self.competition, who, request.query_params)
        except FilterError as error:
            return self.error(request, 400, str(error))
        page = match_page(self.competition, who, wanted)
        return self.render(
            request, "participant_matches.html", page=page, versions=store.versions(who.id)
        )

    async def version(self, request: Request) -> Response:
        store = self.competition.store
        version = store.version(request.path_params["version"])
        if version is None:
            return self.error(request, 404, "no such version")
        viewer = signed_in(request, store)
        owner = viewer is not None and viewer.id == version.participant
        return self.render(
            request, "version.html", version=version_json(self.competition, version, owner)
        )

    async def match(self, request: Request) -> Response:
        viewer = signed_in(request, self.competition.store)
        address = client_address(request.scope)
        match_id = request.path_params["match_id"]
        refused = await first_look(self.competition, match_id, viewer, address)
        if refused is not None:  # its first look is counted (match_builds)
            return self.error(request, refused.status, refused.text, refused.headers())
        view = match_view(self.competition, request.path_params["match_id"], viewer, public=False)
        if view is None:
            return self.error(request, 404, "no such match")
        # The replay's JSON was made (and cached) by script_json: report/replay.html prints it.
        faults = match_faults(self.competition, view["match_id"])
        return self.render(
            request, "match.html", view=view, replay=view.get("replay_json"), faults=faults
        )

    async def match_log(self, request: Request) -> Response:
        viewer = signed_in(request, self.competition.store)
        address = client_address(request.scope)
        match_id = request.path_params["match_id"]
        organiser = organiser_by_cookie(request, self.competition.store)  # finals, unpublished
        download = await download_log(
            self.competition, match_id, viewer, address, organiser=organiser
        )
        if download.status != 200:
            return self.error(request, download.status, download.text, download.headers())
        return log_response(download)

    async def signin_page(self, request: Request) -> Response:
        return self.render(request, "signin.html")

    async def signin(self, request: Request) -> Response:
        form = await self.form(request)
        if isinstance(form, HTMLResponse):
            return form
        token = form.get("token")
        store = self.competition.store
        if isinstance(token, str) and is_organiser_token(store, token):
            target = RedirectResponse("/organiser", status_code=303)
            return set_organiser_cookie(target, store, self.competition.config.secure_cookies)
        participant = (
            self.competition.store.participant_by_token(token) if isinstance(token, str) else None
        )
        if participant is None:
            return self.error(request, 403, "unknown token: check it and sign in again")
        target = RedirectResponse(f"/p/{quote(participant.name)}", status_code=303)
        return self.sign_in(target, participant.id)

    async def signout(self, request: Request) -> Response:
        response = RedirectResponse("/?notice=signed-out", status_code=303)
        token = session_token(request)
        if token is None or signed_in(request, self.competition.store) is None:
            response.delete_cookie(SESSION_COOKIE)  # nothing to end: the body is not read
            return response
        form = await self.form(request)
        if isinstance(form, HTMLResponse):
            return form
        self.competition.store.end_session(token)  # the cookie is dead wherever it is copied
        response.delete_cookie(SESSION_COOKIE)
        return response

    async def register_page(self, request: Request) -> Response:
        if not self.competition.config.self_registration:
            return self.error(request, 403, "this competition does not allow registration")
        return self.render(request, "register.html")

    async def register(self, request: Request) -> Response:
        if not self.competition.config.self_registration:
            return self.error(request, 403, "this competition does not allow registration")
        form = await self.form(request)
        if isinstance(form, HTMLResponse):
            return form
        address = client_address(request.scope)
        wait = self.registrations.wait(address)
        if wait:
            limit = self.registrations.limit
            return self.error(
                request,
                429,
                f"too many registrations from {address} ({limit} an hour); "
                f"try again in {SlidingWindow.minutes(wait)} min",
            )
        try:
            participant, token = self.competition.store.add_participant(str(form.get("name", "")))
        except StoreError as error:
            return self.error(request, 400, str(error))
        self.registrations.record(address)
        page = self.render(request, "token.html", name=participant.name, token=token)
        return self.sign_in(page, participant.id)

    async def upload_page(self, request: Request) -> Response:
        if signed_in(request, self.competition.store) is None:
            return RedirectResponse("/signin", status_code=303)
        limits = self.competition.config.uploads
        return self.render(
            request,
            "upload.html",
            runtimes=self.competition.config.runtimes,
            max_kb=limits.max_bytes // 1024,
            max_files=limits.max_files,
        )

    async def upload(self, request: Request) -> Response:
        viewer = signed_in(request, self.competition.store)
        if viewer is None:
            return self.error(request, 403, "sign in to upload")
        try:
            may_upload(self.competition, viewer)  # from the headers: the body is not read
        except UploadRefusedError as error:
            return self.error(request, error.status, error.reason, error.headers)
        form = await self.form(request)
        if isinstance(form, HTMLResponse):
            return form
        bot = form.get("bot")
        runtime = str(form.get("runtime", ""))
        try:
            if runtime == REMOTE and bot is None:
                version = register_remote(self.competition, viewer)
            elif not isinstance(bot, UploadFile):
                return self.error(request, 400, "no file: choose the bot's file or archive")
            else:
                version = await accept_upload(self.competition, viewer, bot, runtime)
        except UploadRefusedError as error:
            return self.error(request, error.status, error.reason, error.headers)
        return RedirectResponse(f"/versions/{version.id}", status_code=303)

    async def api_page(self, request: Request) -> Response:
        base = f"{request.url.scheme}://{request.url.netloc}"
        return self.render(request, "api.html", spec=api.openapi(self.competition), base=base)


def history_chart(history: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The results-over-time chart's coordinates (drawn by ``chart.html``, no script)."""
    values: list[float] = [float(p["mean"]) for s in history for p in s["points"]]
    if not values:
        return None
    width, height, left, right, top, bottom = 760, 260, 48, 640, 12, 236
    low, high = min(min(values), 0.0), max(max(values), 0.0)
    if high == low:
        high = low + 1
    longest = max(len(s["points"]) for s in history)

    def x(index: int) -> float:
        return left + (right - left) * (index / max(1, longest - 1))

    def y(value: float) -> float:
        return bottom - (bottom - top) * (value - low) / (high - low)

    series = []
    for number, line in enumerate(history):
        points = [(x(i), y(p["mean"])) for i, p in enumerate(line["points"])]
        series.append(
            {
                "label": line["version"],
                "colour": PALETTE[number % len(PALETTE)],
                "points": " ".join(f"{px:.1f},{py:.1f}" for px, py in points),
                "x": points[-1][0],
                "y": points[-1][1],
            }
        )
    return {
        "width": width,
        "height": height,
        "left": left,
        "right": right,
        "top": top,
        "bottom": bottom,
        "zero": y(0.0),
        "low": round(low, 1),
        "high": round(high, 1),
        "series": series,
    }


def build_app(competition: Competition) -> ASGIApp:
    pages = Pages(competition)
    errors = _ErrorAnswers(competition, pages)
    app = Starlette(
        routes=_routes(competition, pages),
        exception_handlers={
            sqlite3.OperationalError: errors.database_busy,
            sqlite3.DatabaseError: errors.database_damaged,
            StoreError: errors.database_damaged,
            BodyRefusedError: errors.body_refused,
        },
    )
    return _guarded(app, competition)


def _routes(competition: Competition, pages: Pages) -> list[BaseRoute]:
    report_static = Path(str(resources.files("referee.report") / "static"))
    server_static = Path(str(resources.files("referee.server") / "static"))
    return [
        Route("/", pages.index),
        Route("/leaderboard/ratings.svg", pages.ratings_chart),
        Route("/participants", pages.participants),
        Route("/p/{name}", pages.participant),
        Route("/p/{name}/matches", pages.participant_matches),
        Route("/p/{name}/feed.atom", pages.participant_feed),
        Route("/versions/{version:int}", pages.version),
        Route("/matches/{match_id}", pages.match),
        Route("/matches/{match_id}/log", pages.match_log),
        Route("/signin", pages.signin_page, methods=["GET"]),
        Route("/signin", pages.signin, methods=["POST"]),
        Route("/signout", pages.signout, methods=["POST"]),
        Route("/register", pages.register_page, methods=["GET"]),
        Route("/register", pages.register, methods=["POST"]),
        Route("/upload", pages.upload_page, methods=["GET"]),
        Route("/upload", pages.upload, methods=["POST"]),
        Route("/api", pages.api_page),
        *organiser_web.page_routes(competition, pages),
        *status_routes(competition, pages.render),
        *contest_pages.routes(competition, pages),  # phases, finals, challenges
        *organiser_contest.routes(competition),  # the organiser's contest data (token)
        Mount("/api", routes=[*organiser_web.api_routes(competition), *api.routes(competition)]),
        Mount("/static", StaticFiles(directory=server_static)),
        Mount("/report", StaticFiles(directory=report_static)),
    ]


class _ErrorAnswers:
    """What a request gets when the server, not the client, is in trouble: a page or JSON."""

    def __init__(self, competition: Competition, pages: Pages) -> None:
        self.competition = competition
        self.pages = pages

    async def database_busy(self, request: Request, error: Exception) -> Response:
        """A request that met a locked database (503) or a full disk (507): the server's
        trouble, for the client to send again (``referee.server.busy``)."""
        if is_busy(error):
            status, reason, wait = 503, BUSY_REASON, RETRY_AFTER
        elif is_disk_full(error):
            status, reason, wait = 507, DISK_FULL_REASON, STORAGE_RETRY_AFTER
        else:
            return await self.database_damaged(request, error)
        headers = {"Retry-After": str(wait)}
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": reason}, status_code=status, headers=headers)
        return self.pages.error(request, status, reason, headers)

    async def database_damaged(self, request: Request, error: Exception) -> Response:
        """A row or page of the database that cannot be read: one line for the organiser
        (with the file's path), a 500 without it for the client."""
        line = " ".join(str(error).split())
        if not isinstance(error, StoreError):
            line = f"{self.competition.config.database}: {type(error).__name__}: {line}"
        print(f"newmarket serve: {request.url.path}: {line}", file=sys.stderr, flush=True)
        reason = "the server could not read its database; the organiser is told"
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": reason}, status_code=500)
        return self.pages.error(request, 500, reason)

    async def body_refused(self, request: Request, error: Exception) -> Response:
        """A body too large or too slow, wherever it is read: its status, never a 500."""
        assert isinstance(error, BodyRefusedError)
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": str(error)}, status_code=error.status)
        return self.pages.error(request, error.status, str(error))


def _guarded(app: ASGIApp, competition: Competition) -> ASGIApp:
    """The app behind the body limits, the strangers' quota and the security headers."""
    config = competition.config
    upload_cap = config.uploads.max_bytes + MULTIPART_SLACK

    def cap_for(path: str) -> int:
        return upload_cap if path in ("/upload", "/api/versions") else FORM_CAP

    def signed_in_by_headers(scope: Scope) -> bool:
        """A live session or a good API token in the request's headers.  Outside Starlette's
        handlers: a database that cannot answer now counts the request as a stranger's."""
        request = Request(scope)
        store = competition.store
        try:
            if bearer_participant(request, store) is not None:
                return True
            if organiser_by_bearer(request, store) or organiser_by_cookie(request, store):
                return True
            return signed_in(request, store) is not None
        except (sqlite3.Error, StoreError):
            return False

    limited = BodyLimit(app, cap_for)
    timed = BodyDeadline(limited, config.clients.body_timeout, config.clients.body_rate)
    gated = AnonymousRequests(
        BadTokens(timed, competition.store),
        config.clients.anonymous_per_address,
        config.clients.anonymous,
        signed_in_by_headers,
    )
    return SecurityHeaders(gated, secure_cookies=config.secure_cookies)
