"""The competition store: tokens kept as hashes, versions never overwritten, a match never twice."""

from __future__ import annotations

import contextlib
import dataclasses
import random
import sqlite3
from pathlib import Path

import msgspec
import pytest

from engine.rules import Rules
from referee.match.result import FaultRecord, MatchResult
from referee.server.competition_db import CompetitionStore, PlayedMatch, StoreError
from referee.server.scoring import score_versions
from tests.server.inprocess import admitted_group, finished, open_competition


def test_participants_tokens_and_versions(tmp_path: Path) -> None:
    store = CompetitionStore.open(tmp_path / "cup.sqlite")
    alice, token = store.add_participant("alice")
    assert store.participant_by_token(token) == alice
    assert store.participant_by_token(token + "x") is None
    with sqlite3.connect(tmp_path / "cup.sqlite") as raw:
        assert token not in str(raw.execute("SELECT * FROM participants").fetchall())
    for bad, why in (("alice", "taken"), ("a/b", "'/' is not allowed"), ("", "1 to 40")):
        with pytest.raises(StoreError, match=why):
            store.add_participant(bad)
    first = store.add_version(alice.id, "python3", "main.py", "aa", 10)
    second = store.add_version(alice.id, "python3", "main.py", "bb", 11)
    assert (first.number, second.number) == (1, 2) and first.id != second.id
    store.decide(first.id, "admitted", "ok", "", {"name": "x", "command": ["x"]})
    assert [v.id for v in store.playing_versions()] == [first.id]
    store.decide(second.id, "admitted", "ok", "", {"name": "y", "command": ["y"]})
    assert [v.id for v in store.playing_versions()] == [second.id]  # the newest plays
    assert len(store.versions(alice.id)) == 2  # the older one keeps its history
    store.close()


def test_a_match_is_recorded_once(tmp_path: Path) -> None:
    store = CompetitionStore.open(tmp_path / "cup.sqlite")
    for name in ("a", "b", "d"):  # "c" is a bundled bot's name, reserved
        participant, _token = store.add_participant(name)
        store.add_version(participant.id, "python3", "main.py", "", 1)
    group = store.plan_group(7, (1, 2, 3), "test")
    result = finished("g1r0", 7)
    assert store.record(group, 0, (1, 2, 3), result, None, identity=7)
    assert not store.record(group, 0, (1, 2, 3), result, None, identity=7)
    assert store.match_count() == 1
    assert [m.versions for m in store.played_matches()] == [(1, 2, 3)]
    assert store.unfinished_groups()[0][1] == {0}
    store.close()


def test_a_file_that_is_not_a_database_or_is_damaged_is_one_line(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database" * 100)
    with pytest.raises(StoreError, match=r"cannot open the competition database: .*not a database"):
        CompetitionStore.open(garbage)
    path = tmp_path / "cup.sqlite"
    store = CompetitionStore.open(path)
    for number in range(200):  # enough rows for an index of several pages
        store.add_participant(f"p{number}")
    store.close()
    with sqlite3.connect(path) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (root,) = raw.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_participants_1'"
        ).fetchone()
        (page_size,) = raw.execute("PRAGMA page_size").fetchone()
    with path.open("r+b") as file:  # an index page overwritten: a damaged file
        file.seek((root - 1) * page_size)
        file.write(b"\xff" * page_size)
    damage = r"damaged competition database: .*restore it from a copy"
    with pytest.raises(StoreError, match=damage) as damaged:
        CompetitionStore.open(path)
    assert "\n" not in str(damaged.value)


def test_a_first_start_cut_between_its_two_writes_still_gets_a_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first start wrote the schema version, then the secret: a kill -9 between the two
    # left a version and no secret, and every later start signed sessions, forms and remote
    # bot tokens with the empty key, which anybody can compute.
    path = tmp_path / "cup.sqlite"
    real_set_meta = CompetitionStore.set_meta

    def killed_before_the_secret(store: CompetitionStore, key: str, value: str) -> None:
        if key == "secret":
            raise KeyboardInterrupt("the process ends here")  # kill -9: nothing after runs
        real_set_meta(store, key, value)

    monkeypatch.setattr(CompetitionStore, "set_meta", killed_before_the_secret)
    with contextlib.suppress(KeyboardInterrupt):
        CompetitionStore.open(path).close()
    monkeypatch.undo()
    store = CompetitionStore.open(path)
    secret = store.secret
    store.close()
    assert len(secret) == 32
    again = CompetitionStore.open(path)
    assert again.secret == secret  # made once, then kept: sessions survive a restart
    again.close()
    # A database an earlier version left in that state is given its secret at the next start.
    with sqlite3.connect(path) as raw:
        raw.execute("DELETE FROM meta WHERE key = 'secret'")
    healed = CompetitionStore.open(path)
    assert len(healed.secret) == 32
    healed.close()


def with_nets(result: MatchResult, nets: list[int]) -> MatchResult:
    seats = [
        msgspec.structs.replace(seat, net_chips=net, chips=20 + net)
        for seat, net in zip(result.seats, nets, strict=True)
    ]
    return msgspec.structs.replace(result, seats=seats)


