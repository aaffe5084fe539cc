"""The site's three kinds of page: the standings, one per bot, one per match.

File names never come from bots: a bot's page is ``bots/<index>.html`` (its
place in the league file) and a match's ``matches/<match id>.html`` with the
league's own ids, made safe all the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from referee.league.store import StoredMatch
from referee.report.chart import rating_chart
from referee.report.data import League, MatchLog, excerpt, stderr_files
from referee.report.frames import pretty
from referee.report.html import Markup, el, json_script, page

MAX_FAULTS_SHOWN = 100  # a bot that times out on every move would make a page of megabytes
MAX_STDERR_MATCHES = 20


def match_file(match_id: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in match_id)
    return f"matches/{safe}.html"


def bot_file(index: int) -> str:
    return f"bots/{index}.html"


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]], cls: str = "") -> Markup:
    return el(
        "table",
        {"class": cls or None},
        el("thead", None, el("tr", None, [el("th", None, h) for h in headers])),
        el("tbody", None, [el("tr", None, [el("td", None, cell) for cell in row]) for row in rows]),
    )


def index_page(league: League, refresh: int | None = None) -> str:
    s = league.standings
    bot_index = {name: i for i, name in enumerate(league.bots)}
    done = f"{s.matches_done}" + (f" of {s.matches_total}" if s.matches_total is not None else "")
    made = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")
    if s.finished:
        refresh = None  # nothing more will come
    state = "final" if s.finished else "so far"
    headers = ["#", "bot"]
    if s.format == "bankroll":
        headers += ["bankroll", "out"]
    headers += [
        "score",
        "95% interval",
        "ranks",
        "LOS",
        "rating",
        "mu",
        "sigma",
        "games",
        "avg place",
        "1st",
        "net",
        "boodle",
        "won",
        "faults",
        "DQ",
    ]
    rows = []
    for row in s.rows:
        link = el("a", {"href": bot_file(bot_index[row.name]), "class": "bot"}, row.name)
        cells: list[object] = [row.rank, link]
        if s.format == "bankroll":
            cells += [row.bankroll, "-" if row.out_round is None else f"r{row.out_round}"]
        cells += [
            f"{row.score:+.3f}",
            f"[{row.score_low:+.3f}, {row.score_high:+.3f}]",
            _ranks(row.rank_low, row.rank_high),
            "" if row.los_next is None else f"{100 * row.los_next:.0f}%",
            f"{row.rating:.2f}",
            f"{row.mu:.2f}",
            f"{row.sigma:.2f}",
            row.matches,
            "-" if row.average_place is None else f"{row.average_place:.2f}",
            row.firsts,
            f"{row.net_chips:+d}",
            row.boodle_chips,
            row.hands_won,
            row.faults,
            row.disqualifications,
        ]
        rows.append(cells)
    body = el(
        "main",
        None,
        el("h1", None, league.name),
        el(
            "p",
            {"class": "meta"},
            f"Standings {state}: {done} matches ({s.format}). Made {made} UTC"
            + (f", reloads every {refresh} s while the league runs." if refresh else "."),
        ),
        el("p", {"class": "note"}, s.note) if s.note else None,
        _table(headers, rows, "standings"),
        el(
            "p",
            {"class": "meta"},
            "score = chips per hand above the league's average bot, compared seat by seat with "
            "the bots that held the same cards (a batch fit over every match, so the order they "
            "were played in does not matter); 95% interval and ranks from a bootstrap over "
            "rotation groups; LOS = the likelihood of being stronger than the next bot down. "
            "rating = mu - 3 sigma (openskill Plackett-Luce, updated match by match), for "
            "comparison. The same numbers as newmarket standings; see docs/fidelity.md.",
        ),
        el("h2", None, "Head to head"),
        head_to_head_table(league),
        el("h2", None, "Ratings over the league"),
        rating_chart(league.bots, league.history),
        el("h2", None, "Matches"),
        _match_list(league, league.matches),
    )
    return page(f"{league.name}: standings", body, root="", refresh=refresh)


def _match_list(league: League, matches: Sequence[StoredMatch], root: str = "") -> Markup:
    rows = []
    for match in matches:
        order = sorted(match.result.seats, key=lambda seat: (seat.place, seat.seat))
        places = ", ".join(
            f"{seat.place}. {league.bots[match.key.bots[seat.seat]]}"
            + (" (DQ)" if seat.status == "disqualified" else "")
            for seat in order
        )
        rows.append(
            [
                el("a", {"href": root + match_file(match.key.match_id)}, match.key.match_id),
                match.result.hands,
                match.result.reason,
                places,
            ]
        )
    return _table(["match", "hands", "ended", "places"], rows, "matches")


def bot_page(league: League, index: int, logs: dict[str, MatchLog | None]) -> str:
    name = league.bots[index]
    row = next(r for r in league.standings.rows if r.name == name)
    results = []
    faults: list[Markup] = []
    stderr_parts: list[Markup] = []
    for match in league.matches:
        if index not in match.key.bots:
            continue
        seat_no = match.key.bots.index(index)
        seat = match.result.seats[seat_no]
        link = el("a", {"href": "../" + match_file(match.key.match_id)}, match.key.match_id)
        results.append(
            [
                link,
                seat_no,
                seat.place,
                seat.chips,
                f"{seat.net_chips:+d}",
                seat.boodle_chips,
                seat.hands_won,
                len(seat.faults),
                "disqualified" if seat.status == "disqualified" else seat.status,
            ]
        )
        log = logs.get(match.key.match_id)
        transcripts = [] if log is None else [t for t in log.transcripts if t.seat == seat_no]
        for number, fault in enumerate(seat.faults):
            shown = transcripts[number] if number < len(transcripts) else None
            lines = (
                el(
                    "pre",
                    {"class": "transcript"},
                    "\n".join(f"{mark} {text}" for mark, text in shown.lines),
                )
                if shown is not None
                else el("p", {"class": "meta"}, "no match log: no transcript")
            )
            faults.append(
                el(
                    "div",
                    {"class": "fault"},
                    el("h3", None, link, f" · hand {fault.hand} · {fault.kind}"),
                    el("p", None, fault.detail),
                    lines,
                )
            )
        if log is not None and log.stderr.get(seat_no):
            stderr_parts.append(
                el(
                    "details",
                    None,
                    el("summary", None, f"during {match.key.match_id}"),
                    el("pre", {"class": "stderr"}, log.stderr[seat_no]),
                )
            )
    shown_faults = faults[:MAX_FAULTS_SHOWN]
    if len(faults) > MAX_FAULTS_SHOWN:
        shown_faults.append(
            el(
                "p",
                {"class": "meta"},
                f"... and {len(faults) - MAX_FAULTS_SHOWN} more faults, "
                "listed in the results above and told in each match's replay",
            )
        )
    recent_stderr = stderr_parts[-MAX_STDERR_MATCHES:]
    if len(stderr_parts) > MAX_STDERR_MATCHES:
        recent_stderr.insert(
            0,
            el(
                "p",
                {"class": "meta"},
                f"The last {MAX_STDERR_MATCHES} matches with stderr; "
                "each match page shows its own.",
            ),
        )
    files: list[Markup] = []
    for path in stderr_files(league, name):
        try:
            text = path.read_text(errors="replace")
        except OSError as error:
            text = f"(cannot read: {error})"
        files.append(
            el(
                "details",
                {"open": True} if not files else None,
                el("summary", None, f"{path.name} (the whole session of one table worker)"),
                el("pre", {"class": "stderr"}, excerpt(text) or "(empty)"),
            )
        )
    any_log = any(log is not None for log in logs.values())
    no_logs = el(
        "p",
        {"class": "meta"},
        "This league kept no match logs (league.logs = false, or they were moved: pass "
        "--logs DIR), so there is no transcript or stderr to show; the faults are those "
        "stored in the database.",
    )
    body = el(
        "main",
        None,
        el("h1", None, name),
        el(
            "p",
            {"class": "meta"},
            f"rank {row.rank} ({_ranks(row.rank_low, row.rank_high)} at 95%) · "
            f"score {row.score:+.3f} [{row.score_low:+.3f}, {row.score_high:+.3f}] chips/hand · "
            f"rating {row.rating:.2f} (mu {row.mu:.2f}, sigma {row.sigma:.2f}) "
            f"· {row.matches} matches · {row.faults} faults · {row.disqualifications} "
            "disqualifications",
        ),
        None if any_log else no_logs,
        el("h2", None, "Head to head"),
        head_to_head_rows(league, name),
        el("h2", None, "Results"),
        _table(
            ["match", "seat", "place", "chips", "net", "boodle", "won", "faults", "status"],
            results,
            "results",
        ),
        el("h2", None, f"Faults ({len(faults)})"),
        shown_faults or el("p", {"class": "meta"}, "none"),
        el("h2", None, "stderr"),
        el("p", {"class": "meta"}, "What the bot wrote to its standard error (head and tail)."),
        files,
        recent_stderr,
        None if files or stderr_parts else el("p", {"class": "meta"}, "nothing kept"),
    )
    return page(f"{name}: bot", body, root="../")


def match_page(league: League, match: StoredMatch, log: MatchLog | None) -> str:
    names = [league.bots[bot] for bot in match.key.bots]
    rows = []
    for seat in sorted(match.result.seats, key=lambda s: (s.place, s.seat)):
        bot = match.key.bots[seat.seat]
        rows.append(
            [
                seat.place,
                el("a", {"href": "../" + bot_file(bot)}, names[seat.seat]),
                seat.seat,
                seat.chips,
                f"{seat.net_chips:+d}",
                seat.boodle_chips,
                seat.hands_won,
                len(seat.faults),
                seat.status,
            ]
        )
    result = _table(
        ["place", "bot", "seat", "chips", "net", "boodle", "won", "faults", "status"],
        rows,
        "result",
    )
    parts: list[object] = [
        el("h1", None, f"Match {match.key.match_id}"),
        el(
            "p",
            {"class": "meta"},
            f"seed {match.key.seed} · {match.result.hands} hands · ended: {match.result.reason}",
        ),
        result,
    ]
    if log is None:
        parts.append(el("p", {"class": "meta"}, "No log was kept for this match: no replay."))
        return page(f"match {match.key.match_id}", el("main", None, parts), root="../")
    if log.error is not None:
        parts.append(el("p", {"class": "warning"}, f"The log cannot be read whole: {log.error}"))
        if len(log.frames) < 2:  # nothing to step through
            return page(f"match {match.key.match_id}", el("main", None, parts), root="../")
    elif log.verified is not None:
        parts.append(
            el(
                "p",
                {"class": "warning"},
                f"This log does not verify against the engine: {log.verified}",
            )
        )
    else:
        parts.append(
            el(
                "p",
                {"class": "meta"},
                "The log verifies: the engine, replayed from its decisions, agrees "
                "with every line.",
            )
        )
    rules = log.header.get("rules") or {}
    boodle = (
        [str(card) for card in rules.get("boodle_cards", [])] if isinstance(rules, dict) else []
    )
    data = {
        "names": names,
        "boodle_cards": boodle,
        "pretty": {card: pretty(card) for card in _all_cards()},
        "frames": [frame.to_json() for frame in log.frames],
    }
    viewer = el(
        "section",
        {"id": "replay", "tabindex": "0"},
        el("h2", None, "Replay"),
        el(
            "div",
            {"class": "controls"},
            el("button", {"type": "button", "id": "first"}, "« start"),
            el("button", {"type": "button", "id": "prev-hand"}, "‹ hand"),
            el("button", {"type": "button", "id": "prev"}, "‹ back"),
            el("span", {"id": "position"}),
            el("button", {"type": "button", "id": "next"}, "next ›"),
            el("button", {"type": "button", "id": "next-hand"}, "hand ›"),
            el("button", {"type": "button", "id": "last"}, "end »"),
        ),
        el("p", {"class": "meta"}, "Keys: ← → step, Page Up / Page Down a hand, Home / End."),
        el("div", {"id": "what"}),
        el("div", {"id": "table"}),
        el("div", {"id": "layout"}),
        json_script("match-data", data),
    )
    parts.append(viewer)
    if log.stderr:
        parts.append(el("h2", None, "stderr during this match"))
        for seat_no, text in sorted(log.stderr.items()):
            who = names[seat_no] if 0 <= seat_no < len(names) else f"seat {seat_no}"
            parts.append(
                el("details", None, el("summary", None, who), el("pre", {"class": "stderr"}, text))
            )
    return page(
        f"match {match.key.match_id}", el("main", None, parts), root="../", scripts=["replay.js"]
    )


def _all_cards() -> list[str]:
    return [rank + suit for suit in "CDHS" for rank in "23456789TJQKA"]


# -- the standings' uncertainty and head to head (see referee.league.standings)


def _ranks(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}-{high}"


def head_to_head_table(league: League) -> Markup:
    """Every pair that met: the share of common matches the row bot finished ahead."""
    s = league.standings
    names = [row.name for row in s.rows]
    if not any(s.head_to_head.values()):
        return el("p", {"class": "meta"}, "no matches yet")
    rows = []
    for number, a in enumerate(names, start=1):
        cells: list[object] = [f"{number}. {a}"]
        for b in names:
            share, n = s.head_to_head.get(a, {}).get(b, (0.0, 0))
            cells.append("" if a == b or not n else f"{100 * share:.0f}%")
        rows.append(cells)
    headers = ["row ahead of column", *(str(n) for n in range(1, len(names) + 1))]
    return el(
        "div",
        {"class": "wide"},
        _table(headers, rows, "head-to-head"),
        el("p", {"class": "meta"}, "Share of the matches both bots played, ties counting half."),
    )


def head_to_head_rows(league: League, name: str) -> Markup:
    """One bot's record against each other bot it met, best opponent first."""
    s = league.standings
    record = s.head_to_head.get(name, {})
    rows = [
        [
            el("a", {"href": "../" + bot_file(league.bots.index(other))}, other),
            n,
            f"{100 * share:.0f}%",
            next((f"{r.score:+.3f}" for r in s.rows if r.name == other), ""),
        ]
        for other, (share, n) in sorted(record.items(), key=lambda item: item[1][0])
        if n
    ]
    if not rows:
        return el("p", {"class": "meta"}, "no common matches yet")
    return _table(["opponent", "common matches", "finished ahead", "their score"], rows, "h2h")
