"""Tables pinned to cores: ``--jobs N`` and ``--cluster local:N`` with N the usable cores."""

from __future__ import annotations

import os
import sys

import pytest

from referee.tables.local_pool import table_core

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux affinity")


def test_one_table_per_usable_core_takes_each_core_in_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {5, 0, 2})
    assert [table_core(3, slot) for slot in range(4)] == [0, 2, 5, 0]  # a replaced worker too
    # Fewer tables than cores may use the spare ones; more would share cores anyway.
    assert table_core(2, 0) is None and table_core(4, 0) is None
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {3})
    assert table_core(1, 0) is None  # one table on one core: nothing to keep apart


def test_a_cluster_worker_takes_its_core_by_its_local_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from referee.tables.dask_pool import _core  # Dask is slow to import: only here

    class Named:
        def __init__(self, name: object) -> None:
            self.name = name

    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1})
    assert [_core(Named(n), 2) for n in (0, 1)] == [0, 1]  # type: ignore[arg-type]
    assert _core(Named(0), 0) is None  # type: ignore[arg-type]  # not a local:N worker
    assert _core(Named("tcp://10.0.0.7:1"), 2) is None  # type: ignore[arg-type]
