"""A league including the ``random`` bot gives the same games whatever the worker layout.

With ``--jobs 1`` one ``random`` process plays all of the bot's matches in a
row; with ``--jobs 2`` two processes share them in an order set by which table
frees up first.  The bot reseeds at every ``match_start`` from the match id and
its seat, so each match must come out the same either way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.league.config import parse_config
from referee.league.runner import SilentReporter, run_league
from referee.league.store import LeagueStore
from tests.league.files import afresh

LEAGUE = """
[league]
seed = 5
table_size = 3
hand_limit = 8
logs = false

[time_control]
move_time = 30.0
startup_time = 60.0

[[bots]]
name = "random-a"
command = "random"

[[bots]]
name = "random-b"
command = "random"

[[bots]]
name = "random-c"
command = "random"

[[bots]]
name = "lowest"
command = "lowest"
"""


async def per_match_chips(tmp_path: Path, jobs: int) -> dict[str, list[int]]:
    path = tmp_path / f"jobs{jobs}.toml"
    path.write_text(LEAGUE)
    config = parse_config(LEAGUE, path)
    reporter = SilentReporter()
    db = tmp_path / f"jobs{jobs}.db"
    if jobs != 1:  # the league of jobs1.db: the same secret deals
        afresh(tmp_path / "jobs1.db", db)
    with LeagueStore.for_league(db, config) as store:
        run = await run_league(config, store, jobs=jobs, reporter=reporter, handle_signals=False)
        assert run.done == run.total
        return {
            stored.key.match_id: [seat.chips for seat in stored.result.seats]
            for stored in store.matches()
        }


@pytest.mark.trio
async def test_a_league_of_random_bots_plays_the_same_games_with_one_or_two_jobs(
    tmp_path: Path,
) -> None:
    alone = await per_match_chips(tmp_path, jobs=1)
    shared = await per_match_chips(tmp_path, jobs=2)
    assert len(alone) >= 12  # every table of 3 from 4 bots, once per seat rotation
    assert shared == alone
    # The bots really played: not every match ended with the starting chips.
    assert len({tuple(chips) for chips in alone.values()}) > 1
