"""Standings: a pure function of the stored matches, printed for people or machines.

Everything is recomputed from the database on every call, so ``newmarket
standings`` shows the same numbers during a league, after a crash, or a year
later, and there is no second copy of the truth to drift.  Matches are
always taken in schedule order, which the ratings need
(``referee.scoring.ratings``).  The fit reads the matches once into per-layout
summaries (``referee.scoring.summary``), and its bootstrap draws over those.

Round robin standings sort by ``score``: each bot's strength in chips per
hand, fitted in one batch to the duplicate chips scores of every match
(``referee.scoring``), so the order the matches were played in cannot move
it.  Beside it: the score's 95% interval and the rank's, both from a
bootstrap over rotation groups (the independent units of a duplicate
league), and the likelihood of superiority (LOS) over the next bot down.
openskill's online rating (``mu``, ``sigma``, ``rating``) is kept for
comparison, not as the sort key: it updates match by match, so a different
order of the same matches gives a different ranking.  Bankroll standings sort
by the bankroll ranking (survivors by chips, then the round each bot went out
in).

The table shows one ranking and how sure it is (``columns_of``), with a
legend of its columns under it; ``--all`` adds the places, the chips and the
rating, and ``--json`` and ``--csv`` always hold every field.  A column's
header is its field's words (``hands won`` for ``hands_won``), so a reader
of the table finds the same name in the JSON.

The head-to-head table gives, for every pair that met, the share of their
common matches the row bot finished ahead of the column bot (ties half) and
how many matches that is.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from referee.league import bankroll
from referee.league.league_db import LeagueStore, StoredMatch
from referee.league.schedule import ScheduledMatch, ScheduleError, build_schedule
from referee.league.standings_tally import (
    EVERY,
    TALLY_SUFFIX,
    Tally,
    finished_prefix,
    finishes_ahead,
    fit_match,
    group_ends,
    load,
)
from referee.league.standings_tally import order as schedule_order
from referee.league.standings_tally import save as save_tally
from referee.match.dealkey import DealKey
from referee.scoring.duplicate import GroupMatch
from referee.scoring.summary import FitSummary


@dataclasses.dataclass
class StandingRow:
    rank: int
    name: str
    matches: int = 0
    average_place: float | None = None
    firsts: int = 0
    net_chips: int = 0
    boodle_chips: int = 0
    hands_won: int = 0
    faults: int = 0
    disqualifications: int = 0
    mu: float = 0.0
    sigma: float = 0.0
    rating: float = 0.0  # the conservative estimate, mu - 3 sigma
    bankroll: int | None = None  # bankroll format only
    out_round: int | None = None  # bankroll format: the round the bot went out in
    score: float = 0.0  # fitted strength, chips per hand above the league's average bot
    score_low: float = 0.0  # its 95% interval (bootstrap over rotation groups)
    score_high: float = 0.0
    rank_low: int = 0  # the 95% interval of its rank
    rank_high: int = 0
    los: float | None = None  # likelihood of being stronger than the next bot down

    def to_json(self) -> dict[str, object]:
        row = dataclasses.asdict(self)
        for key in ("average_place", "mu", "sigma", "rating", "score", "score_low", "score_high"):
            if row[key] is not None:
                row[key] = round(row[key], 4)
        return row


@dataclasses.dataclass
class Standings:
    league: str
    format: str
    matches_done: int
    matches_total: int | None  # None while a bankroll league is still running
    finished: bool
    rows: list[StandingRow]
    note: str = ""
    # head_to_head[a][b] = (share of common matches a finished ahead of b, matches)
    head_to_head: dict[str, dict[str, tuple[float, int]]] = dataclasses.field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "league": self.league,
            "format": self.format,
            "matches_done": self.matches_done,
            "matches_total": self.matches_total,
            "finished": self.finished,
            "note": self.note,
            "standings": [row.to_json() for row in self.rows],
            "head_to_head": {
                a: {b: {"ahead": round(share, 4), "matches": n} for b, (share, n) in row.items()}
                for a, row in self.head_to_head.items()
            },
        }

    def to_csv(self) -> str:
        out = io.StringIO()
        fields = [field.name for field in dataclasses.fields(StandingRow)]
        writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for row in self.rows:
            writer.writerow({k: "" if v is None else v for k, v in row.to_json().items()})
        return out.getvalue()

    def table(self, *, all_columns: bool = False) -> RenderableType:
        """The standings and their legend, then the head-to-head table when any pair has met."""
        # The legend is a line of its own under the table: a terminal wraps it at the
        # window's width, a file or a pipe keeps it one line (a caption would be wrapped
        # to the table's width, a narrow bankroll table's in four short lines).
        parts: list[RenderableType] = [
            self.standings_table(all_columns=all_columns),
            Text(self.legend(all_columns)),
        ]
        h2h = self.head_to_head_table()
        if h2h is not None:
            parts += [Text(""), h2h]
        return Group(*parts)

    def head_to_head_table(self) -> Table | None:
        if not any(self.head_to_head.values()):
            return None
        names = [row.name for row in self.rows]
        table = Table(
            title="head to head",
            caption="share of common matches the row bot finished ahead of the column bot",
            caption_justify="left",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
        )
        table.add_column("", no_wrap=True)
        for number in range(1, len(names) + 1):
            table.add_column(str(number), justify="right", no_wrap=True)
        for number, a in enumerate(names, start=1):
            cells = [f"{number} {a}"]
            for b in names:
                share, n = self.head_to_head.get(a, {}).get(b, (0.0, 0))
                cells.append("" if a == b or not n else f"{100 * share:.0f}%")
            table.add_row(*cells)
        return table

    def columns(self, *, all_columns: bool = False) -> list[Column]:
        """The columns the table shows: the ranking and its interval, or with ``all_columns``
        every field of ``to_json``."""
        return columns_of(self.format, all_columns=all_columns)

    def standings_table(self, *, all_columns: bool = False) -> Table:
        done = f"{self.matches_done}" + (
            f" of {self.matches_total}" if self.matches_total is not None else ""
        )
        state = "final" if self.finished else "so far"
        title = f"{self.league}: standings {state} ({done} matches)"
        table = Table(
            title=title,
            caption=self.note or None,
            box=box.SIMPLE_HEAD,
            pad_edge=False,
            caption_justify="left",
        )
        shown = self.columns(all_columns=all_columns)
        for column in shown:
            table.add_column(column.header, justify=column.justify, no_wrap=True)
        for row in self.rows:
            # As text, never markup: a name or an interval's brackets are printed as they are.
            table.add_row(*(Text(column.cell(row)) for column in shown))
        return table

    def legend(self, all_columns: bool = False) -> str:
        """What the columns shown mean, for under the table."""
        shown = self.columns(all_columns=all_columns)
        text = "; ".join(f"{column.header}: {column.meaning}" for column in shown if column.meaning)
        if not all_columns:
            more = "matches, places, chips and openskill's rating"
            text += f". --all adds {'the score, ' if self.format == 'bankroll' else ''}{more}"
        return text + "."


# ---------------------------------------------------------------- the columns


@dataclasses.dataclass(frozen=True)
class Column:
    """One column of the standings table: its header, the JSON and CSV fields it shows
    (a header's words are its field's, ``average place`` for ``average_place``; an
    interval shows two fields), how a row's cell reads, and what it means."""

    header: str
    fields: tuple[str, ...]
    cell: Callable[[StandingRow], str]
    meaning: str = ""
    justify: Literal["left", "right"] = "right"


