"""The collusion statistic over a competition's ladder: its matches, their logs, its scores.

``referee.scoring.collusion`` is the statistic; this reads what it needs from the
store (who sat where in each ladder match, and each match log's ``chips_paid`` and
``hand_swapped`` events) and the leaderboard's scores (fitted from the stored
results, as the board is), and names the pairs beyond the file's
``[fair_tables] collusion_z``.  A match whose log is missing or damaged is left
out and counted (``CollusionReport.unread``): evidence is never guessed.
Run by ``newmarket serve collusion`` and the organiser's API, never by the
tables: it reads every log, which is the organiser's occasional question, not
every page's.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from referee.match.log import LogError, read_records
from referee.match.records import EventRecord
from referee.scoring.collusion import PairFlow, TableFlows, flows_from_events, pair_flows
from referee.server.competition_db import CompetitionStore
from referee.server.competition_file import CompetitionConfig
from referee.server.scoring import score_versions


@dataclasses.dataclass(frozen=True)
class CollusionReport:
    pairs: list[PairFlow]  # beyond the threshold, largest z first
    names: Mapping[int, str]  # participant id -> name
    matches: int  # ladder matches read
    unread: int  # matches whose log could not be read
    z: float
    min_matches: int

    def as_json(self) -> dict[str, Any]:
        return {
            "threshold_z": self.z,
            "min_matches": self.min_matches,
            "matches_read": self.matches,
            "matches_unread": self.unread,
            "pairs": [
                {
                    **pair.as_json(),
                    "giver": self.names.get(pair.giver, str(pair.giver)),
                    "taker": self.names.get(pair.taker, str(pair.taker)),
                }
                for pair in self.pairs
            ],
        }

    def lines(self) -> list[str]:
        head = (
            f"{self.matches} ladder matches read ({self.unread} logs unreadable); pairs with "
            f"|z| >= {self.z:g} over at least {self.min_matches} shared matches:"
        )
        body = []
        for pair in self.pairs:
            giver = self.names.get(pair.giver, str(pair.giver))
            taker = self.names.get(pair.taker, str(pair.taker))
            body.append(
                f"  {giver} -> {taker}: {pair.flow} chips over {len(pair.matches)} matches, "
                f"{pair.expected:.0f} predicted, z {pair.z:.1f}; matches "
                + ", ".join(pair.matches[:12])
                + (" ..." if len(pair.matches) > 12 else "")
            )
        return [head, *(body or ["  none"])]


def match_flows(log: Path) -> dict[tuple[int, int], int] | None:
    """The chips between the seats of one match, from its log; None if it cannot be read."""
    try:
        events = [
            record.event for _line, record in read_records(log) if isinstance(record, EventRecord)
        ]
    except (LogError, OSError):
        return None
    return flows_from_events(events)


def collusion_report(config: CompetitionConfig, store: CompetitionStore) -> CollusionReport:
    """Every pair of participants who shared ladder tables, judged (module doc)."""
    played = store.played_matches()
    versions = sorted({v for match in played for v in match.versions})
    scores = score_versions(played, versions) if played else {}
    owner = {v.id: v.participant for v in store.versions()}
    names = {p.id: p.name for p in store.participants()}
    rows = store.connection.execute(
        "SELECT match_id, group_id, seed, versions, hands, log_path FROM matches ORDER BY rowid"
    ).fetchall()
    tables = []
    unread = 0
    for match_id, group_id, seed, seated, hands, log_path in rows:
        paid = None if log_path is None else match_flows(Path(log_path))
        if paid is None:
            unread += 1
            continue
        held = [int(v) for v in json.loads(seated)]
        strengths = tuple(scores[v].score or 0.0 if v in scores else 0.0 for v in held)
        tables.append(
            TableFlows(
                str(match_id),
                tuple(owner.get(v, -v) for v in held),
                strengths,
                int(hands),
                paid,
                deal=(int(group_id), int(seed)),
            )
        )
    settings = config.contest.fair_tables
    flagged = [
        pair
        for pair in pair_flows(tables)
        if pair.z >= settings.collusion_z and len(pair.matches) >= settings.collusion_matches
    ]
    return CollusionReport(
        flagged,
        names,
        len(tables),
        unread,
        settings.collusion_z,
        settings.collusion_matches,
    )
