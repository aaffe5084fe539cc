"""The contest's pages and API: the phase, the finals' ranking, challenges.

    /finals                      the final ranking (public once published)
    /challenge                   GET: the form; POST: ask for a challenge (signed in)
    /challenges/{id}             a challenge's table and results (requester, opponents)
    /api/phase                   the phase now, the dates and the countdown
    /api/finals                  the final ranking as JSON, with its matches' logs (404 until
                                 published)
    /api/challenges              POST {"opponents": [names]}: ask; GET: mine (Bearer token)
    /api/challenges/{id}         one challenge (the requester's or an opponent's token)

A challenge's pages are not public: a participant who is neither its requester
nor (``[challenges] opponents_see``) one of its opponents gets a 404, as for a
challenge that does not exist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from referee.server import phases
from referee.server.auth import bearer_participant, signed_in
from referee.server.challenges import (
    ChallengeRefusedError,
    challenge_json,
    challenges_of,
    opponents_offered,
    request_challenge,
    visible_to,
)
from referee.server.competition import Competition
from referee.server.competition_db import Participant
from referee.server.contest_db import challenge, contest_match_ids, finals_record

if TYPE_CHECKING:
    from referee.server.app import Pages


def _phase_json(competition: Competition) -> dict[str, Any]:
    given = phases.dates(competition)
    return {
        **phases.current(competition).as_json(),
        "dates": {
            name: None if getattr(given, name) is None else getattr(given, name).isoformat()
            for name in ("opens", "freeze", "finals", "ends")
        },
    }


class ContestPages:
    def __init__(self, competition: Competition, pages: Pages) -> None:
        self.competition = competition
        self.pages = pages

    def _caller(self, request: Request) -> Participant | None:
        return bearer_participant(request, self.competition.store)

    # ------------------------------------------------------------ pages

    async def finals_page(self, request: Request) -> Response:
        finals = finals_record(self.competition.store)
        ranking = None if finals is None else finals.ranking
        return self.pages.render(
            request,
            "finals.html",
            finals=finals,
            ranking=ranking,
            matches=[] if finals is None or ranking is None else _finals_matches(self, finals.id),
        )

    async def challenge_page(self, request: Request) -> Response:
        viewer = signed_in(request, self.competition.store)
        if viewer is None:
            return RedirectResponse("/signin", status_code=303)
        return self.pages.render(
            request,
            "challenge.html",
            offered=opponents_offered(self.competition, viewer),
            mine=challenges_of(self.competition, viewer),
            closed=phases.challenge_refusal(self.competition),
            per_hour=self.competition.config.contest.challenges.per_hour,
        )

    async def challenge_post(self, request: Request) -> Response:
        viewer = signed_in(request, self.competition.store)
        if viewer is None:
            return self.pages.error(request, 403, "sign in to challenge")
        form = await self.pages.form(request)
        if not isinstance(form, dict):
            return form
        names = [str(form.get(f"opponent{i}", "")) for i in (1, 2, 3)]
        try:
            made = request_challenge(self.competition, viewer, names)
        except ChallengeRefusedError as error:
            return self.pages.error(request, error.status, error.reason)
        return RedirectResponse(f"/challenges/{made.id}", status_code=303)

    async def challenge_view(self, request: Request) -> Response:
        viewer = signed_in(request, self.competition.store)
        found = challenge(self.competition.store, request.path_params["challenge"])
        if found is None or not visible_to(self.competition, found, viewer):
            return self.pages.error(request, 404, "no such challenge (or not yours to see)")
        return self.pages.render(
            request, "challenge_view.html", view=challenge_json(self.competition, found)
        )

    # ------------------------------------------------------------ API

    async def api_phase(self, request: Request) -> Response:
        return JSONResponse(_phase_json(self.competition))

    async def api_finals(self, request: Request) -> Response:
        finals = finals_record(self.competition.store)
        if finals is None or finals.ranking is None:
            return JSONResponse({"error": "the finals have no ranking yet"}, status_code=404)
        return JSONResponse({**finals.ranking, "logs": _finals_matches(self, finals.id)})

    async def api_challenges(self, request: Request) -> Response:
        caller = self._caller(request)
        if caller is None:
            return JSONResponse({"error": "send Authorization: Bearer TOKEN"}, status_code=401)
        if request.method == "GET":
            mine = challenges_of(self.competition, caller)
            return JSONResponse({"challenges": [challenge_json(self.competition, c) for c in mine]})
        try:
            body = await request.json()
        except (ValueError, RecursionError):  # RecursionError: JSON nested too deep (a 500)
            return JSONResponse({"error": 'send JSON: {"opponents": [NAME, ...]}'}, 400)
        names = body.get("opponents") if isinstance(body, dict) else None
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            return JSONResponse({"error": '"opponents" must be a list of names'}, 400)
        try:
            made = request_challenge(self.competition, caller, names)
        except ChallengeRefusedError as error:
            return JSONResponse({"error": error.reason}, status_code=error.status)
        return JSONResponse(challenge_json(self.competition, made), status_code=201)

    async def api_challenge(self, request: Request) -> Response:
        caller = self._caller(request)
        found = challenge(self.competition.store, request.path_params["challenge"])
        if found is None or not visible_to(self.competition, found, caller):
            return JSONResponse({"error": "no such challenge"}, status_code=404)
        return JSONResponse(challenge_json(self.competition, found))


def _finals_matches(contest: ContestPages, finals_id: int) -> list[dict[str, str]]:
    """The published finals' matches, each with its log's address (contest_downloads)."""
    return [
        {"match": match_id, "log": f"/api/matches/{match_id}/log"}
        for match_id in contest_match_ids(contest.competition.store, "finals", finals_id)
    ]


def routes(competition: Competition, pages: Pages) -> list[BaseRoute]:
    contest = ContestPages(competition, pages)
    return [
        Route("/finals", contest.finals_page),
        Route("/challenge", contest.challenge_page, methods=["GET"]),
        Route("/challenge", contest.challenge_post, methods=["POST"]),
        Route("/challenges/{challenge:int}", contest.challenge_view),
        Route("/api/phase", contest.api_phase),
        Route("/api/finals", contest.api_finals),
        Route("/api/challenges", contest.api_challenges, methods=["GET", "POST"]),
        Route("/api/challenges/{challenge:int}", contest.api_challenge),
    ]