def _ranks(row: StandingRow) -> str:
    if row.rank_low == row.rank_high:
        return str(row.rank_low)
    return f"{row.rank_low}-{row.rank_high}"


RANK = Column("rank", ("rank",), lambda row: str(row.rank))
NAME = Column("name", ("name",), lambda row: row.name, justify="left")
BANKROLL = Column(
    "bankroll",
    ("bankroll",),
    lambda row: str(row.bankroll),
    "chips kept from table to table",
)
OUT_ROUND = Column(
    "out round",
    ("out_round",),
    lambda row: "-" if row.out_round is None else f"r{row.out_round}",
    "the round it went out in",
)
SCORE = Column(
    "score",
    ("score",),
    lambda row: f"{row.score:+.3f}",
    "chips per hand above the average bot, on the same cards",
)
INTERVAL = Column(
    "95% interval",
    ("score_low", "score_high"),
    lambda row: f"[{row.score_low:+.3f}, {row.score_high:+.3f}]",
    "of the score",
)
RANKS = Column(
    "ranks",
    ("rank_low", "rank_high"),
    _ranks,
    "of the rank",
)
LOS = Column(
    "LOS",
    ("los",),
    lambda row: "" if row.los is None else f"{100 * row.los:.0f}%",
    "chance it is stronger than the next bot down",
)
RATING = Column(
    "rating",
    ("rating",),
    lambda row: f"{row.rating:.2f}",
    "openskill's, from places (mu - 3 sigma), for comparison",
)
MU = Column("mu", ("mu",), lambda row: f"{row.mu:.2f}")
SIGMA = Column("sigma", ("sigma",), lambda row: f"{row.sigma:.2f}")
MATCHES = Column("matches", ("matches",), lambda row: str(row.matches))
AVERAGE_PLACE = Column(
    "average place",
    ("average_place",),
    lambda row: "-" if row.average_place is None else f"{row.average_place:.2f}",
)
FIRSTS = Column("firsts", ("firsts",), lambda row: str(row.firsts))
NET_CHIPS = Column("net chips", ("net_chips",), lambda row: f"{row.net_chips:+d}")
BOODLE_CHIPS = Column("boodle chips", ("boodle_chips",), lambda row: str(row.boodle_chips))
HANDS_WON = Column("hands won", ("hands_won",), lambda row: str(row.hands_won))
FAULTS = Column("faults", ("faults",), lambda row: str(row.faults))
DISQUALIFICATIONS = Column(
    "disqualifications", ("disqualifications",), lambda row: str(row.disqualifications)
)


