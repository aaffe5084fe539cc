"""The gauntlet: candidates against a fixed field, on the same cards, never against each other."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.cli import app
from referee.league.league_file import ConfigError, parse_config
from referee.league.schedule import ScheduleError, build_schedule
from tests.league.files import write_league_file


def test_candidates_meet_only_the_field_in_every_seat_on_shared_cards() -> None:
    schedule = build_schedule(7, 4, 11, kind="gauntlet", candidates=2)
    field = {2, 3, 4, 5, 6}
    assert len(schedule) == 2 * 10 * 4  # 2 candidates x C(5, 3) field tables x 4 rotations
    seats: dict[int, collections.Counter[int]] = collections.defaultdict(collections.Counter)
    seeds: dict[int, set[tuple[frozenset[int], int]]] = collections.defaultdict(set)
    for match in schedule:
        candidates = [bot for bot in match.bots if bot not in field]
        assert len(candidates) == 1  # candidates never sit together
        candidate = candidates[0]
        seats[candidate][match.bots.index(candidate)] += 1
        seeds[candidate].add((frozenset(match.bots) - {candidate}, match.seed))
    assert seats[0] == seats[1] == collections.Counter({0: 10, 1: 10, 2: 10, 3: 10})
    assert seeds[0] == seeds[1]  # the same field table is dealt the same cards for both
    assert len({m.match_id for m in schedule}) == len(schedule)


def test_a_large_field_takes_cyclic_windows_with_equal_shares() -> None:
    schedule = build_schedule(
        41, 4, 3, kind="gauntlet", candidates=1, round_robin_limit=100, meetings=2
    )
    counts = collections.Counter(bot for match in schedule for bot in match.bots if bot)
    assert len(set(counts.values())) == 1  # every field bot plays the candidate equally often
    assert len(schedule) == 2 * 40 * 4


def test_a_gauntlet_needs_candidates_and_a_field() -> None:
    with pytest.raises(ScheduleError, match="candidates"):
        build_schedule(4, 4, 1, kind="gauntlet", candidates=2)
    with pytest.raises(ScheduleError, match="candidate"):
        build_schedule(6, 3, 1, kind="gauntlet", candidates=0)
    text = '[league]\nseed = 1\ntable_size = 3\n[schedule]\nkind = "gauntlet"\n'
    text += "".join(f'[[bots]]\nname = "b{i}"\ncommand = "lowest"\n' for i in range(4))
    with pytest.raises(ConfigError, match=r"schedule\.candidates"):
        parse_config(text, Path("gauntlet.toml"))
    config = parse_config(text.replace('"gauntlet"\n', '"gauntlet"\ncandidates = 1\n'), Path("g"))
    assert config.schedule.candidates == 1


def test_a_gauntlet_league_runs_and_ranks_the_candidates(tmp_path: Path) -> None:
    path = write_league_file(
        tmp_path,
        ["lowest", "random", "lowest", "random"],
        name="gauntlet",
        hand_limit=3,
        sections='\n[schedule]\nkind = "gauntlet"\ncandidates = 2\n',
    )
    db = tmp_path / "league.db"
    runner = CliRunner()
    played = runner.invoke(app, ["league", str(path), "--db", str(db)])
    assert played.exit_code == 0, played.output
    out = runner.invoke(app, ["standings", "--db", str(db), "--json"])
    standings = json.loads(out.output)
    assert standings["matches_done"] == 2 * 1 * 3 and standings["finished"]
    h2h = standings["head_to_head"]
    assert "random-1" not in h2h["lowest-0"]  # the candidates never met
    assert h2h["lowest-0"]["lowest-2"]["matches"] == 3
