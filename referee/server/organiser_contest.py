"""The organiser's view of a contest over HTTP: dates, linked accounts, collusion pairs.

The organiser signs in as ``referee.server.organiser_auth`` says (the token
``newmarket serve organiser-token`` prints, as ``Authorization: Bearer TOKEN``,
or the organiser page's session cookie); anyone else gets the 404 an unknown
address gets, before anything is read, as the organiser's page answers.

    GET  /api/organiser/contest     the dates in force, the phase, the linked
                                    accounts, the collusion pairs with their matches
    POST /api/organiser/links       {"names": [NAME, NAME]}: link two accounts

``contest_json`` is also what an organiser page shows (the section template
``organiser_contest.html`` renders it).  The collusion report reads every
ladder log, so it runs in a worker thread on a reading connection of its own.
"""

from __future__ import annotations

from typing import Any

import trio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from referee.server import phases
from referee.server.collusion import collusion_report
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.competition_file import PHASE_NAMES, CompetitionConfig
from referee.server.contest_db import account_links, link_accounts
from referee.server.organiser_auth import organiser_by_bearer, organiser_by_cookie
from referee.server.organiser_web import not_found


def is_organiser(store: CompetitionStore, request: Request) -> bool:
    return organiser_by_bearer(request, store) or organiser_by_cookie(request, store)


def contest_json(config: CompetitionConfig, store: CompetitionStore, now: float) -> dict[str, Any]:
    """Dates, phase, linked accounts and collusion pairs (reads every ladder log)."""
    from datetime import UTC, datetime

    given = phases.dates_of(config, store)
    names = {p.id: p.name for p in store.participants()}
    return {
        "dates": {
            name: None if getattr(given, name) is None else getattr(given, name).isoformat()
            for name in PHASE_NAMES
        },
        "phase": phases.phase_at(given, datetime.fromtimestamp(now, UTC)).as_json(),
        "linked_accounts": [
            [names.get(low, str(low)), names.get(high, str(high))]
            for low, high in account_links(store)
        ],
        "collusion": collusion_report(config, store).as_json(),
    }


class OrganiserContest:
    def __init__(self, competition: Competition) -> None:
        self.competition = competition

    async def get_contest(self, request: Request) -> Response:
        store = self.competition.store
        if not is_organiser(store, request):
            return not_found()
        config, now = self.competition.config, self.competition.clock()

        def read() -> dict[str, Any]:
            reader = CompetitionStore.reader(store.path)
            try:
                return contest_json(config, reader, now)
            finally:
                reader.close()

        return JSONResponse(await trio.to_thread.run_sync(read))

    async def post_link(self, request: Request) -> Response:
        store = self.competition.store
        if not is_organiser(store, request):
            return not_found()
        try:
            body = await request.json()
        except (ValueError, RecursionError):  # RecursionError: JSON nested too deep
            return JSONResponse({"error": 'send JSON: {"names": [NAME, NAME]}'}, status_code=400)
        names = body.get("names") if isinstance(body, dict) else None
        if (
            not isinstance(names, list)
            or len(names) != 2
            or not all(isinstance(n, str) for n in names)
        ):
            return JSONResponse({"error": '"names" must be two names'}, status_code=400)
        found = [store.participant_by_name(name) for name in names]
        for name, who in zip(names, found, strict=True):
            if who is None:
                return JSONResponse({"error": f"no participant named {name!r}"}, 404)
        first, second = found
        assert first is not None and second is not None
        if first.id == second.id:
            return JSONResponse({"error": "name two different participants"}, status_code=400)
        new = link_accounts(store, first.id, second.id)
        self.competition.notify()
        return JSONResponse({"linked": [first.name, second.name], "new": new})


def routes(competition: Competition) -> list[BaseRoute]:
    organiser = OrganiserContest(competition)
    return [
        Route("/api/organiser/contest", organiser.get_contest, methods=["GET"]),
        Route("/api/organiser/links", organiser.post_link, methods=["POST"]),
    ]