def columns_of(fmt: str, *, all_columns: bool = False) -> list[Column]:
    """The columns of a league of format ``fmt``, most important first.

    By default one ranking and how sure it is: the chips score with its
    intervals (a bankroll league: the bankroll), and the faults, the sign of a
    broken bot; it fits 80 columns with names of 15 characters.  ``all_columns``
    adds the matches, places, chips and openskill's rating, a second ranking that
    would disagree with the first beside it.  On a narrow
    terminal ``print_whole`` leaves out columns from the right: the last here
    matter least.
    """
    if fmt == "bankroll":
        ranking = [BANKROLL, OUT_ROUND]
        if all_columns:
            ranking += [SCORE, INTERVAL, RANKS, LOS]
    else:
        ranking = [SCORE, INTERVAL, RANKS, LOS]
    if not all_columns:
        return [RANK, NAME, *ranking, FAULTS]
    return [
        RANK,
        NAME,
        *ranking,
        RATING,
        MU,
        SIGMA,
        MATCHES,
        AVERAGE_PLACE,
        FIRSTS,
        NET_CHIPS,
        BOODLE_CHIPS,
        HANDS_WON,
        FAULTS,
        DISQUALIFICATIONS,
    ]


_UNKNOWN = -1  # compute's ``total`` when the caller does not know it


