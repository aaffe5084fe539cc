"""The JSON API (``/api/...``): the pages' data for scripts, and submitting from a script.

Reads are public, as the pages are; a version's transcript and a match's
stderr and transcripts are included only for their owner, who authenticates
with ``Authorization: Bearer TOKEN`` (a header, checked before an upload's
body is read).  Errors are ``{"error": "one line"}`` with the
HTTP status that fits (400, 401, 404, 413, 429).  ``openapi`` describes it
all as OpenAPI 3.1, served at ``/api/openapi.json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from referee.server.auth import bearer_participant, client_address, signed_in
from referee.server.board_charts import head_to_head, refresh_charts
from referee.server.competition import Competition
from referee.server.competition_db import Participant
from referee.server.competition_file import REMOTE
from referee.server.downloads import download_log, log_response
from referee.server.match_builds import first_look
from referee.server.match_faults import match_faults
from referee.server.match_lists import FilterError, match_page, parse_filter
from referee.server.middleware import BodyRefusedError
from referee.server.organiser_auth import organiser_by_bearer
from referee.server.uploads import (
    UploadRefusedError,
    accept_upload,
    may_upload,
    register_remote,
)
from referee.server.views import leaderboard, match_view, participant_view, version_json


def _error(status: int, reason: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": reason}, status_code=status, headers=headers)


def _caller(competition: Competition, request: Request) -> Participant | None:
    return bearer_participant(request, competition.store)


def routes(competition: Competition) -> list[BaseRoute]:
    api = _Api(competition)
    return [
        Route("/leaderboard", api.get_leaderboard, methods=["GET"]),
        Route("/leaderboard/head-to-head", api.get_head_to_head, methods=["GET"]),
        Route("/participants", api.get_participants, methods=["GET"]),
        Route("/participants/{name}", api.get_participant, methods=["GET"]),
        Route("/participants/{name}/matches", api.get_participant_matches, methods=["GET"]),
        Route("/me", api.get_me, methods=["GET"]),
        Route("/versions", api.post_version, methods=["POST"]),
        Route("/versions/{version:int}", api.get_version, methods=["GET"]),
        Route("/matches/{match_id}", api.get_match, methods=["GET"]),
        Route("/matches/{match_id}/log", api.get_match_log, methods=["GET"]),
        Route("/openapi.json", api.get_openapi, methods=["GET"]),
    ]


class _Api:
    """The endpoints of one competition, each a request in and a JSON response out."""

    def __init__(self, competition: Competition) -> None:
        self.competition = competition
        self.store = competition.store

    async def get_leaderboard(self, request: Request) -> JSONResponse:
        return JSONResponse(leaderboard(self.competition))

    async def get_head_to_head(self, request: Request) -> JSONResponse:
        await refresh_charts(self.competition)
        return JSONResponse(head_to_head(self.competition))

    async def get_participants(self, request: Request) -> JSONResponse:
        return JSONResponse({"participants": [p.name for p in self.store.participants()]})

    async def get_participant(self, request: Request) -> JSONResponse:
        who = self.store.participant_by_name(request.path_params["name"])
        if who is None:
            return _error(404, "no participant of that name")
        caller = _caller(self.competition, request)
        return JSONResponse(participant_view(self.competition, who, caller))

    async def get_participant_matches(self, request: Request) -> JSONResponse:
        who = self.store.participant_by_name(request.path_params["name"])
        if who is None:
            return _error(404, "no participant of that name")
        try:
            wanted = parse_filter(self.competition, who, request.query_params)
        except FilterError as error:
            return _error(400, str(error))
        return JSONResponse(match_page(self.competition, who, wanted))

    async def get_me(self, request: Request) -> JSONResponse:
        caller = _caller(self.competition, request)
        if caller is None:
            return _error(401, "send Authorization: Bearer TOKEN")
        return JSONResponse(participant_view(self.competition, caller, caller))

    async def get_version(self, request: Request) -> JSONResponse:
        version = self.store.version(request.path_params["version"])
        if version is None:
            return _error(404, "no such version")
        caller = _caller(self.competition, request)
        owner = caller is not None and caller.id == version.participant
        return JSONResponse(version_json(self.competition, version, owner))

    async def post_version(self, request: Request) -> JSONResponse:
        # Who is asking, from the headers alone: a request without a good token is refused
        # before one byte of its body is read (a stranger's upload costs the server nothing).
        caller = _caller(self.competition, request)
        if caller is None:
            if signed_in(request, self.store) is not None:
                return _error(401, "the API takes a token, not the browser's session")
            return _error(401, "send Authorization: Bearer TOKEN")
        try:
            may_upload(self.competition, caller)
        except UploadRefusedError as error:
            return _error(error.status, error.reason, error.headers)
        try:
            form = await request.form(max_files=1, max_fields=10)
        except BodyRefusedError as error:  # too large, or too slow
            return _error(error.status, str(error))
        bot = form.get("bot")
        runtime = str(form.get("runtime", "") or "")
        try:
            if runtime == REMOTE and bot is None:
                version = register_remote(self.competition, caller)
            elif not isinstance(bot, UploadFile):
                return _error(
                    400, "no file: send the bot as the form field 'bot' (curl -F bot=@FILE)"
                )
            else:
                version = await accept_upload(self.competition, caller, bot, runtime)
        except UploadRefusedError as error:
            return _error(error.status, error.reason, error.headers)
        return JSONResponse(version_json(self.competition, version, True), status_code=201)

    async def get_match(self, request: Request) -> JSONResponse:
        caller = _caller(self.competition, request)
        address = client_address(request.scope)
        refused = await first_look(
            self.competition, request.path_params["match_id"], caller, address
        )
        if refused is not None:  # its first look is counted (match_builds)
            return _error(refused.status, refused.text, refused.headers())
        view = match_view(self.competition, request.path_params["match_id"], caller)
        if view is None:
            return _error(404, "no such match")
        view["fault_evidence"] = match_faults(self.competition, view["match_id"])
        return JSONResponse(view)

    async def get_match_log(self, request: Request) -> Response:
        caller = _caller(self.competition, request)
        address = client_address(request.scope)
        match_id = request.path_params["match_id"]
        organiser = organiser_by_bearer(request, self.competition.store)  # finals, unpublished
        download = await download_log(
            self.competition, match_id, caller, address, organiser=organiser
        )
        if download.status != 200:
            return _error(download.status, download.text, download.headers())
        return log_response(download)

    async def get_openapi(self, request: Request) -> JSONResponse:
        return JSONResponse(openapi(self.competition))


def _op(
    summary: str, *, auth: bool = False, params: tuple[str, ...] = (), **extra: Any
) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "summary": summary,
        "responses": {
            "200": {"description": "OK", "content": {"application/json": {}}},
            "404": {"$ref": "#/components/responses/Error"},
        },
    }
    if params:
        operation["parameters"] = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in params
        ]
    if auth:
        operation["security"] = [{"token": []}]
        operation["responses"]["401"] = {"$ref": "#/components/responses/Error"}
    operation.update(extra)
    return operation


def openapi(competition: Competition) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": f"newmarket competition server: {competition.config.name}",
            "version": "1",
            "description": "Leaderboard, participants, versions and matches; upload with a token.",
        },
        "paths": {
            "/api/leaderboard": {"get": _op("The live leaderboard with score and rank intervals")},
            "/api/leaderboard/head-to-head": {
                "get": _op(
                    "The top versions' head to head: the share of common matches (finished "
                    "groups) the row version finished ahead of the column one"
                )
            },
            "/api/participants": {"get": _op("Every participant's name")},
            "/api/participants/{name}": {
                "get": _op(
                    "A participant's versions, matches, faults and results over time",
                    params=("name",),
                )
            },
            "/api/participants/{name}/matches": {
                "get": _op(
                    "A participant's matches, newest first, a page at a time: query parameters "
                    "version, opponent, faults=only, since, until (ISO dates or times, UTC), "
                    "limit (1-200), cursor (the answer's next page); a bad one is a 400",
                    params=("name",),
                )
            },
            "/api/me": {
                "get": _op("The token's own participant page, with owner-only data", auth=True)
            },
            "/api/versions": {"post": _upload_op(competition)},
            "/api/versions/{version}": {
                "get": _op("One version; its check transcript for its owner", params=("version",))
            },
            "/api/matches/{match_id}": {
                "get": _op(
                    "One match: result, replay frames; stderr and transcripts for owners",
                    params=("match_id",),
                )
            },
            "/api/matches/{match_id}/log": {
                "get": _op(
                    "One match's log (JSON lines) for newmarket replay and view, once its group "
                    "has finished (403 before); its stderr only for the seat's owner; at most "
                    f"{competition.config.clients.downloads_per_minute} a minute (429 past it). "
                    "A challenge's match: to its players only; a finals match: once the final "
                    "ranking is published",
                    params=("match_id",),
                )
            },
            "/api/openapi.json": {"get": _op("This description")},
        },
        "components": {
            "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
            "responses": {
                "Error": {
                    "description": "a one-line reason",
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {"error": {"type": "string"}},
                            }
                        }
                    },
                }
            },
        },
    }


def _upload_op(competition: Competition) -> dict[str, Any]:
    """``POST /api/versions``: its form, its limits, and every refusal it can answer with."""
    limits = competition.config.uploads
    upload = _op(
        f"Upload a new version (one file or a zip / tar.gz, at most {limits.max_bytes // 1024} "
        f"KiB, {limits.per_hour} per hour)",
        auth=True,
        requestBody={
            "required": True,
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "required": ["runtime"],
                        "description": "bot is required except for runtime remote, which "
                        "registers a remote bot: the answer carries its token (owner only)",
                        "properties": {
                            "bot": {"type": "string", "format": "binary"},
                            "runtime": {
                                "type": "string",
                                "enum": list(competition.config.runtimes),
                            },
                        },
                    }
                }
            },
        },
    )
    upload["responses"] = {
        "201": {"description": "the new version, pending its check"},
        **{code: {"$ref": "#/components/responses/Error"} for code in ("400", "401", "413", "429")},
        # The server's own trouble, with Retry-After: its database busy, its disk full.
        **{code: {"$ref": "#/components/responses/Error"} for code in ("503", "507")},
    }
    return upload
