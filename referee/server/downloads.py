"""A match's log as a file to download, for ``newmarket replay`` (``--feed``) and ``view``.

Who may have what, and when (docs/server.md, "Downloading a match's log"):

* nothing of a match while its duplicate group is still being played
  (``CompetitionStore.in_play``), to anyone, its seats' owners included: the
  group's other matches deal the same cards, so a log, a wire transcript or a
  stderr (a bot may print its hand) would tell a bot still to play them its
  opponents' cards.  This is the test ``referee.server.views`` applies to a
  match's seed, replay and fault details;
* once the group has finished, everyone gets the log as ``newmarket replay``
  verifies it: the header (with the server's paths hidden), the deal's seed,
  every request, reply, fault and decision, and every seat's wire transcript.
  The transcript is given to all because it holds nothing the rest does not:
  replay regenerates every line sent to a seat from the engine and checks each
  line received against the reply logged after it, and a log without it does
  not verify;
* a seat's stderr (what the bot wrote for itself: its reasoning, its
  strategy) goes only to that seat's owner, signed in or with their token;
  another seat's never, nor the last line of it that a crash's detail quotes.
* at most ``[server] downloads_per_minute`` downloads a minute per participant,
  or per client address for nobody signed in (``download_log``): a 429 past it.
* a finals or a challenge match (not the ladder's) is given by the same address
  under the rules of ``referee.server.contest_downloads``.

The stored file is read through ``stored_log_lines`` alone, so a change of
the stored format (a compact record rebuilt on demand) changes one function.
A match whose record is no longer kept (retention) answers 404 with one line, which
says when it was pruned.
"""

from __future__ import annotations

import dataclasses
import json
import math
import weakref
from collections.abc import Sequence
from pathlib import Path

import trio
from starlette.responses import Response

from referee.match.archive import full_log_lines
from referee.match.log import LogError
from referee.server.competition import Competition
from referee.server.competition_db import Participant
from referee.server.contest_db import contest_pruned
from referee.server.operations import log_operation
from referee.server.ratelimit import SlidingWindow
from referee.server.retention import pruned_line
from referee.server.views import Places, hide_paths, server_places
from referee.text.faults import STDERR_HIDDEN, STDERR_MARK

MEDIA_TYPE = "application/x-ndjson"


def stored_log_lines(path: Path) -> list[str] | None:
    """The full match log's lines, as ``newmarket replay`` reads them, whether it is kept as
    a compact record (rebuilt here) or as JSON lines; None if it is not kept.  ``LogError``
    if what is kept cannot be read back."""
    if not path.exists():
        return None
    try:
        return [raw.decode("utf-8").rstrip("\n") for raw in full_log_lines(path)]
    except FileNotFoundError:  # pruned between the look and the read
        return None


@dataclasses.dataclass(frozen=True)
class Download:
    """A download's answer: a file, or why not (``status`` and one line)."""

    status: int
    text: str  # the file, or the reason
    filename: str = ""
    retry_after: int | None = None  # seconds, for a 429

    def headers(self) -> dict[str, str]:
        """The refusal's headers (``Retry-After``)."""
        return {} if self.retry_after is None else {"Retry-After": str(self.retry_after)}


def match_log(
    competition: Competition,
    match_id: str,
    viewer: Participant | None,
    *,
    organiser: bool = False,
) -> Download:
    """Match ``match_id``'s log as ``viewer`` (or the organiser) may have it (see the
    module's rule)."""
    planned = _plan(competition, match_id, viewer, organiser)
    return planned if isinstance(planned, Download) else planned.read()


async def download_log(
    competition: Competition,
    match_id: str,
    viewer: Participant | None,
    address: str,
    *,
    organiser: bool = False,
) -> Download:
    """``match_log`` for a web client: at most ``[server] downloads_per_minute`` a minute per
    participant (signed in or by token) or, for nobody signed in, per client address (429
    past it), the log rebuilt and filtered in a worker thread.

    A download costs the server 15 to 25 ms of CPU for a 10-hand match (rebuilding the
    record, then a pass over every line); unlimited, one client asking in a loop held the
    event loop that serves every page and records every result.
    """
    key = client_key(viewer, address)
    refused = over_limit(competition, key, "log downloads")
    if refused is not None:
        return refused
    planned = _plan(competition, match_id, viewer, organiser)
    if isinstance(planned, Download):
        return planned
    limits(competition).record(key)
    return await trio.to_thread.run_sync(planned.read)


_LIMITS: weakref.WeakKeyDictionary[Competition, SlidingWindow] = weakref.WeakKeyDictionary()


def client_key(viewer: Participant | None, address: str) -> str:
    """Whose count a request goes to: the participant's, or its address's if nobody."""
    return f"participant {viewer.id}" if viewer is not None else f"address {address}"


def over_limit(competition: Competition, key: str, what: str, aside: str = "") -> Download | None:
    """The 429 for ``key`` if it has spent its ``downloads_per_minute`` (naming ``what`` it
    spent them on), else None.  Counting is the caller's: a refusal is not counted."""
    limit = limits(competition)
    wait = limit.wait(key)
    if not wait:
        return None
    seconds = math.ceil(wait)
    return Download(
        429,
        f"too many {what}: {limit.limit} a minute{aside}; try again in {seconds} s",
        retry_after=seconds,
    )


