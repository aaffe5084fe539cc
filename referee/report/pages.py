"""The site's three kinds of page: the standings, one per bot, one per match.

Each function here gathers what its page shows, as plain values (numbers
already formatted, links already made); its template in ``templates/``
(``index.html``, ``bot.html``, ``match.html``) lays them out and escapes
every text (``referee.report.templating``).

File names never come from bots: a bot's page is ``bots/<index>.html`` (its
place in the league file) and a match's ``matches/<match id>.html`` with the
league's own ids, made safe all the same.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from referee.league.league_db import StoredMatch
from referee.league.standings import columns_of
from referee.match.result import MatchResult, SeatResult
from referee.report.chart import rating_chart, results_chart
from referee.report.data import League, MatchLog, excerpt, stderr_files
from referee.report.frames import plural, pretty, pretty_text
from referee.report.templating import page

MAX_FAULTS_SHOWN = 100  # a bot that times out on every move would make a page of megabytes
MAX_STDERR_MATCHES = 20


def match_file(match_id: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in match_id)
    return f"matches/{safe}.html"


def bot_file(index: int) -> str:
    return f"bots/{index}.html"


def index_page(league: League, refresh: int | None = None) -> str:
    s = league.standings
    done = f"{s.matches_done}" + (f" of {s.matches_total}" if s.matches_total is not None else "")
    if s.finished:
        refresh = None  # nothing more will come
    return page(
        "index.html",
        title=f"{league.name}: standings",
        root="",
        refresh=refresh,
        league_name=league.name,
        state="final" if s.finished else "so far",
        done=done,
        format=s.format,
        made=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S"),
        note=s.note,
        headers=_standings_headers(s.format),
        rows=_standings_rows(league),
        head_to_head=_head_to_head(league),
        rating_chart=rating_chart(league.bots, league.history),
        matches=_match_rows(league, league.matches),
    )


def _standings_headers(league_format: str) -> list[str]:
    # The terminal's columns with --all, so the page, the table and the JSON share names.
    return [column.header for column in columns_of(league_format, all_columns=True)]


def _standings_rows(league: League) -> list[dict[str, object]]:
    """A row of the standings per bot, best first, linking to the bot's page."""
    s = league.standings
    bot_index = {name: i for i, name in enumerate(league.bots)}
    columns = columns_of(s.format, all_columns=True)[2:]  # after rank and name
    rows: list[dict[str, object]] = []
    for row in s.rows:
        cells: list[object] = [column.cell(row) for column in columns]
        rows.append(
            {
                "rank": row.rank,
                "name": row.name,
                "href": bot_file(bot_index[row.name]),
                "cells": cells,
            }
        )
    return rows


def _match_rows(league: League, matches: Sequence[StoredMatch]) -> list[dict[str, object]]:
    """The standings' list of matches: each with its places, best first."""
    rows: list[dict[str, object]] = []
    for match in matches:
        order = sorted(match.result.seats, key=lambda seat: (seat.place, seat.seat))
        places = ", ".join(
            f"{seat.place}. {league.bots[match.key.bots[seat.seat]]}"
            + (" (DQ)" if seat.status == "disqualified" else "")
            for seat in order
        )
        rows.append(
            {
                "id": match.key.match_id,
                "href": match_file(match.key.match_id),
                "hands": match.result.hands,
                "reason": match.result.reason,
                "places": places,
            }
        )
    return rows


def _head_to_head(league: League) -> list[dict[str, object]]:
    """Every pair that met: the share of common matches the row bot finished ahead (none: [])."""
    s = league.standings
    names = [row.name for row in s.rows]
    if not any(s.head_to_head.values()):
        return []
    rows: list[dict[str, object]] = []
    for a in names:
        cells = []
        for b in names:
            share, n = s.head_to_head.get(a, {}).get(b, (0.0, 0))
            cells.append("" if a == b or not n else f"{100 * share:.0f}%")
        rows.append({"name": a, "cells": cells})
    return rows


def _fault_hand(hand: int) -> str:
    return f"hand {hand}" if hand > 0 else "before the first hand"


def bot_summary(league: League, index: int) -> str:
    """One paragraph a competitor reads first: where the bot stands and what went wrong."""
    name = league.bots[index]
    row = next(r for r in league.standings.rows if r.name == name)
    kinds: dict[str, int] = {}
    for match in league.matches:
        if index in match.key.bots:
            seat = match.result.seats[match.key.bots.index(index)]
            for fault in seat.faults:
                kinds[fault.kind] = kinds.get(fault.kind, 0) + 1
    place = "-" if row.average_place is None else f"{row.average_place:.2f}"
    faults = plural(row.faults, "fault")
    if kinds:
        faults += " (" + ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items())) + ")"
    return (
        f"Rank {row.rank} of {len(league.bots)} ({_ranks(row.rank_low, row.rank_high)} at 95%), "
        f"score {row.score:+.3f} [{row.score_low:+.3f}, {row.score_high:+.3f}] chips/hand, "
        f"rating {row.rating:.2f} (mu {row.mu:.2f}, sigma {row.sigma:.2f}). "
        f"{plural(row.matches, 'match')}: {plural(row.firsts, 'first place')}, "
        f"average place {place}, net chips {row.net_chips:+d}, "
        f"{plural(row.boodle_chips, 'chip')} won from the boodle, "
        f"{plural(row.hands_won, 'hand')} won. "
        f"{faults}, {plural(row.disqualifications, 'disqualification')}."
    )


