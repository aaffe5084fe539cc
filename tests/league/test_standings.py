"""Ratings and standings: the order a reader of the standings would expect."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from referee.league.league_db import StoredMatch
from referee.league.standings import compute
from referee.scoring.ratings import rate

from .results import key, result
from .test_config import GOOD
from .test_store import config_of

NAMES = ["a", "b", "c", "d"]


def test_a_consistent_finishing_order_gives_the_same_rating_order() -> None:
    matches = [(["a", "b", "c", "d"], [1, 2, 3, 4]), (["d", "c", "b", "a"], [4, 3, 2, 1])] * 10
    ratings = rate(NAMES, matches)
    conservative = [ratings[name].conservative for name in NAMES]
    assert conservative == sorted(conservative, reverse=True)
    assert ratings["a"].sigma < 25 / 3  # playing makes a rating surer


def test_ties_share_and_unplayed_bots_keep_the_prior() -> None:
    ratings = rate([*NAMES, "e"], [(["a", "b", "c"], [1, 1, 3])])
    assert abs(ratings["a"].mu - ratings["b"].mu) < 1e-9
    assert ratings["c"].mu < ratings["a"].mu
    assert (ratings["e"].mu, ratings["e"].sigma) == (25.0, 25 / 3)


def test_ratings_follow_schedule_order_not_finishing_order(tmp_path: Path) -> None:
    identity = config_of(tmp_path).identity()
    stored = [
        StoredMatch(
            key(f"m{i}", [i % 4, (i + 1) % 4, (i + 2) % 4], ordinal=i),
            result(f"m{i}", [NAMES[i % 4], NAMES[(i + 1) % 4], NAMES[(i + 2) % 4]], [1, 2, 3]),
        )
        for i in range(8)
    ]
    forward = compute(identity, NAMES, stored)
    backward = compute(identity, NAMES, list(reversed(stored)))
    assert forward.to_json() == backward.to_json()


def test_standings_count_every_column_and_sort_by_conservative_rating(tmp_path: Path) -> None:
    identity = config_of(tmp_path).identity()
    stored = [
        StoredMatch(key("m0", [0, 1, 2]), result("m0", ["a", "b", "c"], [1, 2, 3], [60, 40, 20])),
        StoredMatch(
            key("m1", [0, 1, 3], ordinal=1),
            result("m1", ["a", "b", "d"], [1, 3, 2], [55, 30, 35], disqualified=[1]),
        ),
    ]
    standings = compute(identity, NAMES, stored, "cup")
    assert standings.matches_done == 2
    assert standings.matches_total == 12  # C(4,3) tables x 3 rotations
    assert not standings.finished
    rows = {row.name: row for row in standings.rows}
    assert standings.rows[0].name == "a"
    ratings = [row.rating for row in standings.rows]
    assert ratings == sorted(ratings, reverse=True)
    a, b = rows["a"], rows["b"]
    assert (a.matches, a.firsts, a.average_place, a.net_chips) == (2, 2, 1.0, 35)
    assert (b.faults, b.disqualifications, b.net_chips) == (1, 1, -10)
    assert a.hands_won == 4 and a.boodle_chips == 0
    data = json.loads(json.dumps(standings.to_json()))
    assert data["league"] == "cup" and data["standings"][0]["name"] == "a"
    rows_csv = list(csv.DictReader(io.StringIO(standings.to_csv())))
    assert [r["name"] for r in rows_csv] == [row.name for row in standings.rows]
    assert set(rows_csv[0]) >= {"average_place", "firsts", "boodle_chips", "rating", "sigma"}


def test_a_bankroll_league_ranks_survivors_by_chips_then_by_round_out(tmp_path: Path) -> None:
    text = GOOD.replace("[league]", '[league]\nformat = "bankroll"\nhand_limit = 5')
    config = config_of(tmp_path, text)
    identity = config.identity()
    # Round 1: four bots at one table (4 survivors, tables of 3 -> one table of 4).
    from referee.league.bankroll import replay

    from .test_bankroll import params_of, play_round

    params = params_of(config)
    stored: list[StoredMatch] = []
    state = replay(params, stored)
    stored += play_round(state, {0: 70, 1: 60, 2: 30, 3: 0})
    standings = compute(identity, NAMES, stored, deals=params.deals)
    assert [row.name for row in standings.rows][:2] == ["a", "b"]
    assert standings.rows[-1].name == "d" and standings.rows[-1].out_round == 1
    assert standings.format == "bankroll"
