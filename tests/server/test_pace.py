"""The pace: full speed while the ranking is in doubt, the maintenance rate once settled."""

from __future__ import annotations

import io
import itertools
from pathlib import Path

import pytest
import trio
import trio.testing

from referee.server.competition import Board, Competition
from referee.server.competition_db import CompetitionStore
from referee.server.competition_file import ConfigError, load_config
from referee.server.operations import OperationsLog, set_operations_log
from referee.server.pace import FULL_SPEED, SETTLED, Pace, PaceSettings, settled
from referee.server.play import GroupQueue
from referee.server.scoring import Score
from tests.server.inprocess import admitted_group


def score(version: int, rank: int, low: int | None, high: int | None) -> Score:
    interval = low is not None
    return Score(
        version=version,
        groups=9 if interval else 1,
        matches=27,
        score=float(-rank),
        low=float(-rank - 1) if interval else None,
        high=float(-rank + 1) if interval else None,
        rank=rank,
        rank_low=low,
        rank_high=high,
    )


def test_disjoint_rank_intervals_and_nobody_new_is_settled() -> None:
    scores = {1: score(1, 1, 1, 1), 2: score(2, 2, 2, 2), 3: score(3, 3, 3, 3)}
    assert settled(scores, [1, 2, 3], overlap=0).state == SETTLED


def test_neighbours_sharing_a_rank_play_at_full_speed_unless_allowed() -> None:
    scores = {1: score(1, 1, 1, 2), 2: score(2, 2, 2, 3), 3: score(3, 3, 3, 3)}
    state = settled(scores, [3, 1, 2], overlap=0)
    assert state.state == FULL_SPEED
    assert state.why == "v1 and v2 share 1 rank (allowed: 0)"
    assert settled(scores, [3, 1, 2], overlap=1).state == SETTLED


def test_a_new_version_means_full_speed() -> None:
    scores = {1: score(1, 1, 1, 1), 2: score(2, 2, 2, 2), 3: score(3, 3, None, None)}
    assert settled(scores, [1, 2, 3], 0).why == "v3 is new (no rank interval yet)"
    assert settled(scores, [1, 2, 4], 0).why == "v4 is new (no rank interval yet)"  # unscored


def test_the_settled_rate_spaces_groups_and_a_newcomer_ends_it_at_once() -> None:
    now = [0.0]
    changes: list[str] = []
    pace = Pace(
        PaceSettings(settled_per_minute=2.0), lambda: now[0], lambda s: changes.append(s.state)
    )
    calm = {1: score(1, 1, 1, 1), 2: score(2, 2, 2, 2), 3: score(3, 3, 3, 3)}
    assert pace.update(calm, [1, 2, 3]).state == SETTLED
    assert pace.wait() == 0.0
    pace.started(3)  # three matches at two a minute: the next group in 90 s
    now[0] = 30.0
    assert pace.wait() == 60.0
    newcomer = {**calm, 4: score(4, 4, None, None)}
    assert pace.update(newcomer, [1, 2, 3, 4]).state == FULL_SPEED
    assert pace.wait() == 0.0
    pace.started(3)
    assert pace.wait() == 0.0  # no cap: full speed is as fast as the tables play
    assert changes == [SETTLED, FULL_SPEED]


def test_the_cap_holds_at_full_speed() -> None:
    now = [100.0]
    pace = Pace(PaceSettings(max_per_minute=6.0), lambda: now[0])
    pace.update({}, [1, 2, 3])
    pace.started(3)
    pace.started(3)  # a second table at once: queued behind the first's share
    assert pace.wait() == 60.0


def test_a_settled_server_waits_between_groups_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "cup.toml"
    path.write_text(
        '[competition]\nname = "x"\nhouse_bots = []\n[scheduler]\nsettled_per_minute = 1\n'
    )
    config = load_config(path)
    out = io.StringIO()
    previous = set_operations_log(OperationsLog(stream=out, clock=lambda: 0.0))
    competition = Competition(config, CompetitionStore.open(config.database))
    versions = admitted_group(competition.store).versions
    competition.board = Board({v: score(v, i, i, i) for i, v in enumerate(versions, 1)}, 9, 0.0)
    starts: list[float] = []

    async def main() -> None:
        queue = GroupQueue(competition)
        queue.resumed.clear()  # the test's own planned group is not a group to finish
        for _ in range(3):
            await queue.next_group()
            starts.append(trio.current_time())
        assert competition.status.startswith("playing")

    try:
        trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    finally:
        set_operations_log(previous)
        competition.store.close()
    assert [round(b - a) for a, b in itertools.pairwise(starts)] == [180, 180]
    assert " pace state=settled " in out.getvalue()


def test_the_pace_settings_are_read_and_a_bad_one_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "cup.toml"
    head = '[competition]\nname = "x"\nhouse_bots = []\n[scheduler]\n'
    path.write_text(head + "settled_per_minute = 0.5\nmax_per_minute = 90\nsettled_overlap = 2\n")
    assert load_config(path).pace == PaceSettings(0.5, 90.0, 2)
    assert load_config(path).retention.days == 7  # the default
    path.write_text(head + "settled_per_minute = 0\n")
    with pytest.raises(ConfigError, match=r"cup.toml: scheduler.settled_per_minute: "):
        load_config(path)
    path.write_text('[competition]\nname = "x"\n[retention]\ndays = -1\n')
    with pytest.raises(ConfigError, match=r"cup.toml: retention.days: "):
        load_config(path)
