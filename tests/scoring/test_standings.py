"""League standings with uncertainty: intervals, ranks, LOS, head to head, in every output.

The league here is synthetic (``tests/league/results.py``): duplicate groups
of three rotations sharing a seed, with chips that make bot 0 the strongest
and bot 3 the weakest by a known margin, plus seat luck that the duplicate
comparison must cancel.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import random
from pathlib import Path

import msgspec
import pytest
from rich.console import Console

from referee.league.league_db import StoredMatch
from referee.league.standings import compute
from referee.report.data import League, rating_history
from referee.report.pages import bot_page, index_page
from referee.scoring.duplicate import GroupMatch
from referee.scoring.fit import equations
from referee.scoring.intervals import bootstrap
from tests.league.results import key, result
from tests.league.test_store import config_of

NAMES = ["ace", "bea", "cy", "dot"]
SKILL = [3, 1, -1, -3]  # chips per match above the average, by bot


def league(seed: int = 0, order: list[int] | None = None) -> list[StoredMatch]:
    """Every table of 3 of the 4 bots, every rotation, in the given order of tables."""
    rng = random.Random(seed)
    stored: list[StoredMatch] = []
    tables = list(itertools.combinations(range(4), 3)) * 3
    for number in order if order is not None else range(len(tables)):
        table = tables[number]
        luck = [rng.randint(-20, 20) for _ in range(3)]  # what each seat's cards are worth
        luck = [x - sum(luck) // 3 for x in luck]
        for rotation in range(3):
            bots = [table[(seat + rotation) % 3] for seat in range(3)]
            chips = [40 + luck[s] + SKILL[bots[s]] + rng.randint(-1, 1) for s in range(3)]
            ranked = sorted(range(3), key=lambda s: -chips[s])
            places = [ranked.index(s) + 1 for s in range(3)]
            match_id = f"t{number}-r{rotation}"
            stored.append(
                StoredMatch(
                    key(match_id, bots, ordinal=len(stored), seed=1000 + number),
                    result(match_id, [NAMES[b] for b in bots], places, chips, seed=1000 + number),
                )
            )
    return stored


def test_the_true_order_with_intervals_that_separate_it(tmp_path: Path) -> None:
    standings = compute(config_of(tmp_path).identity(), NAMES, league(), "cup")
    rows = standings.rows
    assert [row.name for row in rows] == NAMES
    for row in rows:
        assert row.score_low <= row.score <= row.score_high
        assert 1 <= row.rank_low <= row.rank <= row.rank_high <= 4
    # 3 chips a match over 10 hands apart, seat luck of +-20 cancelled: clear gaps.
    assert rows[0].rank_low == rows[0].rank_high == 1
    assert rows[0].los is not None and rows[0].los > 0.95
    assert rows[-1].los is None
    assert abs(sum(row.score for row in rows)) < 1e-9  # strengths are relative to the average
    share, common = standings.head_to_head["ace"]["dot"]
    assert common == 2 * 3 * 3 and share > 0.5  # ace and dot share 2 tables x 3 rotations x 3


def test_the_ranking_does_not_depend_on_the_order_matches_were_played(tmp_path: Path) -> None:
    identity = config_of(tmp_path).identity()
    forward = compute(identity, NAMES, league(seed=5))
    shuffled_order = list(range(12))
    random.Random(9).shuffle(shuffled_order)
    # The same matches (same seeds, same chips) scheduled in another order.
    by_id = {m.key.match_id: m.result for m in league(seed=5)}
    reordered = [
        StoredMatch(
            key(
                m.key.match_id,
                list(m.key.bots),
                ordinal=position,
                seed=m.key.seed,
            ),
            by_id[m.key.match_id],
        )
        for position, m in enumerate(
            sorted(
                league(seed=5),
                key=lambda m: shuffled_order.index(int(m.key.match_id[1:].split("-")[0])),
            )
        )
    ]
    backward = compute(identity, NAMES, reordered)
    assert [r.name for r in forward.rows] == [r.name for r in backward.rows]
    for a, b in zip(forward.rows, backward.rows, strict=True):
        assert abs(a.score - b.score) < 1e-9
    # openskill's online rating, fed the other order, does move.
    assert any(abs(a.mu - b.mu) > 1e-6 for a, b in zip(forward.rows, backward.rows, strict=True))


def test_json_csv_terminal_and_report_show_the_intervals_and_head_to_head(tmp_path: Path) -> None:
    identity = config_of(tmp_path).identity()
    stored = league()
    standings = compute(identity, NAMES, stored, "cup")
    data = json.loads(json.dumps(standings.to_json()))
    first = data["standings"][0]
    assert {"score", "score_low", "score_high", "rank_low", "rank_high", "los"} <= set(first)
    assert data["head_to_head"]["ace"]["bea"]["matches"] == 9 * 2
    rows = list(csv.DictReader(io.StringIO(standings.to_csv())))
    assert rows[0]["name"] == "ace" and float(rows[0]["score_low"]) > 0
    out = io.StringIO()
    Console(file=out, width=250).print(standings.table())
    text = out.getvalue()
    assert "95% interval" in text and "LOS" in text and "head to head" in text
    site = League(
        tmp_path / "x.db", "cup", NAMES, stored, standings, rating_history(NAMES, stored), None
    )
    index = index_page(site)
    assert "Head to head" in index and f"{standings.rows[0].score:+.3f}" in index
    page = bot_page(site, 0, {})
    assert "Head to head" in page and 'href="../bots/3.html"' in page


def test_a_bot_disqualified_everywhere_ranks_last_whatever_its_seat_won(tmp_path: Path) -> None:
    # After a disqualification the referee's default policy plays the seat; here it wins
    # more chips than any bot (as it can against weak bots), yet the bot never played:
    # places put it below every seat not disqualified (SPEC.md 10.9), and so must the score.
    stored = []
    for match in league():
        seats = [
            msgspec.structs.replace(
                seat,
                status="disqualified",
                net_chips=seat.net_chips + 30,
                chips=seat.chips + 30,
            )
            if seat.name == "ace"
            else seat
            for seat in match.result.seats
        ]
        stored.append(StoredMatch(match.key, msgspec.structs.replace(match.result, seats=seats)))
    standings = compute(config_of(tmp_path).identity(), NAMES, stored, "cup")
    assert [row.name for row in standings.rows][-1] == "ace"
    assert standings.rows[-1].disqualifications == standings.rows[-1].matches == 27
    assert [row.name for row in standings.rows][:3] == ["bea", "cy", "dot"]


def test_the_standings_are_the_batch_fit_over_every_groups_equations(tmp_path: Path) -> None:
    # The standings fit from per-class summaries (referee.scoring.summary); what they print
    # must be what the batch fit over each group's own equations gives: the same score,
    # interval, ranks and LOS, with the matches of a group found by deal seed and table.
    stored = [m for m in league(seed=3) if m.key.match_id != "t4-r2"]  # and a partial group
    standings = compute(config_of(tmp_path).identity(), NAMES, stored, "cup")
    groups: dict[tuple[int, tuple[int, ...]], list[GroupMatch[int]]] = {}
    for match in stored:
        nets = [float(seat.net_chips) for seat in match.result.seats]
        groups.setdefault((match.key.seed, tuple(sorted(match.key.bots))), []).append(
            GroupMatch(list(match.key.bots), nets, match.result.hands)
        )
    reference = bootstrap(len(NAMES), [equations(g) for g in groups.values()])
    by_name = {row.name: row for row in standings.rows}
    for bot, name in enumerate(NAMES):
        row = by_name[name]
        assert row.score == pytest.approx(reference.strength[bot], abs=1e-12)
        assert row.score_low == pytest.approx(reference.low[bot], abs=1e-12)
        assert row.score_high == pytest.approx(reference.high[bot], abs=1e-12)
        assert (row.rank_low, row.rank_high) == (reference.rank_low[bot], reference.rank_high[bot])
    for upper, lower in itertools.pairwise(standings.rows):
        assert upper.los == reference.los(NAMES.index(upper.name), NAMES.index(lower.name))
