"""Challenges: a participant's unrated duplicate group against opponents it picks, played now.

A signed-in participant names one to three opponents (other participants' current
versions, or house bots); its own current version and theirs play one duplicate
rotation group on cards dealt from a key drawn for this challenge alone.  If the
table would have fewer seats than the game's least (3), a house bot fills it,
or the challenge is refused when the competition has none.  The results go to
``contest_matches`` and never to the ladder: a challenge cannot move a rank.

* At most ``[challenges] per_hour`` per participant in any hour (429 past it).
* From the opening until the finals (``referee.server.phases``).
* Who sees it: the requester, and the challenged participants when
  ``[challenges] opponents_see`` (the default: they played in it, and learn
  what was asked of their bot); nobody else.
* Played on a table of their own (``challenge_loop``), first asked first played,
  and, as the ladder's groups, not while the disk is short of its free room.
"""

from __future__ import annotations

import sys
import time
import traceback
from functools import partial
from typing import Any

import trio

from engine.state import MIN_PLAYERS
from referee.match.dealkey import DealKey
from referee.match.key import derive_seed
from referee.server.busy import written
from referee.server.competition import Competition
from referee.server.competition_db import Participant, Version
from referee.server.competition_file import REMOTE
from referee.server.contest_db import (
    Challenge,
    add_challenge,
    challenges,
    challenges_since,
    contest_played,
    contest_pruned,
    set_challenge,
)
from referee.server.contest_events import announce
from referee.server.contest_play import group_keys, play_keys
from referee.server.phases import challenge_refusal
from referee.server.play import POLL, OpenTable, wait_for_room
from referee.server.quotas import public_text
from referee.server.retention import pruned_line
from referee.server.worker_table import WorkerError

KIND = "challenge"
MAX_OPPONENTS = 3


