"""The operations log on the organiser's page and API: its last lines, across rotated files.

``DATA/operations.log`` is rotated by size (``referee.server.log_rotation``);
the page's section and ``GET /api/organiser/operations?limit=N`` read the old
files and the current one as one log (``read_operations``), newest last, so
a rotation never hides the lines just before it.  Both are the organiser's
alone (``organiser_web``: everyone else gets 404).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from referee.server import log_rotation
from referee.server.competition import Competition
from referee.server.operations import FILE_NAME, human_line, read_operations

PAGE_LINES = 50  # the page's section shows this many of the newest lines
API_MOST = 10_000  # the API's largest ``limit``


def operations_data(competition: Competition, limit: int = PAGE_LINES) -> dict[str, Any]:
    """The last ``limit`` records, each with its human line, and what the files hold."""
    path = competition.config.data / FILE_NAME
    records = read_operations(path, limit)
    return {
        "records": records,
        "lines": [human_line(record).removeprefix("newmarket serve: ") for record in records],
        "files": len(log_rotation.old_files(path)) + (1 if path.exists() else 0),
        "bytes": log_rotation.stored_bytes(path),
    }


async def api_operations(competition: Competition, request: Request) -> Response:
    """``GET /api/organiser/operations?limit=N``: the last N records (the caller checked the
    organiser's token)."""
    try:
        limit = min(max(int(request.query_params.get("limit", "100")), 1), API_MOST)
    except ValueError:
        return JSONResponse({"error": "limit is a whole number"}, status_code=400)
    data = operations_data(competition, limit)
    return JSONResponse(
        {"records": data["records"], "files": data["files"], "bytes": data["bytes"]}
    )
