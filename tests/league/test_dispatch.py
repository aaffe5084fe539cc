"""Handing matches to table workers: each worker its own seat rotations first, none left idle."""

from __future__ import annotations

from engine import preset
from referee.match.key import MatchKey
from referee.tables.job import TableJob
from referee.tables.local_pool import _Waiting


def job(table: int, rotation: int) -> TableJob:
    key = MatchKey(
        match_id=f"t{table}-r{rotation}",
        ordinal=table * 4 + rotation,
        round=0,
        table=table,
        rotation=rotation,
        seed=table,  # duplicate deals: a table's rotations share its deal
        bots=(0, 1, 2, 3),
        start_chips=(100, 100, 100, 100),
        deal_seed=table,
    )
    return TableJob(key, preset("boodle"))


def taken(waiting: _Waiting, slot: int) -> list[str]:
    out = []
    while (next_job := waiting.take(slot)) is not None:
        out.append(next_job.key.match_id)
    return out


def test_each_worker_meets_only_its_own_rotations_of_a_deal_while_it_has_some() -> None:
    # A bot process never plays a deal twice, so every rotation of a deal a worker
    # meets costs it one more process per bot: with two workers, each meets two.
    jobs = [job(table, rotation) for table in range(3) for rotation in range(4)]
    waiting = _Waiting(jobs, 2)
    own = [waiting.take(0) for _ in range(6)]
    assert [j.key.match_id for j in own if j] == [
        "t0-r0",
        "t0-r2",
        "t1-r0",
        "t1-r2",
        "t2-r0",
        "t2-r2",
    ]
    # Then it helps with the other worker's, in schedule order, and none is lost.
    assert taken(waiting, 0) == ["t0-r1", "t0-r3", "t1-r1", "t1-r3", "t2-r1", "t2-r3"]
    assert waiting.take(1) is None


def test_a_worker_without_matches_of_its_own_takes_the_others_in_schedule_order() -> None:
    # A bankroll league seats every match as rotation 0: both workers share one queue.
    jobs = [job(table, 0) for table in range(5)]
    waiting = _Waiting(jobs, 2)
    order = [waiting.take(slot) for slot in (1, 0, 1, 0, 1, 0)]
    assert [j.key.match_id if j else None for j in order] == [
        "t0-r0",
        "t1-r0",
        "t2-r0",
        "t3-r0",
        "t4-r0",
        None,
    ]


def test_one_worker_takes_every_match_in_schedule_order() -> None:
    jobs = [job(table, rotation) for table in range(2) for rotation in range(4)]
    assert taken(_Waiting(jobs, 1), 0) == [j.key.match_id for j in jobs]