def limits(competition: Competition) -> SlidingWindow:
    """The competition's download counts (the pages and the API share them, and a match
    page's first look, ``referee.server.match_builds``), by its clock."""
    found = _LIMITS.get(competition)
    if found is None:
        limit = competition.config.clients.downloads_per_minute
        found = SlidingWindow(limit, 60.0, competition.clock)
        _LIMITS[competition] = found
    return found


@dataclasses.dataclass(frozen=True)
class Granted:
    """A download allowed, read from the database: the file's reading and filtering are left
    (no database in them, so they may run in another thread)."""

    match_id: str
    log_path: str | None
    owned: set[int]
    places: Places
    pruned: str | None = None  # "record pruned on DATE ...", if retention removed it

    def read(self) -> Download:
        try:
            lines = stored_log_lines(Path(self.log_path)) if self.log_path else None
        except (LogError, UnicodeDecodeError) as error:
            log_operation(
                "platform-fault", where="log download", match=self.match_id, what=str(error)
            )
            return Download(500, f"the kept log of match {self.match_id} cannot be read back")
        if lines is None:
            why = f": {self.pruned}" if self.pruned else ""
            return Download(
                404,
                f"the log of match {self.match_id} is no longer kept{why} "
                "(its result is, on its page)",
            )
        return Download(200, _shown(self.places, lines, self.owned), f"{self.match_id}.jsonl")


def _plan(
    competition: Competition, match_id: str, viewer: Participant | None, organiser: bool
) -> Download | Granted:
    """What the database says of a download: a refusal, or what to read for whom."""
    store = competition.store
    found = store.match_seating(match_id)
    if found is None:
        # Not the ladder's: a finals or a challenge match, or none.  (Imported here: that
        # module builds on this one.)
        from referee.server.contest_downloads import contest_plan

        return contest_plan(competition, match_id, viewer, organiser)
    group, _rotation, seating, log_path = found
    if store.in_play({match_id}):
        done, total = store.group_progress(group.id)
        return Download(
            403,
            f"group {group.id} is still being played ({done} of {total} matches finished): "
            "the same cards are dealt at its other seats, so its logs are published once "
            f"all {total} have finished",
        )
    owned = owned_seats(competition, seating, viewer)
    return Granted(
        match_id, log_path, owned, server_places(competition), pruned_text(competition, match_id)
    )


def pruned_text(competition: Competition, match_id: str) -> str | None:
    """The match page's "record pruned on DATE (retention N days)", if it was."""
    store = competition.store
    # A ladder match's prune is in the ladder's table; a finals or challenge match's in
    # the contest's (referee.server.retention).
    pruned = store.pruned(match_id) or contest_pruned(store, match_id)
    return None if pruned is None else pruned_line(pruned)


def owned_seats(
    competition: Competition, seating: Sequence[int], viewer: Participant | None
) -> set[int]:
    if viewer is None:
        return set()
    owned = set()
    for seat, version_id in enumerate(seating):
        version = competition.store.version(version_id)
        if version is not None and version.participant == viewer.id:
            owned.add(seat)
    return owned


def _shown(places: Places, lines: list[str], owned: set[int]) -> str:
    """The log's lines without the stderr of seats not in ``owned``, the server's paths hidden.

    A path is replaced in the line's text, so every other byte of the line stays as the
    referee wrote it (``newmarket replay`` holds each line to its encoder's form); the
    header's commands and directories, where the paths are, are not verified.
    """
    kept = [line for line in lines if not _others_stderr(line, owned)]
    quoted = _quoted_stderr(kept, owned)
    out = []
    for line in kept:
        for text in quoted:
            line = line.replace(text, json.dumps(STDERR_HIDDEN, ensure_ascii=False)[1:-1])
        out.append(f"{hide_paths(line, places)}\n")
    return "".join(out)


def _quoted_stderr(lines: list[str], owned: set[int]) -> list[str]:
    """The stderr lines quoted by the faults of seats not in ``owned`` (a crash's detail
    ends ``; stderr: LAST LINE``), as they are spelt in the log's JSON.

    The same text is in the fault's line, the ``fault`` message sent to the seat and the
    result; a crash's detail is what the process said, which replay cannot confirm, so
    the log still verifies with it replaced in all three.
    """
    quoted = set()
    for line in lines:
        if '"fault"' not in line or STDERR_MARK not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or record.get("type") != "fault":
            continue
        detail = record.get("detail")
        if record.get("seat") in owned or not isinstance(detail, str):
            continue
        at = detail.find(STDERR_MARK)
        if at >= 0:
            quoted.add(json.dumps(detail[at:], ensure_ascii=False)[1:-1])
    return sorted(quoted, key=len, reverse=True)


def _others_stderr(line: str, owned: set[int]) -> bool:
    """Whether ``line`` is the stderr of a seat not in ``owned`` (a cheap test first)."""
    if '"stderr"' not in line:
        return False
    try:
        record = json.loads(line)
    except ValueError:
        return False
    return (
        isinstance(record, dict)
        and record.get("type") == "stderr"
        and record.get("seat") not in owned
    )


def log_response(download: Download) -> Response:
    """A granted download as a file the browser saves (never shown as a page)."""
    return Response(
        download.text,
        media_type=MEDIA_TYPE,
        headers={"Content-Disposition": f'attachment; filename="{download.filename}"'},
    )
