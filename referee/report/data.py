"""What the report shows, read from a league's database and its match logs.

The database is opened read-only (``LeagueStore.open_existing``), so a report
can be made while the league is still writing.  Standings come from
``referee.league.standings.compute``, the very function ``newmarket
standings`` prints, so the two always agree; the rating chart replays the
same openskill updates match by match, in the same schedule order, and keeps
every step.

Match logs are found where the league wrote them (the path stored with each
match), or in ``--logs DIR`` when the site is built elsewhere.  A league run
with ``logs = false`` has none: its pages say so and show what the database
holds (results and fault details).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from openskill.models import PlackettLuce

from referee.league.league_db import LeagueStore, StoredMatch
from referee.league.standings import Standings, compute
from referee.match.archive import stored_log
from referee.match.log import LogError, read_log
from referee.report.frames import Frame, Narrator, build_frames, pretty, pretty_text
from referee.scoring.ratings import MU, SIGMA, Rating
from referee.storage.stderr_files import stderr_paths
from referee.tools.replay import verify_log

STDERR_EXCERPT = 4000  # characters of a bot's stderr shown per match and per file
TRANSCRIPT_REQUESTS = 3  # a fault's transcript starts this many of the seat's requests back


@dataclasses.dataclass
class League:
    db: Path
    name: str
    bots: list[str]
    matches: list[StoredMatch]  # schedule order: the order ratings are computed in
    standings: Standings
    history: list[dict[str, Rating]]  # ratings after each match of ``matches``
    log_dir: Path | None  # where ``--logs`` says, or None: the paths stored with the matches


def load_league(db: Path, log_dir: Path | None = None) -> League:
    """Everything the database holds (``StoreError`` if it is not a league database)."""
    with LeagueStore.open_existing(db) as store:
        identity = store.resolved_identity()
        names = store.bot_names()
        stored = store.matches()
        title = store.name()
        deals = store.deal_key()
    ordered = sorted(stored, key=lambda m: (m.key.round, m.key.ordinal, m.key.match_id))
    standings = compute(identity, names, ordered, title, deals)
    return League(db, title, names, ordered, standings, rating_history(names, ordered), log_dir)


def rating_history(names: Sequence[str], ordered: Sequence[StoredMatch]) -> list[dict[str, Rating]]:
    """The ratings after each match, exactly as ``referee.scoring.ratings.rate`` updates them."""
    model = PlackettLuce(mu=MU, sigma=SIGMA)
    ratings = {name: model.rating(mu=MU, sigma=SIGMA, name=name) for name in names}
    history = []
    for match in ordered:
        seated = [names[bot] for bot in match.key.bots]
        places = [float(seat.place) for seat in match.result.seats]
        updated = model.rate([[ratings[name]] for name in seated], ranks=places)
        for name, team in zip(seated, updated, strict=True):
            ratings[name] = team[0]
        history.append({name: Rating(r.mu, r.sigma) for name, r in ratings.items()})
    return history


def log_path_of(league: League, match: StoredMatch) -> Path | None:
    """The match's log file if it exists: in ``--logs``, where it was written, or beside the db
    (in either form, ``referee.match.archive``)."""
    match_id = match.key.match_id
    candidates = []
    if league.log_dir is not None:
        candidates.append(stored_log(league.log_dir, match_id))
    if match.result.log_path is not None:
        stored = Path(match.result.log_path)
        candidates.append(stored if stored.is_absolute() else league.db.parent / stored)
    candidates.append(stored_log(league.db.with_name(f"{league.db.stem}-logs"), match_id))
    return next((path for path in candidates if path is not None and path.is_file()), None)


def stderr_files(league: League, bot_name: str) -> list[Path]:
    """The table workers' whole-session stderr files of a bot (``LOGS/stderr/NAME-N.stderr``)."""
    dirs = set()
    if league.log_dir is not None:
        dirs.add(league.log_dir / "stderr")
    for match in league.matches:
        path = log_path_of(league, match)
        if path is not None:
            dirs.add(path.parent / "stderr")
            break
    found: list[Path] = []
    for directory in sorted(dirs):
        if directory.is_dir():
            found += stderr_paths(directory, bot_name)  # never another bot's (echo-2's)
    return found


