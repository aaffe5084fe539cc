"""A participant's matches a page at a time, filtered, through the API and the page (no server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from referee.match.result import FaultRecord
from referee.server.app import build_app
from referee.server.competition import Competition
from referee.server.competition_db import Group
from tests.server.inprocess import admitted_group, finished, open_competition

DAY = 86400.0
START = 1_795_000_000.0  # 2026-11-18T11:06:40Z


async def _get(competition: Competition, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=build_app(competition))
    async with httpx.AsyncClient(transport=transport, base_url="http://cup") as client:
        return await client.get(path)


def _play(competition: Competition, group: Group, rotation: int, day: int, fault: bool) -> str:
    """A finished match of ``group``'s table, ``day`` days after START; alice faults if told."""
    store = competition.store
    result = finished(f"g{group.id}r{rotation}", 5)
    if fault:
        result.seats[0].faults.append(FaultRecord(kind="timeout", hand=1, detail="no reply"))
    store.record(group, rotation, group.versions, result, None, identity=5)
    mid = f"g{group.id}r{rotation}"
    store.connection.execute(
        "UPDATE matches SET finished_at = ? WHERE match_id = ?", (START + day * DAY, mid)
    )
    return mid


@pytest.fixture
def league(tmp_path: Path) -> Iterator[tuple[Competition, list[str]]]:
    """alice with bob and carol in group 1 (three matches, one of them faulty, days 0-2), and
    with dave and erin in group 2 (three matches, days 3-5); played in that order."""
    competition = open_competition(tmp_path)
    store = competition.store
    try:
        first = admitted_group(store)
        alice = first.versions[0]
        ids = [_play(competition, first, r, r, fault=r == 1) for r in range(3)]
        others = admitted_group(store, ("dave", "erin", "frank"))
        second = store.plan_group(7, (alice, *others.versions[:2]), "test")
        ids += [_play(competition, second, r, 3 + r, fault=False) for r in range(3)]
        yield competition, ids
    finally:
        store.close()


async def test_pages_follow_each_other_without_a_gap_or_a_repeat_as_matches_arrive(
    league: tuple[Competition, list[str]],
) -> None:
    competition, ids = league
    first = (await _get(competition, "/api/participants/alice/matches?limit=4")).json()
    assert [m["match_id"] for m in first["matches"]] == ids[::-1][:4]
    # A match stored while alice reads: the next page is still the rest, in order.
    group = competition.store.plan_group(9, (1, 2, 3), "later")
    _play(competition, group, 0, 9, fault=False)
    second = (await _get(competition, f"/api/participants/alice/matches?{first['next']}")).json()
    assert [m["match_id"] for m in second["matches"]] == ids[::-1][4:]
    assert second["next"] is None
    assert second["matches"][0]["seats"][0] == {
        "version": 1,
        "label": "alice v1",
        "participant": "alice",
        "mine": True,
    }


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("faults=only", ["g1r1"]),
        ("opponent=dave", ["g3r2", "g3r1", "g3r0"]),
        ("opponent=bob&since=2026-11-19", ["g1r2", "g1r1"]),
        ("until=2026-11-19T10:00:00Z", ["g1r0"]),
        ("version=1&opponent=carol&faults=1", ["g1r1"]),
    ],
)
async def test_filters_choose_the_matches_a_participant_asks_for(
    league: tuple[Competition, list[str]], query: str, expected: list[str]
) -> None:
    competition, _ids = league
    found = (await _get(competition, f"/api/participants/alice/matches?{query}")).json()
    assert [m["match_id"] for m in found["matches"]] == expected


@pytest.mark.parametrize(
    ("query", "error"),
    [
        ("version=x", "version: 'x' is not a whole number"),
        ("version=4", "version: 4 is not one of alice's versions"),
        ("opponent=nobody", "opponent: no participant named 'nobody'"),
        ("faults=maybe", "faults: use faults=only (or 1) for matches with a fault of theirs"),
        ("since=yesterday", "since: 'yesterday' is not a date (2026-11-28) or time"),
        ("since=2026-11-20&until=2026-11-19", "until: must be later than since"),
        ("until=0001-01-01T00:00:00%2B05:00", "until: '0001-01-01T00:00:00+05:00' is not a date"),
        ("limit=0", "limit: must be from 1 to 200"),
        ("cursor=-3", "cursor: must be from 1 to"),
        ("verison=1", "verison: not a filter (use version, opponent"),
    ],
)
async def test_a_bad_filter_is_a_one_line_400_naming_the_parameter(
    league: tuple[Competition, list[str]], query: str, error: str
) -> None:
    competition, _ids = league
    answer = await _get(competition, f"/api/participants/alice/matches?{query}")
    assert answer.status_code == 400
    assert answer.json()["error"].startswith(error)
    assert "\n" not in answer.json()["error"]
    page = await _get(competition, f"/p/alice/matches?{query}")
    assert page.status_code == 400


async def test_the_page_lists_a_filtered_page_and_links_the_next(
    league: tuple[Competition, list[str]],
) -> None:
    competition, _ids = league
    page = await _get(competition, "/p/alice/matches?opponent=dave&limit=2")
    assert page.status_code == 200
    assert page.text.count('<a href="/matches/g3r') == 2
    assert 'href="?opponent=dave&amp;limit=2&amp;cursor=' in page.text
    assert 'value="dave"' in page.text
    participant = await _get(competition, "/p/alice")
    assert 'href="/p/alice/matches"' in participant.text
