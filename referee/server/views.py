"""What the pages and the API show, as plain data: one source for both.

Each function returns JSON-able dicts; the page templates render them and
the API returns them as they are, so a page and its API twin cannot
disagree.  Owner-only parts (a version's check transcript, a bot's stderr,
its wire transcripts) are included only when ``viewer`` is the owner.

No absolute path of the server's leaves here: a bot that prints its own
file's path, a compiler's message, a traceback of the check all name the
server's directories, so every text that comes from a process (a version's
detail and transcript, a fault's detail, a bot's stderr and wire transcript,
the status line, a replay) is given through ``hide_paths``
(``<data>/versions/000003/files/main.py``, not the directory's real place).

A match whose group is still being played (``CompetitionStore.in_play``)
shows nothing that came from its cards, to anyone, its owners included: no
seed, replay, log, chips, places, hands or fault details, since the same cards
are still to be dealt at the group's other seats and a bot can read the web.
Its page says so, and when they will appear.  Chips are held back too: one
match's chips are its deal's.  The leaderboard is not: it sums every group.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import referee
from referee.match.result import MatchResult
from referee.report.data import read_match_log
from referee.report.pages import page_replay, replay_data
from referee.report.templating import ScriptJSON, script_json
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore, FaultRow, Participant, Version
from referee.server.competition_file import REMOTE
from referee.server.retention import pruned_line
from referee.text.faults import without_stderr, without_stderr_in

HISTORY_POINTS = 120

Places = tuple[tuple[str, str], ...]


def server_places(competition: Competition) -> Places:
    """The server's own absolute paths, longest first, each with what a page shows instead."""
    return _places(competition.config.data, competition.config.path.parent)


@functools.lru_cache(maxsize=4)
def _places(data: Path, folder: Path) -> Places:
    places = (
        (data, "<data>"),
        (folder, "<competition>"),
        (Path(referee.__file__).parents[1], "<newmarket>"),
        (Path(sys.prefix), "<python>"),
        (Path(sys.base_prefix), "<python>"),
        (Path.home(), "~"),
        (Path.cwd(), "<server>"),
    )
    pairs = {
        (form, shown)
        for place, shown in places
        for form in {str(place.absolute()), str(place.resolve())}
        if len(form) > 1  # never "/"
    }
    return tuple(sorted(pairs, key=lambda pair: (-len(pair[0]), pair)))


@functools.lru_cache(maxsize=4)
def _pattern(places: Places) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(form) for form, _shown in places))


