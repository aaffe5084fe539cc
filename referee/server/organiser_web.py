"""The organiser's page (``/organiser``) and API (``/api/organiser/...``).

**Who may see them.**  The page needs an organiser session (the organiser
token typed into ``/signin``, ``referee.server.organiser_auth``), the API
``Authorization: Bearer ORGANISER_TOKEN``.  Everybody else, a participant
signed in or with a good token included, gets ``404 Not Found``, the very
answer an unknown address gets, decided from the headers before any body is
read: the page is not there for them, and a 403 would tell a participant
that the address is worth attacking.

**Forms** carry the CSRF token of every form of the server (the signed
double-submit of ``referee.server.auth``), and the organiser's cookie is
``SameSite=Strict``: another site can neither read the token nor send the
cookie.  The API takes no cookie, so it needs none.

**The page is made of sections** (``SECTIONS``), each a template of its own
(``templates/organiser_*.html``) and a function that gives it its data: a new
section is a template and one ``Section(...)`` line (a template reads its
data as ``section.data``).  Every action the page
and the API offer is one of ``referee.server.organiser.WEB_ACTIONS``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from referee.server import organiser
from referee.server.competition import Competition
from referee.server.competition_db import MAX_ROW_ID
from referee.server.middleware import BodyRefusedError
from referee.server.operations_view import api_operations, operations_data
from referee.server.organiser_auth import (
    ORGANISER_COOKIE,
    end_organiser_session,
    organiser_by_bearer,
    organiser_by_cookie,
)

RECENT_FAILED_GROUPS = 20  # groups with a failure the re-run section lists...
GROUPS_LOOKED_AT = 1000  # ...among the latest groups (older ones: re-run by number or window)


class PageKit(Protocol):
    """What the organiser's page needs of the server's pages (``referee.server.app.Pages``)."""

    def render(
        self, request: Request, template: str, code: int = 200, **context: Any
    ) -> HTMLResponse: ...

    async def form(self, request: Request) -> dict[str, Any] | HTMLResponse: ...


def not_found() -> Response:
    """What an unknown address answers (Starlette's own 404): the organiser's, to the others."""
    return PlainTextResponse("Not Found", status_code=404)


# ---------------------------------------------------------------------- the page's sections


@dataclasses.dataclass(frozen=True)
class Section:
    """One part of the organiser's page: its template, and its data from the competition."""

    template: str  # under referee/server/templates/
    data: Callable[[Competition], dict[str, Any]]


def participants_data(competition: Competition) -> dict[str, Any]:
    store = competition.store
    house = store.house_participants()
    people = []
    for who in store.participants():
        people.append(
            {
                "name": who.name,
                "house": who.id in house,
                "standing": organiser.standing(store, who.id),
                "versions": [
                    {"id": v.id, "label": v.label, "status": v.status, "detail": v.detail}
                    for v in store.versions(who.id)
                ],
            }
        )
    return {"participants": people, "results": organiser.RESULTS}


def reruns_data(competition: Competition) -> dict[str, Any]:
    db = competition.store.connection
    # Of the latest groups only: the page costs the same after a million matches.
    failed = db.execute(
        "WITH recent AS (SELECT id, versions, abandoned FROM groups "
        "WHERE id NOT IN (SELECT group_id FROM reruns) ORDER BY id DESC LIMIT ?) "
        "SELECT g.id, g.versions, g.abandoned, "
        "SUM(CASE WHEN s.faults > 0 THEN 1 ELSE 0 END) FROM recent g "
        "LEFT JOIN matches m ON m.group_id = g.id LEFT JOIN seats s USING (match_id) "
        "GROUP BY g.id HAVING g.abandoned = 1 OR SUM(CASE WHEN s.faults > 0 THEN 1 ELSE 0 END) > 0 "
        "ORDER BY g.id DESC LIMIT ?",
        (GROUPS_LOOKED_AT, RECENT_FAILED_GROUPS),
    ).fetchall()
    done = db.execute(
        "SELECT group_id, replacement, at FROM reruns ORDER BY at DESC LIMIT ?",
        (RECENT_FAILED_GROUPS,),
    ).fetchall()
    return {
        "failed": [
            {
                "group": int(gid),
                "versions": json.loads(versions),
                "abandoned": bool(abandoned),
                "faulty_seats": int(faulty or 0),
            }
            for gid, versions, abandoned, faulty in failed
        ],
        "reruns": [{"group": int(g), "replacement": int(r)} for g, r, _at in done],
        "looked_at": GROUPS_LOOKED_AT,
    }


def audit_data(competition: Competition) -> dict[str, Any]:
    return {"entries": organiser.audit_log(competition.store)}


def contest_data(competition: Competition) -> dict[str, Any]:
    """The contest's dates, linked accounts and collusion pairs (reads the ladder's logs)."""
    from referee.server.organiser_contest import contest_json

    return {"contest": contest_json(competition.config, competition.store, competition.clock())}


SECTIONS: list[Section] = [
    Section("organiser_participants.html", participants_data),
    Section("organiser_reruns.html", reruns_data),
    Section("organiser_contest.html", contest_data),
    Section("organiser_audit.html", audit_data),
    Section("organiser_operations.html", operations_data),
]


# ---------------------------------------------------------------------- the page


class OrganiserPages:
    def __init__(self, competition: Competition, pages: PageKit) -> None:
        self.competition = competition
        self.pages = pages

    def _allowed(self, request: Request) -> bool:
        return organiser_by_cookie(request, self.competition.store)

    def _page(
        self,
        request: Request,
        code: int = 200,
        done: organiser.Done | None = None,
        failed: str | None = None,
    ) -> HTMLResponse:
        sections = [
            {"template": section.template, "data": section.data(self.competition)}
            for section in SECTIONS
        ]
        return self.pages.render(
            request, "organiser.html", code, sections=sections, done=done, failed=failed
        )

    async def page(self, request: Request) -> Response:
        if not self._allowed(request):
            return not_found()
        return self._page(request)

    async def act(self, request: Request) -> Response:
        if not self._allowed(request):  # before the body is read
            return not_found()
        if request.method != "POST":
            return PlainTextResponse("Method Not Allowed", status_code=405)
        chosen = organiser.WEB_ACTIONS.get(request.path_params["action"])
        if chosen is None:
            return not_found()
        form = await self.pages.form(request)  # a 403 page for a missing or wrong CSRF token
        if isinstance(form, HTMLResponse):
            return form
        fields = {name: str(form.get(name, "")) for name in chosen.fields}
        try:
            done = chosen.run(
                self.competition.store, organiser.PAGE, self.competition.config.seed, fields
            )
        except organiser.OrganiserError as error:
            return self._page(request, 400, failed=str(error))
        self.competition.notify()
        return self._page(request, done=done)

    async def signout(self, request: Request) -> Response:
        if not self._allowed(request):
            return not_found()
        form = await self.pages.form(request)
        if isinstance(form, HTMLResponse):
            return form
        token = request.cookies.get(ORGANISER_COOKIE)
        if token:
            end_organiser_session(self.competition.store, token)
        response = PlainTextResponse("", status_code=303, headers={"Location": "/"})
        response.delete_cookie(ORGANISER_COOKIE)
        return response


def page_routes(competition: Competition, pages: PageKit) -> list[BaseRoute]:
    organiser_pages = OrganiserPages(competition, pages)
    return [
        Route("/organiser", organiser_pages.page, methods=["GET", "POST"]),
        Route("/organiser/signout", organiser_pages.signout, methods=["GET", "POST"]),
        Route("/organiser/{action}", organiser_pages.act, methods=["GET", "POST"]),
    ]


# ---------------------------------------------------------------------- the API


def _error(status: int, reason: str) -> JSONResponse:
    return JSONResponse({"error": reason}, status_code=status)


class OrganiserApi:
    def __init__(self, competition: Competition) -> None:
        self.competition = competition

    def _allowed(self, request: Request) -> bool:
        return organiser_by_bearer(request, self.competition.store)

    async def participants(self, request: Request) -> Response:
        if not self._allowed(request):
            return not_found()
        return JSONResponse(participants_data(self.competition))

    async def audit(self, request: Request) -> Response:
        if not self._allowed(request):
            return not_found()
        try:
            # Within SQLite's integers: beyond them, sqlite3 raised OverflowError (a 500).
            before = max(min(int(request.query_params.get("before", "0")), MAX_ROW_ID), 0) or None
            limit = min(max(int(request.query_params.get("limit", "100")), 1), 1000)
        except ValueError:
            return _error(400, "before and limit are whole numbers")
        entries = organiser.audit_log(self.competition.store, limit, before)
        return JSONResponse({"entries": entries})

    async def operations(self, request: Request) -> Response:
        if not self._allowed(request):
            return not_found()
        return await api_operations(self.competition, request)

    async def act(self, request: Request) -> Response:
        if not self._allowed(request):  # before the body is read
            return not_found()
        if request.method != "POST":
            return _error(405, "POST the action's fields as a JSON object")
        chosen = organiser.WEB_ACTIONS.get(request.path_params["action"])
        if chosen is None:
            return _error(404, f"no action {request.path_params['action'][:40]!r}")
        try:
            body = await request.body()
            sent = json.loads(body) if body.strip() else {}
        except BodyRefusedError as error:
            return _error(error.status, str(error))
        except (ValueError, RecursionError):  # RecursionError: JSON nested too deep
            return _error(400, "the body is not JSON: send the action's fields as an object")
        if not isinstance(sent, dict):
            return _error(400, "send the action's fields as a JSON object")
        missing = [name for name in chosen.fields if not isinstance(sent.get(name), str)]
        if missing:
            return _error(400, f"missing field(s), as strings: {', '.join(missing)}")
        fields = {name: str(sent[name]) for name in chosen.fields}
        try:
            done = chosen.run(
                self.competition.store, organiser.API, self.competition.config.seed, fields
            )
        except organiser.OrganiserError as error:
            return _error(400, str(error))
        self.competition.notify()
        answer: dict[str, Any] = {"done": done.said}
        if done.token is not None:
            answer["token"] = done.token
        return JSONResponse(answer)


def api_routes(competition: Competition) -> list[BaseRoute]:
    """Mounted under ``/api``: every address under ``/organiser`` answers others 404."""
    api = OrganiserApi(competition)
    return [
        Route("/organiser/participants", api.participants, methods=["GET", "POST"]),
        Route("/organiser/audit", api.audit, methods=["GET", "POST"]),
        Route("/organiser/operations", api.operations, methods=["GET"]),
        Route("/organiser/{action}", api.act, methods=["GET", "POST"]),
    ]