def _seat_result(seat: SeatResult) -> list[object]:
    """A seat's end of a match, as the columns chips, net, boodle, won, faults, status."""
    net = f"{seat.net_chips:+d}"
    return [seat.chips, net, seat.boodle_chips, seat.hands_won, len(seat.faults), seat.status]


def bot_page(league: League, index: int, logs: dict[str, MatchLog | None]) -> str:
    name = league.bots[index]
    results: list[dict[str, object]] = []
    plotted: list[tuple[str, int, int, int]] = []
    faults: list[dict[str, object]] = []
    stderr_matches: list[dict[str, str]] = []
    for match in league.matches:
        if index not in match.key.bots:
            continue
        match_id = match.key.match_id
        seat_no = match.key.bots.index(index)
        seat = match.result.seats[seat_no]
        plotted.append((match_id, seat.place, len(match.key.bots), seat.net_chips))
        results.append(_result_row(league, index, match))
        log = logs.get(match_id)
        faults += _fault_rows(match_id, seat_no, seat, log)
        if log is not None and log.stderr.get(seat_no):
            stderr_matches.append({"match_id": match_id, "text": log.stderr[seat_no]})
    return page(
        "bot.html",
        title=f"{name}: bot",
        root="../",
        name=name,
        summary=bot_summary(league, index),
        any_log=any(log is not None for log in logs.values()),
        results_chart=results_chart(plotted) if plotted else None,
        head_to_head=_bot_head_to_head(league, name),
        results=results,
        fault_count=len(faults),
        faults=faults[:MAX_FAULTS_SHOWN],  # a bot that faults on every move: megabytes
        stderr_files=_stderr_files(league, name),
        stderr_matches=stderr_matches[-MAX_STDERR_MATCHES:],
        stderr_matches_total=len(stderr_matches),
    )


def _result_row(league: League, index: int, match: StoredMatch) -> dict[str, object]:
    """One match of a bot's: its opponents, its seat and place, and its end of the result."""
    seat_no = match.key.bots.index(index)
    seat = match.result.seats[seat_no]
    players = len(match.key.bots)
    return {
        "id": match.key.match_id,
        "href": "../" + match_file(match.key.match_id),
        "opponents": [
            {"name": league.bots[other], "href": "../" + bot_file(other)}
            for other in match.key.bots
            if other != index
        ],
        "cells": [seat_no, f"{seat.place} of {players}", *_seat_result(seat)],
    }


def _fault_rows(
    match_id: str, seat_no: int, seat: SeatResult, log: MatchLog | None
) -> list[dict[str, object]]:
    """A seat's faults in one match, each with its wire transcript if the log has it."""
    transcripts = [] if log is None else [t for t in log.transcripts if t.seat == seat_no]
    faults: list[dict[str, object]] = []
    for number, fault in enumerate(seat.faults):
        shown = transcripts[number] if number < len(transcripts) else None
        faults.append(
            {
                "match_id": match_id,
                "href": "../" + match_file(match_id),
                "hand": _fault_hand(fault.hand),
                "kind": fault.kind,
                "detail": pretty_text(fault.detail),
                "transcript": None
                if shown is None
                else "\n".join(f"{mark} {text}" for mark, text in shown.lines),
            }
        )
    return faults


def _stderr_files(league: League, name: str) -> list[dict[str, str]]:
    """The bot's stderr files the league kept, each cut to an excerpt."""
    files: list[dict[str, str]] = []
    for path in stderr_files(league, name):
        try:
            text = path.read_text(errors="replace")
        except OSError as error:
            text = f"(cannot read: {error})"
        files.append({"name": path.name, "text": excerpt(text) or "(empty)"})
    return files


def log_link(log: Path, site: Path) -> str:
    """The link from a match page of the site at ``site`` to the log where the league keeps
    it: the site links logs, never copies them (a 280-match league's copies were 37 MB)."""
    relative = os.path.relpath(log.resolve(), (site / "matches").resolve())
    return urllib.parse.quote(Path(relative).as_posix())


def match_page(
    league: League, match: StoredMatch, log: MatchLog | None, log_href: str | None = None
) -> str:
    """A league's match: links to its bots' pages and to its log (``log_link``)."""
    names = [league.bots[bot] for bot in match.key.bots]
    bot_links = ["../" + bot_file(bot) for bot in match.key.bots]
    return match_view(
        match.key.match_id,
        match.key.seed,
        names,
        match.result,
        log,
        bot_links=bot_links,
        log_href=None if log is None else log_href,
        root="../",
    )