def hide_paths(value: Any, places: Places) -> Any:
    """``value`` (JSON-able data) with each of the server's paths in its strings replaced."""
    if isinstance(value, str):
        if not places:
            return value
        shown = dict(places)
        return _pattern(places).sub(lambda found: shown[found.group(0)], value)
    if isinstance(value, dict):
        return {key: hide_paths(item, places) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [hide_paths(item, places) for item in value]
    return value


def _labels(competition: Competition) -> dict[int, Version]:
    return {v.id: v for v in competition.store.versions()}


def remote_connected(competition: Competition, version: Version) -> bool | None:
    """Whether a remote version is connected now (playing or not); None for the others."""
    if version.runtime != REMOTE:
        return None
    return competition.lobby is not None and competition.lobby.connected(version.id)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def leaderboard(competition: Competition) -> dict[str, Any]:
    versions = _labels(competition)
    playing = {v.id for v in competition.store.playing_versions()}
    rows = []
    scores = competition.board.scores
    for version_id, score in sorted(scores.items(), key=lambda item: item[1].rank):
        version = versions.get(version_id)
        if version is None:
            continue
        rows.append(
            {
                "rank": score.rank,
                "rank_low": score.rank_low,
                "rank_high": score.rank_high,
                "version": version.id,
                "label": version.label,
                "participant": version.participant_name,
                "number": version.number,
                "runtime": version.runtime,
                "connected": remote_connected(competition, version),
                "score": _round(score.score),
                "low": _round(score.low),
                "high": _round(score.high),
                "groups": score.groups,
                "matches": score.matches,
                "playing": version.id in playing,
            }
        )
    return {
        "competition": competition.config.name,
        "status": hide_paths(competition.status, server_places(competition)),
        "paused": competition.store.paused,
        "matches": competition.store.match_count(),
        "tables_playing": sorted(competition.playing_now.values()),
        "rows": rows,
        # Full speed or settled, and why (referee.server.pace): versions and ranks, no path.
        "pace": {"state": competition.pace.state.state, "why": competition.pace.state.why},
    }


def version_json(competition: Competition, version: Version, owner: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": version.id,
        "participant": version.participant_name,
        "number": version.number,
        "label": version.label,
        "runtime": version.runtime,
        "filename": version.filename,
        "sha256": version.sha256,
        "size": version.size,
        "status": version.status,
        "detail": version.detail,
        "created_at": version.created_at,
        "decided_at": version.decided_at,
    }
    if owner:
        data["transcript"] = version.transcript
    if version.status == "suspended":
        # Public, as the status is: the matches are public, and the texts hold no path.
        found = competition.store.suspensions(version.id)
        data["suspension"] = found[0] if found else None
    if version.runtime == REMOTE:
        lobby = competition.lobby
        data["connected"] = remote_connected(competition, version)
        if owner and lobby is not None and lobby.address is not None:
            from referee.server.remote import bot_token

            host, port = lobby.address
            data["token"] = bot_token(competition.store.secret, version.id)
            data["connect"] = f"newmarket connect {host}:{port} --token {data['token']} -- COMMAND"
    places = server_places(competition)
    for key in ("detail", "transcript", "suspension"):
        if key in data:
            data[key] = hide_paths(data[key], places)
    return data


def participant_view(
    competition: Competition, participant: Participant, viewer: Participant | None
) -> dict[str, Any]:
    store = competition.store
    owner = viewer is not None and viewer.id == participant.id
    versions = store.versions(participant.id)
    matches = _recent_matches(store, versions, _labels(competition))
    found = [(version, fault) for version in versions for fault in store.faults(version.id, 20)]
    in_play = store.in_play([m["match_id"] for m in matches] + [f.match_id for _v, f in found])
    for match in matches:  # how a match went is its deal's: not before its group ends
        match["cards_public"] = match["match_id"] not in in_play
        if not match["cards_public"]:
            match["hands"] = match["reason"] = None
    faults = _fault_rows(found, in_play, server_places(competition), owner)
    history = [chart for version in versions if (chart := _history(store, version))]
    scores = competition.board.scores
    view: dict[str, Any] = {
        "name": participant.name,
        "owner": owner,
        "versions": [
            {
                **version_json(competition, version, owner),
                "score": _round(scores[version.id].score) if version.id in scores else None,
                "rank": scores[version.id].rank if version.id in scores else None,
            }
            for version in reversed(versions)
        ],
        "matches": matches,
        "faults": faults[:40],
        "history": history,
    }
    return view


def _recent_matches(
    store: CompetitionStore, versions: list[Version], labels: dict[int, Version]
) -> list[dict[str, Any]]:
    """The latest 30 matches of a participant's versions, newest first, each seat labelled."""
    mine = {v.id for v in versions}
    matches = []
    seen: set[str] = set()
    for version in reversed(versions):
        for match in store.recent_matches(20, version.id):
            if match["match_id"] in seen:
                continue
            seen.add(match["match_id"])
            matches.append(
                {
                    **match,
                    "seats": [
                        {
                            "version": v,
                            "label": labels[v].label if v in labels else f"v{v}",
                            "mine": v in mine,
                        }
                        for v in match["versions"]
                    ],
                }
            )
    matches.sort(key=lambda m: -m["finished_at"])
    return matches[:30]


def _fault_rows(
    found: list[tuple[Version, FaultRow]], in_play: set[str], places: Places, owner: bool = False
) -> list[dict[str, Any]]:
    """The versions' faults, the details held back while their match's group plays."""
    faults = []
    for version, fault in found:
        public = fault.match_id not in in_play
        faults.append(
            {
                "version": version.label,
                "match_id": fault.match_id,
                "seat": fault.seat,
                "kind": fault.kind,
                "hand": fault.hand,
                # A fault's detail may name a card ("played 7H, not in hand").
                # ... and a crash's, the bot's last stderr line (its owner's alone).
                "detail": (
                    hide_paths(fault.detail if owner else without_stderr(fault.detail), places)
                    if public
                    else None
                ),
                "cards_public": public,
            }
        )
    return faults


def _history(store: CompetitionStore, version: Version) -> dict[str, Any] | None:
    """A version's mean net chips after each match, as a chart's points (None: no matches)."""
    rows = store.net_chips_history(version.id)
    total = 0
    points = []
    # At most HISTORY_POINTS points a version: a page's size must not grow with the weeks.
    step = max(1, len(rows) // HISTORY_POINTS)
    for count, (net, finished_at) in enumerate(rows, start=1):
        total += net
        if count % step == 0 or count == len(rows):
            points.append({"match": count, "mean": round(total / count, 2), "at": finished_at})
    return {"version": version.label, "points": points} if points else None


@functools.lru_cache(maxsize=64)
def _log(path: str, start_chips: tuple[int, ...], mtime: float, names: tuple[str, ...] = ()) -> Any:
    # mtime is part of the key: a log replayed after a restart is read afresh.  ``names``:
    # the page's labels (``alice v3``), so the replay's steps name the seats as its table.
    return read_match_log(Path(path), start_chips, verify=False, names=names or None)


@functools.lru_cache(maxsize=64)
def _replay(
    path: str,
    start_chips: tuple[int, ...],
    mtime: float,
    names: tuple[str, ...],
    places: Places = (),
) -> tuple[dict[str, object], ScriptJSON]:
    """The viewer's data and its JSON for a page, made once per log (a finished log never
    changes): a match page is read far more often than a match is played."""
    # Public: a crash narrated in it loses the bot's last stderr line (its owner's alone).
    replay = without_stderr_in(replay_data(names, _log(path, start_chips, mtime, names)))
    data = hide_paths(replay, places)
    return data, script_json(page_replay(data))  # the page's steps; the API's frames


def page_names(competition: Competition, seating: Sequence[int]) -> list[str]:
    """Each seat's label on a match's page (``alice v3``), as its replay names them."""
    labels = _labels(competition)
    return [labels[v].label if v in labels else f"v{v}" for v in seating]


def build_replay(competition: Competition, path: Path, mtime: float, names: Sequence[str]) -> None:
    """Make, and cache, what ``match_view`` reads of the log at ``path`` as of ``mtime``
    (its first look costs tens of milliseconds).  No database: a worker thread may run it
    (``referee.server.match_builds``)."""
    start = tuple(competition.config.rules.starting_chips for _ in names)
    _log(str(path), start, mtime, tuple(names))
    _replay(str(path), start, mtime, tuple(names), server_places(competition))


def match_view(
    competition: Competition, match_id: str, viewer: Participant | None, *, public: bool = True
) -> dict[str, Any] | None:
    """A match's result, replay and the viewer's own stderr and transcripts.

    ``public=False`` (the page) adds ``replay_json``, the replay made ready once for the
    page's script element by the report's ``script_json`` (``report/replay.html``).
    """
    store = competition.store
    found = store.match(match_id)
    if found is None:
        return None
    group, rotation, seating, result, log_path = found
    labels = _labels(competition)
    if store.in_play({match_id}):
        return _in_play_view(competition, match_id, group.id, rotation, seating, labels)
    owned = {
        seat
        for seat, version in enumerate(seating)
        if viewer is not None and version in labels and labels[version].participant == viewer.id
    }
    names = page_names(competition, seating)
    view: dict[str, Any] = {
        "match_id": match_id,
        "group": group.id,
        "rotation": rotation,
        "cards_public": True,
        "in_play": None,
        # The seed the cards came from (from the server's key; public now that the group
        # has finished), with which `newmarket replay` verifies the log.
        "seed": result.seed,
        "hands": result.hands,
        "reason": result.reason,
        "seats": _seat_rows(result, seating, names, labels, owned),
        "replay": None,
        "stderr": {},
        "transcripts": [],
        "record_pruned": None,
    }
    pruned = store.pruned(match_id)
    if pruned is not None:  # the result stays; the page says why there is no replay
        view["record_pruned"] = pruned_line(pruned)
    path = Path(log_path) if log_path else None
    if path is not None and path.is_file():
        _add_log(view, competition, path, names, owned, public=public)
    return _shown(view, competition)


def _seat_rows(
    result: MatchResult,
    seating: list[int],
    names: list[str],
    labels: dict[int, Version],
    owned: AbstractSet[int] = frozenset(),
) -> list[dict[str, Any]]:
    """The result's seats in finishing order, each with its version, chips and faults."""
    seats = []
    for seat in sorted(result.seats, key=lambda s: (s.place, s.seat)):
        version = labels.get(seating[seat.seat])
        seats.append(
            {
                "seat": seat.seat,
                "version": seating[seat.seat],
                "label": names[seat.seat],
                "participant": None if version is None else version.participant_name,
                "place": seat.place,
                "chips": seat.chips,
                "net_chips": seat.net_chips,
                "status": seat.status,
                # A crash's detail quotes the bot's last stderr line: its owner's alone.
                "faults": [
                    {
                        "kind": f.kind,
                        "hand": f.hand,
                        "detail": f.detail if seat.seat in owned else without_stderr(f.detail),
                    }
                    for f in seat.faults
                ],
            }
        )
    return seats


def _add_log(
    view: dict[str, Any],
    competition: Competition,
    path: Path,
    names: list[str],
    owned: set[int],
    *,
    public: bool,
) -> None:
    """What the match's log adds to its view: the replay, and the owner's stderr and talk."""
    start = tuple(competition.config.rules.starting_chips for _ in names)
    mtime = path.stat().st_mtime
    log = _log(str(path), start, mtime, tuple(names))
    places = server_places(competition)
    view["replay"], text = _replay(str(path), start, mtime, tuple(names), places)
    if not public:
        view["replay_json"] = text
    # Owner only: what the viewer's own bot wrote, and its conversation at each fault.
    view["stderr"] = {names[s]: text for s, text in log.stderr.items() if s in owned}
    view["transcripts"] = [
        {
            "seat": t.seat,
            "label": names[t.seat],
            "hand": t.hand,
            "kind": t.kind,
            "detail": t.detail,
            "lines": [{"mark": mark, "text": text} for mark, text in t.lines],
        }
        for t in log.transcripts
        if t.seat in owned
    ]


def _shown(view: dict[str, Any], competition: Competition) -> dict[str, Any]:
    """A match view with the server's paths hidden (its replay was, once, when made)."""
    places = server_places(competition)
    for key in ("reason", "seats", "stderr", "transcripts"):
        view[key] = hide_paths(view[key], places)
    return view


def _in_play_view(
    competition: Competition,
    match_id: str,
    group: int,
    rotation: int,
    seating: list[int],
    labels: dict[int, Version],
) -> dict[str, Any]:
    """A finished match of a group still being played: who sat where, and nothing else."""
    done, total = competition.store.group_progress(group)
    seats = []
    for seat, version_id in enumerate(seating):
        version = labels.get(version_id)
        seats.append(
            {
                "seat": seat,
                "version": version_id,
                "label": version.label if version is not None else f"v{version_id}",
                "participant": None if version is None else version.participant_name,
                "place": None,
                "chips": None,
                "net_chips": None,
                "status": None,
                "faults": [],
            }
        )
    return {
        "match_id": match_id,
        "group": group,
        "rotation": rotation,
        "cards_public": False,
        "in_play": (
            f"group {group} is still being played ({done} of {total} matches finished): "
            "the same cards are dealt at its other seats, so this match's result, seed, "
            f"replay and fault details appear here once all {total} have finished"
        ),
        "seed": None,
        "hands": None,
        "reason": None,
        "seats": seats,
        "replay": None,
        "stderr": {},
        "transcripts": [],
        "record_pruned": None,
    }