class ChallengeRefusedError(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def opponents_offered(competition: Competition, requester: Participant) -> list[Version]:
    """The current versions a participant may challenge: everyone else's, house bots too."""
    return [
        v
        for v in competition.store.playing_versions()
        if v.participant != requester.id and v.runtime != REMOTE
    ]


def request_challenge(
    competition: Competition, requester: Participant, names: list[str]
) -> Challenge:
    """Record a challenge of ``requester`` against the participants ``names``, or refuse it."""
    config = competition.config
    closed = challenge_refusal(competition)
    if closed is not None:
        raise ChallengeRefusedError(403, closed)
    limit = config.contest.challenges.per_hour
    if limit == 0:
        raise ChallengeRefusedError(403, "this competition has no challenges ([challenges])")
    names = [name for name in dict.fromkeys(n.strip() for n in names) if name]
    if not 1 <= len(names) <= MAX_OPPONENTS:
        raise ChallengeRefusedError(400, "pick one to three opponents")
    offered = {v.participant_name: v for v in opponents_offered(competition, requester)}
    mine = [v for v in competition.store.playing_versions() if v.participant == requester.id]
    if not mine or mine[0].runtime == REMOTE:
        raise ChallengeRefusedError(
            400, "you have no admitted version that plays here: upload one first"
        )
    chosen = []
    for name in names:
        if name not in offered:
            raise ChallengeRefusedError(
                400, f"{name[:80]!r} has no current version to challenge (see /challenge)"
            )
        chosen.append(offered[name])
    table = [mine[0], *chosen]
    if len(table) < MIN_PLAYERS:
        fillers = [v for v in offered.values() if competition.is_house(v) and v not in table]
        if len(fillers) < MIN_PLAYERS - len(table):
            raise ChallengeRefusedError(
                400, f"a table needs {MIN_PLAYERS} seats: pick {MIN_PLAYERS - 1} opponents"
            )
        table += fillers[: MIN_PLAYERS - len(table)]
    # Counted again with no await since: two requests at once cannot both pass the limit.
    if challenges_since(competition.store, requester.id, competition.clock() - 3600) >= limit:
        raise ChallengeRefusedError(429, f"challenge limit: {limit} an hour; try again later")
    seed = derive_seed(config.seed, "challenge", time.time_ns())
    made = add_challenge(
        competition.store,
        requester.id,
        [v.id for v in table],
        seed,
        DealKey.generate().to_text(),
        competition.clock(),
    )
    competition.notify()
    return made


def visible_to(competition: Competition, challenge: Challenge, viewer: Participant | None) -> bool:
    if viewer is None:
        return False
    if viewer.id == challenge.requester:
        return True
    if not competition.config.contest.challenges.opponents_see:
        return False
    owners = set()
    for version_id in challenge.versions:
        version = competition.store.version(version_id)
        if version is not None:
            owners.add(version.participant)
    return viewer.id in owners


def challenge_json(competition: Competition, challenge: Challenge) -> dict[str, Any]:
    store = competition.store
    seated = []
    for version_id in challenge.versions:
        version = store.version(version_id)
        seated.append(
            {"version": version_id, "label": version.label if version else str(version_id)}
        )
    played = contest_played(store, KIND, challenge.id)
    totals: dict[int, int] = dict.fromkeys(challenge.versions, 0)
    matches = []
    # Its logs, to its players alone, once nothing of it is left to play (contest_downloads).
    downloadable = challenge.status not in ("waiting", "playing")
    for match in played:
        for held, net in zip(match.versions, match.net_chips, strict=True):
            totals[held] = totals.get(held, 0) + net
        mid = f"c{challenge.id}r{match.rotation}"
        pruned = contest_pruned(store, mid)  # the result stays; its record may not (retention)
        matches.append(
            {
                "match": mid,
                "versions": list(match.versions),
                "net_chips": list(match.net_chips),
                "hands": match.hands,
                "record_pruned": None if pruned is None else pruned_line(pruned),
                "log": f"/api/matches/{mid}/log" if downloadable and pruned is None else None,
            }
        )
    return {
        "id": challenge.id,
        "status": challenge.status,
        "detail": challenge.detail,
        "rated": False,
        "requested_at": challenge.requested_at,
        "finished_at": challenge.finished_at,
        "table": seated,
        "net_chips": [{"version": v, "chips": totals[v]} for v in challenge.versions],
        "matches": matches,
    }


def challenges_of(competition: Competition, viewer: Participant) -> list[Challenge]:
    return [c for c in challenges(competition.store) if visible_to(competition, c, viewer)]


async def challenge_loop(competition: Competition, number: int, open_table: OpenTable) -> None:
    """Play waiting challenges, first asked first, on table ``number`` (its own worker)."""
    store = competition.store
    while True:
        waiting = challenges(store, "waiting") + challenges(store, "playing")
        if not waiting:
            with trio.move_on_after(POLL):
                await competition.changed.wait()
            continue
        # As the ladder's groups and the finals: none starts while the disk is short of its
        # free room (before, a participant's challenges kept writing logs on a disk the
        # ladder had stopped for).  An organiser's pause stops the ladder only.
        await wait_for_room(competition)
        challenge = min(waiting, key=lambda c: c.id)
        await written(
            "starting a challenge", partial(set_challenge, store, challenge.id, "playing")
        )
        keys = group_keys(
            f"c{challenge.id}r",
            challenge.seed,
            challenge.deal_key,
            0,
            challenge.versions,
            competition.config.rules.starting_chips,
        )
        done = {f"c{challenge.id}r{m.rotation}" for m in contest_played(store, KIND, challenge.id)}
        table = await open_table(number)
        try:
            await play_keys(competition, table, KIND, challenge.id, 0, keys, done)
            status, detail = "finished", ""
        except WorkerError as error:
            # A challenge is not retried: it is the requester's to ask again (it is unrated).
            status, detail = "failed", public_text(f"its table failed: {error.text}")[:300]
        except Exception as error:
            # A bug on this challenge's path must not end the server (nor meet it again at
            # every restart): the challenge fails with the error named, as admission does.
            traceback.print_exc(file=sys.stderr)
            status = "failed"
            detail = public_text(f"the server failed (a server bug): {type(error).__name__}")
        finally:
            await table.aclose()
        await written(
            "finishing a challenge", partial(set_challenge, store, challenge.id, status, detail)
        )
        seated = (store.version(v) for v in challenge.versions)
        told = {challenge.requester}  # and its opponents, if they may see it
        if competition.config.contest.challenges.opponents_see:
            told |= {v.participant for v in seated if v is not None}
        announce(
            store,
            "challenge_played" if status == "finished" else "challenge_failed",
            sorted(told),
            f"challenge {challenge.id} {status}" + (f": {detail}" if detail else ""),
            f"/challenges/{challenge.id}",
        )
        competition.notify()