def match_view(
    match_id: str,
    seed: int | None,
    names: Sequence[str],
    result: MatchResult | None,
    log: MatchLog | None,
    *,
    bot_links: Sequence[str] | None,
    log_href: str | None,
    root: str,
    nav: str | None = "Standings",
) -> str:
    """A match's page: its result, whether its log verifies, the replay and the bots' stderr.

    Used for a league's match (``match_page``) and for one log on its own
    (``newmarket view``: no league, so no bot pages and no standings).
    """

    shown_result = None if result is None else _shown_result(result, names, bot_links)
    # A log that cannot be read whole is still replayed as far as it goes, if that is a step.
    replay = None
    if log is not None and (log.error is None or len(log.frames) >= 2):
        replay = page_replay(replay_data(names, log))
    stderr = (
        []
        if log is None
        else [
            {"name": _seat_name(names, seat_no), "text": text}
            for seat_no, text in sorted(log.stderr.items())
        ]
    )
    return page(
        "match.html",
        title=f"match {match_id}",
        root=root,
        nav=nav,
        scripts=["replay.js"] if replay is not None else [],
        match_id=match_id,
        seed=seed,
        result=shown_result,
        log_href=log_href,
        log=log,
        replay=replay,
        stderr=stderr,
    )


def _seat_name(names: Sequence[str], seat: int) -> str:
    return names[seat] if 0 <= seat < len(names) else f"seat {seat}"


def _shown_result(
    result: MatchResult, names: Sequence[str], bot_links: Sequence[str] | None
) -> dict[str, object]:
    """A match's result for its page: the seats in finishing order, linked to their bots."""
    seats = []
    for seat in sorted(result.seats, key=lambda s: (s.place, s.seat)):
        seats.append(
            {
                "place": seat.place,
                "name": _seat_name(names, seat.seat),
                "href": bot_links[seat.seat]
                if bot_links is not None and seat.seat < len(bot_links)
                else None,
                "cells": [seat.seat, *_seat_result(seat)],
            }
        )
    return {
        "hands": result.hands,
        "reason": result.reason,
        "seats": seats,
    }


def replay_data(names: Sequence[str], log: MatchLog) -> dict[str, object]:
    """What the replay viewer (``static/replay.js``) draws from: the seats' names, the
    boodle cards, every card's face and the log's frames.  The server's match page
    (``referee.server.views``) uses it too: one viewer, one data shape."""
    rules = log.header.get("rules") or {}
    boodle = rules.get("boodle_cards", []) if isinstance(rules, dict) else []
    return {
        "names": list(names),
        "boodle_cards": [str(card) for card in boodle],
        "pretty": {card: pretty(card) for card in _all_cards()},
        "frames": [frame.to_json() for frame in log.frames],
    }


def page_replay(data: dict[str, object]) -> dict[str, object]:
    """``replay_data`` as a page carries it: each frame as what changed since the one before
    (``steps``), which ``static/replay.js`` expands back into the frames.

    A frame repeats every hand, the dead hand and the cards played so far: written
    whole, the steps were 80 of a match page's 93 kB, and a league's report as many
    times over as it has matches.  A step keeps the fields that changed, the cards
    played since as ``played+``, and only the seats whose hand changed as ``hands@``.
    """
    frames = cast(list[dict[str, Any]], data["frames"])
    steps: list[dict[str, Any]] = []
    before: dict[str, Any] | None = None
    for frame in frames:
        if before is None:
            steps.append(frame)
            before = frame
            continue
        step: dict[str, Any] = {}
        for key, value in frame.items():
            old = before.get(key)
            if value == old:
                continue
            if key == "played" and isinstance(old, list) and value[: len(old)] == old:
                step["played+"] = value[len(old) :]
            elif key == "hands" and isinstance(old, list) and len(value) == len(old):
                step["hands@"] = {
                    str(seat): hand
                    for seat, (hand, was) in enumerate(zip(value, old, strict=True))
                    if hand != was
                }
            else:
                step[key] = value
        steps.append(step)
        before = frame
    page_data = {key: value for key, value in data.items() if key != "frames"}
    page_data["steps"] = steps
    return page_data


def _all_cards() -> list[str]:
    return [rank + suit for suit in "CDHS" for rank in "23456789TJQKA"]


# -- the standings' uncertainty and head to head (see referee.league.standings)


def _ranks(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}-{high}"


def _bot_head_to_head(league: League, name: str) -> list[dict[str, object]]:
    """One bot's record against each other bot it met, best opponent first."""
    s = league.standings
    record = s.head_to_head.get(name, {})
    return [
        {
            "name": other,
            "href": "../" + bot_file(league.bots.index(other)),
            "matches": n,
            "ahead": f"{100 * share:.0f}%",
            "score": next((f"{r.score:+.3f}" for r in s.rows if r.name == other), ""),
        }
        for other, (share, n) in sorted(record.items(), key=lambda item: item[1][0])
        if n
    ]