def compute(
    identity: Mapping[str, Any],
    names: Sequence[str],
    stored: Sequence[StoredMatch],
    title: str = "league",
    deals: DealKey | None = None,
    tally: Tally | None = None,
    total: int | None = _UNKNOWN,
) -> Standings:
    """The standings of a league after ``stored`` matches.

    ``identity`` is the stored one with its seed resolved
    (``LeagueStore.resolved_identity``); a bankroll league also needs its
    ``deals`` (``LeagueStore.deal_key``): its rounds are seated by who dealt first.
    ``tally``: the sums of the matches before ``stored`` (a round robin's saved
    prefix, ``referee.league.standings_tally``); it goes on with ``stored``.
    ``total``: a round robin's number of matches, if known (else its schedule is built).
    """
    league = identity["league"]
    fmt = str(league["format"])
    ordered = sorted(stored, key=schedule_order)
    if tally is None:
        tally = Tally(list(names))
    elif fmt == "bankroll":
        raise ValueError("a bankroll league's standings replay every match")
    tally.extend(ordered)
    rows = {name: StandingRow(rank=0, name=name) for name in names}
    for name, row in rows.items():
        counts = tally.counts.get(name)
        if counts:
            (
                row.matches,
                row.firsts,
                row.net_chips,
                row.boodle_chips,
                row.hands_won,
                row.faults,
                row.disqualifications,
            ) = counts
            row.average_place = tally.place_sum[name] / row.matches
        rating = tally.ratings[name]
        row.mu, row.sigma = rating.mu, rating.sigma
        row.rating = rating.conservative
    fitted = tally.summary.bootstrap(list(range(len(names))))
    for bot, name in enumerate(names):
        row = rows[name]
        row.score, row.score_low, row.score_high = (
            fitted.strength[bot],
            fitted.low[bot],
            fitted.high[bot],
        )
        row.rank_low, row.rank_high = fitted.rank_low[bot], fitted.rank_high[bot]
    if fmt == "bankroll":
        if deals is None:
            raise ValueError("the standings of a bankroll league need its deal key")
        params = bankroll.params_from_identity(identity, len(names), deals)
        state = bankroll.replay(params, ordered)
        order = [names[bot] for bot in bankroll.ranking(state)]
        for bot, name in enumerate(names):
            rows[name].bankroll = state.bankrolls[bot]
            rows[name].out_round = state.out_round[bot]
        total = len(ordered) if state.finished else None
        finished = state.finished
        note = _bankroll_note(state, len(names))
    else:
        order = sorted(
            names,
            key=lambda n: (
                -round(rows[n].score, 9),
                rows[n].average_place if rows[n].average_place is not None else 99.0,
                n,
            ),
        )
        if total == _UNKNOWN:
            total = _round_robin_total(identity, len(names))
        finished = total is not None and tally.matches >= total
        note = ""
    ranked = [rows[name] for name in order]
    index = {name: bot for bot, name in enumerate(names)}
    for rank, row in enumerate(ranked, start=1):
        row.rank = rank
        if rank < len(ranked) and fitted.resamples:
            row.los = fitted.los(index[row.name], index[ranked[rank].name])
    return Standings(
        league=title,
        format=fmt,
        matches_done=tally.matches,
        matches_total=total,
        finished=finished,
        rows=ranked,
        note=note,
        head_to_head=_head_to_head_table(names, tally.points, tally.met),
    )


def fit_summary(ordered: Sequence[StoredMatch]) -> FitSummary:
    """The fit's summary of every group: the matches that share a deal seed and a table.

    With duplicate deals a table's rotations share one seed and form one
    group; without, every match is its own group.  Groups are added in the
    order of their first match in ``ordered``, the order the bootstrap's
    draws of groups follow while a league is small.  The standings fold the
    same through ``Tally``; this and ``head_to_head`` time each part alone
    (``benchmarks/fit.py --standings``).
    """
    groups: dict[tuple[int, tuple[int, ...]], list[GroupMatch[int]]] = {}
    for match in ordered:
        label, group_match = fit_match(match)
        groups.setdefault(label, []).append(group_match)
    summary = FitSummary()
    for position, (label, matches) in enumerate(groups.items()):
        summary.add_group(label, matches, order=position)
    return summary


def head_to_head(
    names: Sequence[str], ordered: Sequence[StoredMatch]
) -> dict[str, dict[str, tuple[float, int]]]:
    """For every pair that shared a table: the row bot's share of finishes ahead, and the count."""
    points: dict[tuple[str, str], float] = {}
    met: dict[tuple[str, str], int] = {}
    for match in ordered:
        for pair, share in finishes_ahead(names, match):
            met[pair] = met.get(pair, 0) + 1
            points[pair] = points.get(pair, 0.0) + share
    return _head_to_head_table(names, points, met)