def test_played_since_reads_only_what_was_stored_after_a_row(tmp_path: Path) -> None:
    store = CompetitionStore.open(tmp_path / "cup.sqlite")
    group = admitted_group(store)
    table = group.versions
    rotated = [tuple(table[(seat + r) % 3] for seat in range(3)) for r in range(3)]
    for rotation in (0, 1):
        result = with_nets(finished(f"g1r{rotation}", 5), [rotation, 1, -1 - rotation])
        store.record(group, rotation, rotated[rotation], result, None, identity=group.seed)
    row, first = store.played_since()
    assert [(m.rotation, m.versions, m.net_chips) for m in first] == [
        (0, rotated[0], (0, 1, -1)),
        (1, rotated[1], (1, 1, -2)),
    ]
    third = with_nets(finished("g1r2", 5), [2, 0, -2])
    store.record(group, 2, rotated[2], third, None, identity=group.seed)
    later, second = store.played_since(row)
    assert later > row and [m.rotation for m in second] == [2]
    assert store.played_since(later) == (later, [])
    assert first + second == store.played_matches()  # the whole read, in another order here
    store.close()


async def test_the_leaderboard_reads_each_result_once_and_scores_as_a_fresh_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    table = admitted_group(store).versions
    asked: list[int] = []
    since = CompetitionStore.played_since

    def spy(self: CompetitionStore, after: int = 0) -> tuple[int, list[PlayedMatch]]:
        asked.append(after)
        return since(self, after)

    monkeypatch.setattr(CompetitionStore, "played_since", spy)
    rng = random.Random(3)
    for number in range(6):
        group = store.plan_group(100 + number, table, "test")
        for rotation in range(3):
            holders = tuple(table[(seat + rotation) % 3] for seat in range(3))
            nets = [rng.randint(-9, 9) for _ in range(2)]
            result = with_nets(finished(f"g{group.id}r{rotation}", 5), [*nets, -sum(nets)])
            store.record(group, rotation, holders, result, None, identity=group.seed)
        await competition.refresh_board()
        assert competition.board.matches == competition.leaderboard.matches == 3 * (number + 1)
    assert asked[0] == 0 and asked == sorted(set(asked))  # each refresh starts where the last ended
    fresh = score_versions(store.played_matches(), list(table))
    for version in table:
        got, want = competition.board.scores[version], fresh[version]
        assert dataclasses.asdict(got) == pytest.approx(dataclasses.asdict(want), abs=1e-12)
    assert competition.board.scores[table[0]].groups == 6
    store.close()


def a_played_result(match_id: str, seed: int) -> MatchResult:
    """A 4-seat result as a table reports it: the match's rules, a disqualified seat's
    faults, counters that differ seat by seat."""
    seats = [
        msgspec.structs.replace(seat, net_chips=7 * i - 10, decisions=20 + i, think_ms=3 * i)
        for i, seat in enumerate(finished(match_id, seed, players=4).seats)
    ]
    seats[2] = msgspec.structs.replace(
        seats[2],
        status="disqualified",
        faults=[FaultRecord("timeout", 2, "no reply to request 9 within 1100 ms")],
    )
    return msgspec.structs.replace(
        finished(match_id, seed, players=4), rules=Rules().to_dict(), hands=10, seats=seats
    )


def test_a_result_is_kept_packed_and_read_back_whole(tmp_path: Path) -> None:
    # Results are kept for ever, so their bytes are what the database grows by.
    competition = open_competition(tmp_path)
    store = competition.store
    group = admitted_group(store, ("alice", "bob", "carol", "dave"))
    result = a_played_result("g1r0", 5)
    store.record(group, 0, group.versions, result, None, identity=5)
    found = store.match("g1r0")
    assert found is not None and found[3] == result
    with sqlite3.connect(store.path) as raw:
        (stored,) = raw.execute("SELECT result FROM matches").fetchone()
    as_json = msgspec.json.encode(result)
    assert isinstance(stored, bytes) and len(stored) * 3 < len(as_json), (len(stored), len(as_json))
    store.close()


def test_a_result_kept_as_json_text_by_an_older_server_reads_as_it_did(tmp_path: Path) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    group = admitted_group(store, ("alice", "bob", "carol", "dave"))
    result = a_played_result("g1r0", 5)
    store.record(group, 0, group.versions, result, None, identity=5)
    with sqlite3.connect(store.path) as raw:
        raw.execute("UPDATE matches SET result = ?", (msgspec.json.encode(result).decode(),))
    found = store.match("g1r0")
    assert found is not None and found[3] == result
    store.close()


@pytest.mark.parametrize(
    ("stored", "why"),
    [(b"\x09abc", "unknown version"), (b"\x01not a frame", "does not unpack")],
)
def test_a_damaged_packed_result_is_one_line(tmp_path: Path, stored: bytes, why: str) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    group = admitted_group(store, ("alice", "bob", "carol", "dave"))
    store.record(group, 0, group.versions, a_played_result("g1r0", 5), None, identity=5)
    with sqlite3.connect(store.path) as raw:
        raw.execute("UPDATE matches SET result = ?", (stored,))
    with pytest.raises(StoreError, match=f"match g1r0 holds a bad value .*{why}") as refused:
        store.match("g1r0")
    assert "\n" not in str(refused.value)
    store.close()
