"""The leaderboard's saved summaries: a restart reads only newer rows, to the same numbers.

A competition's database gets generated results (duplicate groups of three
versions out of six, random chips); the first server saves its leaderboard,
more results arrive, and a second server starting over the same database
must give exactly the scores of a fit of every row, having read only the rows
after the saved one.  A file altered, another competition's, or one that
reaches a row the database no longer has is not used.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
import trio

from referee.match.result import MatchResult, SeatResult
from referee.server import board_checkpoint
from referee.server.board_checkpoint import FILE, Checkpoints
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.scoring import Leaderboard, Score
from tests.server.inprocess import open_competition

VERSIONS = 6
GROUPS = 60  # of 3 matches
EVERY = 50  # matches between saves, here


def add_results(store: CompetitionStore, groups: int, seed: int) -> None:
    """``groups`` duplicate groups of 3 of the versions, every rotation played."""
    rng = random.Random(seed)
    versions = sorted(v.id for v in store.versions()) or _versions(store)
    for _ in range(groups):
        table = rng.sample(versions, 3)
        group = store.plan_group(rng.randrange(1 << 30), table, "test")
        for rotation in range(3):
            seated = tuple(table[(i + rotation) % 3] for i in range(3))
            nets = [rng.randint(-30, 30), rng.randint(-30, 30)]
            nets.append(-sum(nets))
            result = MatchResult(f"g{group.id}r{rotation}", group.seed, {}, 6, [
                SeatResult(seat=s, name="x", place=1, chips=20 + net, status="ok", faults=[],
                           net_chips=net, boodle_chips=0, hands_won=0)
                for s, net in enumerate(nets)
            ], None, "limit")  # fmt: skip
            store.record(group, rotation, seated, result, None, identity=group.seed)


def _versions(store: CompetitionStore) -> list[int]:
    made = []
    for number in range(VERSIONS):
        participant, _token = store.add_participant(f"p{number}")
        version = store.add_version(participant.id, "python3", "main.py", "", 1)
        store.decide(version.id, "admitted", "ok", "", {"name": "x", "command": ["x"]})
        made.append(version.id)
    return made


def board_of(competition: Competition, every: int = 10**9) -> dict[int, Score]:
    competition.checkpoints = Checkpoints(competition.config.data, every=every)
    trio.run(competition.refresh_board)
    scores = competition.board.scores
    competition.close()
    return scores


@pytest.fixture
def cup(tmp_path: Path) -> Competition:
    competition = open_competition(tmp_path)
    add_results(competition.store, GROUPS, seed=1)
    return competition


def fresh(competition: Competition) -> Competition:
    return Competition(competition.config, competition.store)


def test_a_restart_reads_only_the_rows_after_the_saved_one_and_scores_the_same(
    cup: Competition, monkeypatch: pytest.MonkeyPatch
) -> None:
    board_of(cup, every=EVERY)  # the first server: saves its leaderboard
    saved = cup.config.data / FILE
    assert saved.exists() and saved.stat().st_mode & 0o077 == 0
    add_results(cup.store, 10, seed=2)  # 30 more, stored after the save

    read: list[int] = []
    played_since = CompetitionStore.played_since

    def counting(store: CompetitionStore, after: int = 0) -> tuple[int, list[object]]:
        upto, played = played_since(store, after)
        read.append(len(played))
        return upto, played  # type: ignore[return-value]

    monkeypatch.setattr(CompetitionStore, "played_since", counting)
    resumed = board_of(fresh(cup))
    assert sum(read) == 30 + 1  # the rows after the save, and the saved last row again
    monkeypatch.undo()

    saved.unlink()
    every_row = board_of(fresh(cup))
    assert resumed == every_row  # exactly: the same additions in the same order
    assert all(score.score is not None for score in every_row.values())


@pytest.mark.parametrize("spoil", ["altered", "another competition", "an older database"])
def test_a_file_that_does_not_fit_this_database_is_not_used(
    cup: Competition, tmp_path: Path, spoil: str
) -> None:
    board_of(cup, every=EVERY)
    saved = cup.config.data / FILE
    if spoil == "altered":
        blob = bytearray(saved.read_bytes())
        blob[-5] ^= 1
        saved.write_bytes(bytes(blob))
    elif spoil == "another competition":
        (tmp_path / "other").mkdir()
        other = open_competition(tmp_path / "other")
        add_results(other.store, GROUPS, seed=1)  # the same results, another database's secret
        board_of(other, every=EVERY)
        shutil.copy(other.config.data / FILE, saved)
    else:  # the saved last row is gone: the database is an older copy (here: it was emptied)
        cup.store._db.execute("DELETE FROM seats")
        cup.store._db.execute("DELETE FROM matches")
    checkpoints = Checkpoints(cup.config.data)
    reader = CompetitionStore.reader(cup.store.path)
    try:
        assert checkpoints.resume(reader, "0") is None
    finally:
        reader.close()


def test_a_save_made_before_the_organiser_left_results_out_is_not_used(cup: Competition) -> None:
    # A ban or a withdrawal with its results excluded bumps the fit's generation: a restart
    # must fit afresh without them, not resume from a save that still holds them.
    from referee.server import organiser

    board_of(cup, every=EVERY)
    assert (cup.config.data / FILE).exists()
    banned = cup.store.participant_by_name("p0")
    assert banned is not None
    organiser.ban(cup.store, organiser.SHELL, "p0", "exclude")
    resumed = board_of(fresh(cup))
    (cup.config.data / FILE).unlink()
    every_row = board_of(fresh(cup))
    assert resumed == every_row
    banned_versions = {v.id for v in cup.store.versions(banned.id)}
    assert not banned_versions & set(every_row)  # its versions left the board with it


def test_saves_wait_for_enough_results_and_time(cup: Competition) -> None:
    now = [0.0]
    checkpoints = Checkpoints(cup.config.data, every=EVERY, clock=lambda: now[0])
    reader = CompetitionStore.reader(cup.store.path)
    try:
        secret = reader.secret
        upto, played = reader.played_since(0)
        board = Leaderboard()
        board.extend(played[: EVERY // 2])
        assert not checkpoints.maybe_save(secret, board, upto, played[EVERY // 2 - 1])
        board.extend(played[EVERY // 2 :])
        assert checkpoints.maybe_save(secret, board, upto, played[-1])
        assert not checkpoints.maybe_save(secret, board, upto, played[-1])  # nothing new
        add_results(cup.store, EVERY // 3 + 1, seed=3)
        upto, newer = reader.played_since(upto)
        board.extend(newer)
        now[0] += board_checkpoint.MIN_SECONDS / 2
        assert not checkpoints.maybe_save(secret, board, upto, newer[-1])  # too soon
        now[0] += board_checkpoint.MIN_SECONDS
        assert checkpoints.maybe_save(secret, board, upto, newer[-1])
    finally:
        reader.close()
