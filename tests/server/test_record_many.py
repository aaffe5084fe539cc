"""``CompetitionStore.record_many``: many results in one transaction, as ``record`` stores each."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import msgspec

from referee.match.result import FaultRecord
from referee.server.competition_db import CompetitionStore, Finished
from referee.server.scoring import score_versions
from tests.server.inprocess import admitted_group, finished


def made(store: CompetitionStore) -> list[Finished]:
    """Four groups of three rotations with generated nets and a few faults."""
    table = admitted_group(store).versions
    rng = random.Random(8)
    out: list[Finished] = []
    for number in range(4):
        group = store.plan_group(100 + number, table, "test")
        for rotation in range(3):
            holders = tuple(table[(seat + rotation) % 3] for seat in range(3))
            nets = [rng.randint(-9, 9) for _ in range(2)]
            result = finished(f"g{group.id}r{rotation}", group.seed)
            seats = [
                msgspec.structs.replace(
                    seat, net_chips=net, faults=[FaultRecord("timeout", 1, "slow")] * (net > 5)
                )
                for seat, net in zip(result.seats, [*nets, -sum(nets)], strict=True)
            ]
            out.append((group, rotation, holders, msgspec.structs.replace(result, seats=seats),
                        None, group.seed))  # fmt: skip
    return out


def rows(db: Path) -> list[list[tuple[object, ...]]]:
    """Every stored row but the time each match was written."""
    with sqlite3.connect(db) as raw:
        return [
            raw.execute(
                "SELECT match_id, group_id, rotation, seed, versions, hands, reason, log_path, "
                "result FROM matches ORDER BY match_id"
            ).fetchall(),
            raw.execute("SELECT * FROM seats ORDER BY match_id, seat").fetchall(),
            raw.execute("SELECT * FROM faults ORDER BY match_id, seat, number").fetchall(),
        ]


def test_results_written_in_bulk_are_stored_and_scored_as_one_at_a_time(tmp_path: Path) -> None:
    one = CompetitionStore.open(tmp_path / "one.sqlite")
    results = made(one)
    for group, rotation, versions, result, log_path, identity in results:
        assert one.record(group, rotation, versions, result, log_path, identity=identity)
    bulk = CompetitionStore.open(tmp_path / "bulk.sqlite")
    assert made(bulk) == results  # the same participants, versions and groups
    assert bulk.record_many(results[:5]) == 5
    assert bulk.record_many(results[3:]) == len(results) - 5  # two already stored: skipped
    faults = sum(len(seat.faults) for entry in results for seat in entry[3].seats)

    matches, seats, fault_rows = rows(tmp_path / "bulk.sqlite")
    assert (len(matches), len(seats), len(fault_rows)) == (len(results), 3 * len(results), faults)
    assert faults and [matches, seats, fault_rows] == rows(tmp_path / "one.sqlite")
    table = list(results[0][0].versions)
    assert score_versions(bulk.played_matches(), table) == score_versions(
        one.played_matches(), table
    )
    one.close()
    bulk.close()
