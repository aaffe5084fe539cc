"""The status page (``/status``) and ``/metrics`` in the Prometheus text format.

Both show the same numbers, read live when asked (``snapshot``): how fast
matches finish, what waits (groups in play, versions waiting for admission),
the tables busy, the disk's free room, the leaderboard's fit time, the bytes
of match records kept, and the pace (settled or full speed, and why).

``/metrics`` is written by ``prometheus_client`` (the reference client the
Prometheus project maintains), through a collector that builds each family
at scrape time on a registry of this app's own, so two apps in one process
(the tests) never share a metric.  Both are **public**, as the leaderboard's
status line is: they hold counts and timings, never a name, a path, a seed or
a token; each scrape costs a few indexed counts (docs/server.md, "Status and
/metrics").
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

from referee.server.competition import Competition
from referee.server.pace import SETTLED
from referee.server.quotas import public_text

RATE_WINDOW = 300.0  # seconds over which matches a minute is measured
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@dataclasses.dataclass(frozen=True)
class Snapshot:
    matches: int
    matches_per_minute: float
    groups_in_play: int
    admission_backlog: int
    tables_busy: int
    disk_free_bytes: float  # NaN if the file system cannot be asked
    fit_seconds: float  # NaN before the first leaderboard
    record_bytes: float  # NaN before the first retention pass
    records_pruned: int
    settled: bool
    pace_why: str
    pace_rate: float  # matches a minute the pace allows now; inf: no limit
    paused: bool
    status: str


def snapshot(competition: Competition, now: Callable[[], float] = time.time) -> Snapshot:
    """The numbers of the status page and ``/metrics``, read now."""
    store = competition.store
    retention = competition.retention
    pace = competition.pace
    try:
        free = float(competition.disk.free(competition.config.data))
    except OSError:
        free = math.nan
    rate = pace.rate
    return Snapshot(
        matches=store.match_count(),
        matches_per_minute=store.finished_since(now() - RATE_WINDOW) * 60.0 / RATE_WINDOW,
        groups_in_play=store.groups_in_play(),
        admission_backlog=len(store.versions(status="pending")),
        tables_busy=len(competition.playing_now),
        disk_free_bytes=free,
        fit_seconds=math.nan if competition.fit_seconds is None else competition.fit_seconds,
        record_bytes=(
            math.nan if retention is None or retention.last is None else retention.last.stored
        ),
        records_pruned=store.pruned_count(),
        settled=pace.state.state == SETTLED,
        pace_why=pace.state.why,
        pace_rate=math.inf if rate is None else rate,
        paused=store.paused,
        status=public_text(competition.status),
    )


class CompetitionCollector(Collector):
    """Every family from one ``snapshot`` per scrape."""

    def __init__(self, competition: Competition) -> None:
        self.competition = competition

    def collect(self) -> Iterator[Metric]:
        s = snapshot(self.competition)
        yield CounterMetricFamily(
            "newmarket_matches", "Matches finished and recorded.", value=s.matches
        )
        gauges: list[tuple[str, str, float]] = [
            ("matches_per_minute", f"Matches finished a minute, over {RATE_WINDOW:g} s.", 0.0),
            ("groups_in_play", "Duplicate groups planned and not finished (the queue).", 0.0),
            ("admission_backlog", "Versions waiting for their admission check.", 0.0),
            ("tables_busy", "Tables playing a match now.", 0.0),
            ("disk_free_bytes", "Free bytes on the data directory's file system.", 0.0),
            ("fit_seconds", "Seconds the last leaderboard fit took.", 0.0),
            ("record_bytes", "Bytes of match records kept (at the last retention pass).", 0.0),
            ("records_pruned", "Match records pruned by retention (results are kept).", 0.0),
            ("settled", "1 while the ranking is settled (maintenance pace), else 0.", 0.0),
            ("pace_matches_per_minute", "Matches a minute the pace allows (+Inf: no limit).", 0.0),
            ("paused", "1 while the organiser has paused play.", 0.0),
        ]
        values = {
            "matches_per_minute": s.matches_per_minute,
            "groups_in_play": s.groups_in_play,
            "admission_backlog": s.admission_backlog,
            "tables_busy": s.tables_busy,
            "disk_free_bytes": s.disk_free_bytes,
            "fit_seconds": s.fit_seconds,
            "record_bytes": s.record_bytes,
            "records_pruned": s.records_pruned,
            "settled": 1.0 if s.settled else 0.0,
            "pace_matches_per_minute": s.pace_rate,
            "paused": 1.0 if s.paused else 0.0,
        }
        for name, text, _ in gauges:
            yield GaugeMetricFamily(f"newmarket_{name}", text, value=float(values[name]))


def status_routes(competition: Competition, render: Callable[..., HTMLResponse]) -> list[BaseRoute]:
    """``/status`` (a page, through the app's ``render``) and ``/metrics`` (text)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(CompetitionCollector(competition))

    async def metrics(_request: Request) -> Response:
        return Response(generate_latest(registry), media_type=CONTENT_TYPE)

    async def status(request: Request) -> Response:
        return render(request, "status.html", status=status_rows(snapshot(competition)))

    return [Route("/metrics", metrics), Route("/status", status)]


def status_rows(s: Snapshot) -> dict[str, Any]:
    """The status page's lines, in words."""
    pace = "settled" if s.settled else "full speed"
    limit = "no limit" if math.isinf(s.pace_rate) else f"{s.pace_rate:g} matches a minute"
    return {
        "status": s.status + (" (paused by the organiser)" if s.paused else ""),
        "pace": f"{pace}: {s.pace_why} ({limit})",
        "rows": [
            ("matches played", f"{s.matches}"),
            ("matches a minute (last 5 minutes)", f"{s.matches_per_minute:.1f}"),
            ("tables busy", f"{s.tables_busy}"),
            ("groups in play", f"{s.groups_in_play}"),
            ("versions waiting for admission", f"{s.admission_backlog}"),
            ("leaderboard fit", _maybe(s.fit_seconds, "{:.2f} s")),
            ("match records kept", _maybe(s.record_bytes / 1e6, "{:.1f} MB")),
            ("match records pruned", f"{s.records_pruned}"),
            ("disk free", _maybe(s.disk_free_bytes / 1e9, "{:.1f} GB")),
        ],
    }


def _maybe(value: float, form: str) -> str:
    return "not yet" if math.isnan(value) else form.format(value)
