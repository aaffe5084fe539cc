"""The leaderboard's rating chart and head-to-head matrix: the report's, from finished groups."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from referee.match.result import MatchResult
from referee.server import board_charts
from referee.server.app import build_app
from referee.server.board_charts import head_to_head, ratings_svg, refresh_charts
from referee.server.competition import Competition
from tests.server.inprocess import admitted_group, finished, open_competition


def _placed(match_id: str, places: list[int]) -> MatchResult:
    result = finished(match_id, 5)
    for seat, place in zip(result.seats, places, strict=True):
        seat.place = place
    return result


async def _get(competition: Competition, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=build_app(competition))
    async with httpx.AsyncClient(transport=transport, base_url="http://cup") as client:
        return await client.get(path)


async def test_the_board_draws_ratings_and_head_to_head_once_a_group_has_finished(
    tmp_path: Path,
) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    try:
        group = admitted_group(store)  # alice, bob, carol
        # Rotation r seats the table rotated by r; alice is ahead of bob in each match.
        seating = [group.versions[r:] + group.versions[:r] for r in range(3)]
        places = [[1, 2, 3], [3, 2, 1], [1, 2, 3]]  # by seat: alice 1st, 1st, 2nd
        store.record(group, 0, seating[0], _placed("g1r0", places[0]), None, identity=5)
        await competition.refresh_board()
        await refresh_charts(competition)
        assert ratings_svg(competition) is None  # the group still plays: nothing counted
        assert head_to_head(competition)["rows"][0] == ["", "", ""]
        for r in (1, 2):
            store.record(group, r, seating[r], _placed(f"g1r{r}", places[r]), None, identity=5)
        await competition.refresh_board()
        await refresh_charts(competition)
        chart = ratings_svg(competition)
        competition_page = await _get(competition, "/")
        svg = await _get(competition, "/leaderboard/ratings.svg")
        api = (await _get(competition, "/api/leaderboard/head-to-head")).json()
    finally:
        store.close()
    assert chart is not None and str(chart).count("<polyline") == 3
    assert svg.headers["content-type"].startswith("image/svg+xml")
    assert str(chart) in competition_page.text  # drawn inline, as the report draws it
    names = api["versions"]
    assert sorted(names) == ["alice v1", "bob v1", "carol v1"]
    cell = {(a, b): api["rows"][i][j] for i, a in enumerate(names) for j, b in enumerate(names)}
    # alice finished ahead of bob in all three matches, of carol in two.
    assert cell[("alice v1", "bob v1")] == "100%" and cell[("bob v1", "alice v1")] == "0%"
    assert cell[("alice v1", "carol v1")] == "67%" and cell[("alice v1", "alice v1")] == ""
    assert 'id="head-to-head"' in competition_page.text and "67%" in competition_page.text


async def test_a_large_backlog_is_taken_in_a_look_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(board_charts, "PER_LOOK", 2)  # a look takes two new matches
    competition = open_competition(tmp_path)
    store = competition.store
    try:
        group = admitted_group(store)
        for r, places in enumerate(([1, 2, 3], [1, 2, 3], [3, 2, 1])):  # alice last in r2
            store.record(group, r, group.versions, _placed(f"g1r{r}", places), None, identity=5)
        await competition.refresh_board()
        await refresh_charts(competition)
        first = head_to_head(competition)  # the first two matches
        await refresh_charts(competition)
        second = head_to_head(competition)  # and the third
    finally:
        store.close()
    alice = first["versions"].index("alice v1")
    bob = first["versions"].index("bob v1")
    assert first["rows"][alice][bob] == "100%"  # 2 of 2
    assert second["rows"][alice][bob] == "67%"  # 2 of 3
