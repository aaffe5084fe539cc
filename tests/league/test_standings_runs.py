"""The first standings of a large league fold its matches a run of whole groups at a time
(``standings_tally.group_ends``), never all of them at once, with the same numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from referee.league import standings as standings_module
from referee.league.league_db import LeagueStore
from referee.league.schedule import ScheduledMatch
from referee.league.standings import compute, standings_of
from referee.league.standings_tally import finished_prefix, group_ends
from tests.league.files import write_league_file
from tests.league.test_record_many import generated

BOTS = ("random", "lowest", "tracker", "boodle", "longest", "random")


def scheduled(groups: list[int]) -> list[ScheduledMatch]:
    """Matches in order, each of the group numbered in ``groups``."""
    return [
        ScheduledMatch(index, f"m{index}", 1, 0, 0, group, (0, 1, 2))
        for index, group in enumerate(groups)
    ]


def test_runs_end_only_where_every_group_begun_has_ended() -> None:
    # groups 1 and 2 interleave up to position 4; 3 alone; 4 and 5 interleave to the end
    ordered = scheduled([1, 2, 1, 2, 2, 3, 3, 4, 5, 4, 5])
    assert group_ends(ordered, 0, 11, 5) == [5, 7, 11]
    assert group_ends(ordered, 0, 11, 100) == [11]
    assert group_ends(ordered, 0, 11, 1) == [5, 7, 11]
    assert group_ends(ordered, 5, 11, 2) == [7, 11]


def test_the_finished_prefix_ends_where_every_group_begun_in_it_has_ended() -> None:
    ordered = scheduled([1, 2, 1, 2, 2, 3, 3, 4, 5, 4, 5])

    def first(count: int) -> set[str]:
        return {f"m{index}" for index in range(count)}

    assert [finished_prefix(ordered, first(n)) for n in (0, 4, 5, 6, 7, 10, 11)] == [
        0, 0, 5, 5, 7, 7, 11
    ]  # fmt: skip
    assert finished_prefix(ordered, first(11) - {"m2"}) == 0  # a hole: nothing after it counts
    assert finished_prefix(ordered[::-1], first(11)) == 11  # the schedule taken by index


def test_first_standings_fold_in_runs_with_the_numbers_of_one_fold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(standings_module, "EVERY", 10)
    path = write_league_file(
        tmp_path, BOTS, name="runs", hand_limit=6, sections="\n[schedule]\ncycles = 3\n"
    )
    store, made = generated(path, tmp_path / "league.db")
    store.record_many(made)
    read: list[int] = []
    matches = LeagueStore.matches

    def counting(self: LeagueStore, after: Any = None, upto: Any = None) -> Any:
        got = matches(self, after, upto)
        read.append(len(got))
        return got

    monkeypatch.setattr(LeagueStore, "matches", counting)
    first = standings_of(store)  # saves the tally, folded a run at a time
    monkeypatch.setattr(LeagueStore, "matches", matches)
    # The runner plays a cycle's rotations in turn, so each group ends with its cycle.
    assert read == [60, 60, 60, 0]
    assert Path(f"{store.path}.standings").exists()
    identity, names = store.resolved_identity(), store.bot_names()
    folded = compute(identity, names, store.matches(), store.name(), store.deal_key())
    assert first.to_json() == folded.to_json() and first.rows == folded.rows
    assert standings_of(store).to_json() == folded.to_json()  # and from the tally
    store.close()