def excerpt(text: str, limit: int = STDERR_EXCERPT) -> str:
    """Head and tail of a long text, with what was left out said in the middle."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters left out ...]\n{text[-half:]}"


@dataclasses.dataclass
class FaultTranscript:
    seat: int
    hand: int
    kind: str
    detail: str
    lines: list[tuple[str, str]]  # (mark, text): "<" sent, ">" replied, "!" fault, "=" applied


@dataclasses.dataclass
class MatchLog:
    """What a match page and the bot pages need from one log."""

    path: Path
    header: dict[str, Any]
    frames: list[Frame]
    transcripts: list[FaultTranscript]
    stderr: dict[int, str]  # seat -> what it wrote during the match (excerpt)
    verified: str | None  # None when the log verifies, else why not
    error: str | None = None  # the log could not be read at all
    result: dict[str, Any] | None = None  # the log's last line, if the match finished


def read_match_log(
    path: Path,
    start_chips: Sequence[int],
    verify: bool = True,
    names: Sequence[str] | None = None,
) -> MatchLog:
    """Read a match log into frames, fault transcripts and stderr; never raises for a bad log.

    ``names``: what the frames call the seats, when the page names them otherwise than
    the log does (the server's ``alice v3`` for the ``alice-v3`` its tables play), so a
    replay's steps and the table beside them say the same names.
    """
    records: list[dict[str, Any]] = []
    error = None
    try:
        records = [record for _, record in read_log(path)]
    except LogError as problem:
        error = str(problem)
    header = records[0] if records and records[0].get("type") == "header" else {}
    bots = header.get("bots") if isinstance(header.get("bots"), list) else []
    names_in_log = [str(bot.get("name", f"seat {i}")) for i, bot in enumerate(bots or [])]
    names = list(names) if names is not None and len(names) == len(names_in_log) else names_in_log
    rules = header.get("rules") if isinstance(header.get("rules"), dict) else {}
    boodle_cards = [str(card) for card in (rules or {}).get("boodle_cards", [])]
    # The chips the engine started each seat with: the header's, as replay reads them.
    chips = list(start_chips) if len(start_chips) == len(names) else [0] * len(names)
    if isinstance(header.get("chips"), list) and len(header["chips"]) == len(names):
        chips = [int(c) for c in header["chips"]]
    elif isinstance((rules or {}).get("starting_chips"), int):
        chips = [int((rules or {})["starting_chips"])] * len(names)
    frames: list[Frame] = []
    try:
        frames = build_frames(names, chips, boodle_cards, records)
    except (KeyError, TypeError, ValueError, IndexError) as problem:
        error = error or f"the log's events cannot be followed: {problem!r}"
    verified: str | None = None
    if verify and error is None:
        try:
            verify_log(path)
        except LogError as problem:
            verified = str(problem)
    stderr: dict[int, str] = {}
    for record in records:
        if record.get("type") == "stderr" and isinstance(record.get("seat"), int):
            stderr[record["seat"]] = excerpt(str(record.get("text", "")))
    result = records[-1] if records and records[-1].get("type") == "result" else None
    return MatchLog(path, header, frames, transcripts(records), stderr, verified, error, result)


def transcripts(records: Sequence[dict[str, Any]]) -> list[FaultTranscript]:
    """For each fault, the seat's own lines around it: its last requests, replies and decisions."""
    out = []
    for index, record in enumerate(records):
        if record.get("type") != "fault":
            continue
        seat = record.get("seat")
        mine = [
            (i, r)
            for i, r in enumerate(records)
            if r.get("seat") == seat
            and r.get("type") in ("request", "reply", "late", "fault", "decision")
        ]
        position = next(p for p, (i, _) in enumerate(mine) if i == index)
        start = position
        requests = 0
        while start > 0 and requests < TRANSCRIPT_REQUESTS:
            start -= 1
            requests += mine[start][1].get("type") == "request"
        end = position + 1
        while end < len(mine) and mine[end][1].get("type") != "request":
            end += 1
        lines = _with_table_events(records, [i for i, _ in mine[start:end]])
        out.append(
            FaultTranscript(
                seat=int(seat) if isinstance(seat, int) else -1,
                hand=int(record.get("hand") or 0),
                kind=str(record.get("kind")),
                detail=str(record.get("detail")),
                lines=lines,
            )
        )
    return out


TABLE_LINES = 6  # of what happened at the table between two of the seat's lines, the last few


def _with_table_events(
    records: Sequence[dict[str, Any]], indices: Sequence[int]
) -> list[tuple[str, str]]:
    """The seat's lines at ``indices``, each after what the table did since the previous one."""
    header = records[0] if records else {}
    bots = header.get("bots") if isinstance(header.get("bots"), list) else []
    names = [str(bot.get("name", f"seat {i}")) for i, bot in enumerate(bots or [])]
    rules = header.get("rules") if isinstance(header.get("rules"), dict) else {}
    # Start at the run (or hand) in progress before the first line, so that its lead is told.
    cursor = indices[0]
    while cursor > 1 and not _starts_a_run(records[cursor]):
        cursor -= 1
    # The narrator starts mid-hand: tell it which hand, from the seat's own line, so that
    # the hand's end is told with its number (never "hand 0 ends").
    hand = records[indices[0]].get("hand")
    narrator = Narrator(
        names,
        [str(c) for c in (rules or {}).get("boodle_cards", [])],
        hand if isinstance(hand, int) else 0,
    )
    lines: list[tuple[str, str]] = []
    for index in indices:
        for record in records[cursor:index]:
            if record.get("type") == "event" and isinstance(record.get("event"), dict):
                narrator.event(record["event"])
        cursor = index + 1
        told = narrator.take()
        if len(told) > TABLE_LINES:
            told = ["...", *told[-TABLE_LINES:]]
        lines += [("#", line) for line in told]
        lines.append(_transcript_line(records[index]))
    return lines


def _starts_a_run(record: dict[str, Any]) -> bool:
    event = record.get("event")
    if record.get("type") != "event" or not isinstance(event, dict):
        return False
    return bool(event.get("type") == "hand_started" or event.get("lead"))


def _transcript_line(record: dict[str, Any]) -> tuple[str, str]:
    kind = record.get("type")
    if kind == "request":
        legal = " ".join(_choice(c) for c in record.get("legal") or [])
        return (
            "<",
            f"request {record.get('id')}: {record.get('decision')} (hand {record.get('hand')}); "
            f"legal: {legal or '-'}; default {_choice(record.get('default'))}; "
            f"{record.get('time_left_ms')} ms left",
        )
    if kind == "reply":
        return (
            ">",
            f"reply {record.get('id')}: {_choice(record.get('choice'))} "
            f"({record.get('latency_ms')} ms)",
        )
    if kind == "late":
        return (">", f"late reply {record.get('id')}: {_choice(record.get('choice'))} (discarded)")
    if kind == "fault":
        dq = "; disqualified" if record.get("disqualified") else ""
        return ("!", f"{record.get('kind')} fault: {pretty_text(str(record.get('detail')))}{dq}")
    by = record.get("by")
    return ("=", f"{record.get('decision')}: {_choice(record.get('choice'))} applied (by {by})")


def _choice(value: object) -> str:
    """A choice as the report writes it: a card as ``10♣``, anything else as JSON would."""
    if isinstance(value, str):
        shown = pretty(value)
        return shown if shown != value else repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_choice(item) for item in value) + "]"
    return repr(value)
