"""``/metrics`` parsed as Prometheus parses it, and the status page, on an in-process app."""

from __future__ import annotations

import math
from pathlib import Path

import httpx
import trio
from prometheus_client.parser import text_string_to_metric_families

from referee.server.app import build_app
from referee.server.competition import Competition
from referee.server.quotas import DiskSpace
from tests.server.inprocess import admitted_group, finished, open_competition
from tests.server.test_pace import score


async def _get(competition: Competition, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=build_app(competition))
    async with httpx.AsyncClient(transport=transport, base_url="http://cup") as client:
        return await client.get(path)


def _metrics(text: str) -> dict[str, float]:
    values = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            values[sample.name] = sample.value
    return values


def test_metrics_parse_and_say_what_the_server_is_doing(tmp_path: Path) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    group = admitted_group(store)
    for rotation in range(2):  # two of three rotations: the group is still in play
        mid = f"g{group.id}r{rotation}"
        store.record(group, rotation, group.versions, finished(mid, 5), None, identity=5)
    waiting, _token = store.add_participant("dora")
    store.add_version(waiting.id, "python3", "main.py", "", 1)  # pending: the backlog
    competition.playing_now[1] = f"g{group.id}r2"
    competition.disk = DiskSpace((tmp_path,), 0, lambda _path: 7_000_000_000)
    competition.fit_seconds = 0.25

    response = trio.run(_get, competition, "/metrics")  # no token: public
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    values = _metrics(response.text)
    assert values["newmarket_matches_total"] == 2
    assert values["newmarket_matches_per_minute"] == 2 * 60 / 300
    assert values["newmarket_groups_in_play"] == 1
    assert values["newmarket_admission_backlog"] == 1
    assert values["newmarket_tables_busy"] == 1
    assert values["newmarket_disk_free_bytes"] == 7e9
    assert values["newmarket_fit_seconds"] == 0.25
    assert math.isnan(values["newmarket_record_bytes"])  # no retention pass yet
    assert values["newmarket_settled"] == 0
    assert values["newmarket_pace_matches_per_minute"] == math.inf
    assert values["newmarket_paused"] == 0
    # Counts and timings only: no name, no path of the operator's.
    assert "dora" not in response.text and str(tmp_path) not in response.text

    page = trio.run(_get, competition, "/status")
    assert page.status_code == 200
    assert "Pace: full speed: starting (no limit)" in page.text
    assert "<th>versions waiting for admission</th><td>1</td>" in page.text
    assert "<th>match records kept</th><td>not yet</td>" in page.text
    store.close()


def test_a_settled_ranking_shows_on_the_status_page_and_in_the_metrics(tmp_path: Path) -> None:
    competition = open_competition(
        tmp_path, sections="[scheduler]\nsettled_per_minute = 3\nmax_per_minute = 40\n"
    )
    store = competition.store
    versions = admitted_group(store).versions
    disjoint = {v: score(v, rank, rank, rank) for rank, v in enumerate(versions, 1)}
    competition.pace.update(disjoint, versions)

    values = _metrics(trio.run(_get, competition, "/metrics").text)
    assert values["newmarket_settled"] == 1
    assert values["newmarket_pace_matches_per_minute"] == 3
    page = trio.run(_get, competition, "/status")
    assert "Pace: settled: " in page.text and "3 matches a minute" in page.text

    # A new version's arrival (no rank interval yet) is full speed again, under the cap.
    competition.pace.update({**disjoint, 99: score(99, 4, None, None)}, [*versions, 99])
    values = _metrics(trio.run(_get, competition, "/metrics").text)
    assert values["newmarket_settled"] == 0
    assert values["newmarket_pace_matches_per_minute"] == 40
    page = trio.run(_get, competition, "/status")
    assert "Pace: full speed: v99 is new (no rank interval yet)" in page.text
    store.close()
