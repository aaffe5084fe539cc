"""A finals or a challenge match's log to download, under the contest's rules of secrecy.

The address is a ladder match's (``/matches/ID/log``, ``/api/matches/ID/log``), the
limit (``[server] downloads_per_minute``), the rebuild in a worker thread, the
filter (each seat's stderr to its owner alone, the server's paths hidden) and the
pruned record's 404 are ``referee.server.downloads``'; who may have the log, and
when, differ (docs/server.md, "Downloading a match's log"):

* **a challenge's match**: only a participant who may see the challenge
  (``challenges.visible_to``: its requester, and the opponents who played in it when
  ``[challenges] opponents_see``), never anyone else, nor the public; and nothing
  until the challenge's group has finished (its other matches deal the same
  cards), as for the ladder's groups;
* **a finals match**: nothing to anyone but the organiser until the final ranking
  is published (a 404, as for a match that does not exist: the finals' match ids,
  seeds and cards say how they are going); then to anyone, as a ladder match's.

A refusal of who may not know the match exists is the same 404 as for a match id
that names nothing, so a second account cannot probe for another's challenges.
"""

from __future__ import annotations

from referee.server.challenges import visible_to
from referee.server.competition import Competition
from referee.server.competition_db import Participant
from referee.server.contest_db import challenge, contest_match, finals_record
from referee.server.downloads import Download, Granted, owned_seats, pruned_text
from referee.server.views import server_places

NO_SUCH_MATCH = "no such match"


def contest_plan(
    competition: Competition, match_id: str, viewer: Participant | None, organiser: bool
) -> Download | Granted:
    """What the database says of a finals or challenge match's download: a refusal, or
    what to read for whom."""
    store = competition.store
    found = contest_match(store, match_id)
    if found is None:
        return Download(404, NO_SUCH_MATCH)
    if found.kind == "challenge":
        asked = challenge(store, found.owner)
        if asked is None or not visible_to(competition, asked, viewer):
            return Download(404, NO_SUCH_MATCH)
        if asked.status in ("waiting", "playing"):
            return Download(
                403,
                f"challenge {asked.id} is still being played: the same cards are dealt at "
                "its other seats, so its logs are given once it has finished",
            )
    elif found.kind == "finals":
        finals = finals_record(store, found.owner)
        if finals is None or (finals.ranking is None and not organiser):
            return Download(404, NO_SUCH_MATCH)
    else:  # a kind this server does not know: nobody's to read
        return Download(404, NO_SUCH_MATCH)
    return Granted(
        match_id,
        found.log_path,
        owned_seats(competition, found.versions, viewer),
        server_places(competition),
        pruned_text(competition, match_id),
    )