def _head_to_head_table(
    names: Sequence[str],
    points: Mapping[tuple[str, str], float],
    met: Mapping[tuple[str, str], int],
) -> dict[str, dict[str, tuple[float, int]]]:
    """The table from its sums: for each pair that met, the share of finishes ahead and count."""
    table: dict[str, dict[str, tuple[float, int]]] = {name: {} for name in names}
    for (a, b), n in met.items():
        table[a][b] = (points[(a, b)] / n, n)
    return table


def standings_of(store: LeagueStore, *, save: bool = True) -> Standings:
    """The standings of the league in ``store``, as they are now.

    A round robin's are folded on from the tally saved beside the database
    (``referee.league.standings_tally``), reading only the matches after it;
    ``save``: write a new one once the finished prefix has grown by ``EVERY``.
    """
    identity, names = store.resolved_identity(), store.bot_names()
    deals = store.deal_key()
    if str(identity["league"]["format"]) == "bankroll" or deals.is_public:
        return compute(identity, names, store.matches(), store.name(), deals)
    secret = hashlib.sha256(b"newmarket/standings-tally/" + deals.to_text().encode()).digest()
    path = store.path.with_name(store.path.name + TALLY_SUFFIX)
    tally = load(path, secret, names)
    if (
        tally is not None
        and tally.last is not None
        and store.count_upto(tally.last) != tally.matches
    ):
        tally = None  # the database lacks some of its matches: an older copy, restored
    done = tally.matches if tally else 0
    new = store.count() - done  # the tally's are the first ``done`` matches (checked above)
    # Building the schedule costs more than folding a few thousand matches: skipped while the
    # tally knows the total and too few matches came since it for a new one to be saved.
    schedule = None
    total = tally.total if tally is not None else _UNKNOWN
    if total == _UNKNOWN or (save and new >= EVERY):
        schedule = _schedule(identity, len(names))
        total = None if schedule is None else len(schedule)
    try:
        if save and schedule is not None:
            cut = finished_prefix(schedule, store.finished_ids())
            if cut - done >= EVERY:
                tally = tally or Tally(list(names), total=total)
                ordered = sorted(schedule, key=lambda m: m.index)
                # A run of whole groups at a time, never every match in memory at once.
                for end in group_ends(ordered, done, cut, EVERY):
                    upto = ordered[end - 1]
                    run = store.matches(tally.last, (upto.cycle, upto.index, upto.match_id))
                    tally.extend(run)  # store.matches gives the schedule's order
                tally.total = total
                save_tally(path, secret, tally)
        rest = store.matches(after=tally.last if tally else None)  # compute sorts
        return compute(identity, names, rest, store.name(), deals, tally, total)
    except ValueError:  # a group met again after the prefix (``Tally.extend``): fold every match
        return compute(identity, names, store.matches(), store.name(), deals)


def _schedule(identity: Mapping[str, Any], bots: int) -> list[ScheduledMatch] | None:
    league, schedule = identity["league"], identity["schedule"]
    try:
        return build_schedule(
            bots,
            int(league["table_size"]),
            int(league["seed"]),
            kind=str(schedule["kind"]),
            duplicate=bool(schedule["duplicate"]),
            cycles=int(schedule["cycles"]),
            meetings=int(schedule["meetings"]),
            round_robin_limit=int(schedule["round_robin_limit"]),
            candidates=int(schedule.get("candidates", 0)),
        )
    except ScheduleError:
        return None


def _round_robin_total(identity: Mapping[str, Any], bots: int) -> int | None:
    schedule = _schedule(identity, bots)
    return None if schedule is None else len(schedule)


def _bankroll_note(state: bankroll.BankrollState, bots: int) -> str:
    survivors = len(state.survivors)
    if not state.finished:
        return f"round {state.rounds_played + 1} in progress; {survivors} of {bots} bots left"
    why = {
        "survivors": "the rules' survivors are left",
        "no_table": "too few survivors to fill a table",
        "max_rounds": "the round limit was reached",
    }.get(state.reason, state.reason)
    return f"finished after {state.rounds_played} rounds: {why}; {survivors} survivors"
