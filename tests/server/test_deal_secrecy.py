"""The server's deals: from its own key, never its seed, and unpublished while their group plays.

In process (``tests.server.inprocess``): results are recorded as a table
would record them, and the pages and the API are read as a participant, or
anyone, reads them.  A real attack bot at real tables is
``tests/hostile/test_deal_secrecy.py``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx
import pytest

from referee.match import FaultRecord, MatchResult
from referee.server.app import build_app
from referee.server.competition import Competition
from referee.server.config import load_config
from referee.server.play import group_matches
from referee.server.store import CompetitionStore, StoreError
from tests.server.inprocess import admitted_group, finished, open_competition

CARD_FAULT = "played 7H, which is not in its hand"


def result(match_id: str, net: tuple[int, int, int], fault: bool = False) -> MatchResult:
    played = finished(match_id, 1 << 100)  # a derived seed: far past any SQLite integer
    for seat, chips in zip(played.seats, net, strict=True):
        seat.net_chips = chips
    if fault:
        played.seats[0].faults = [FaultRecord("illegal_move", 1, CARD_FAULT)]
    return played


async def get(competition: Competition, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=build_app(competition))
    async with httpx.AsyncClient(transport=transport, base_url="http://cup") as client:
        return await client.get(path)


async def test_a_group_still_being_played_shows_no_seed_chips_or_card_in_a_fault(
    tmp_path: Path,
) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    try:
        group = admitted_group(store)
        keys = group_matches(competition, group, 0, set())
        # Rotation 0 finished, with a fault whose detail names a card; 1 and 2 to play.
        store.record(
            group, 0, keys[0].bots, result("g1r0", (9, -4, -5), True), None, identity=keys[0].seed
        )

        match = (await get(competition, "/api/matches/g1r0")).json()
        assert match["cards_public"] is False and match["seed"] is None
        assert "1 of 3 matches finished" in match["in_play"]
        assert all(seat["net_chips"] is None and not seat["faults"] for seat in match["seats"])
        alice = (await get(competition, "/api/participants/alice")).json()
        assert [fault["detail"] for fault in alice["faults"]] == [None]
        assert alice["faults"][0]["kind"] == "illegal_move"  # that it faulted is public
        assert [m["hands"] for m in alice["matches"]] == [None]
        assert alice["history"] == []  # one match's chips are its deal's
        page = (await get(competition, "/p/alice")).text
        assert "7H" not in page and "shown once its group has finished" in page
        assert "7H" not in (await get(competition, "/matches/g1r0")).text

        for rotation in (1, 2):
            played = result(f"g1r{rotation}", (0, 0, 0))
            key = keys[rotation]
            store.record(group, rotation, key.bots, played, None, identity=key.seed)

        match = (await get(competition, "/api/matches/g1r0")).json()
        assert match["cards_public"] is True and match["seed"] == 1 << 100
        alice = (await get(competition, "/api/participants/alice")).json()
        assert [fault["detail"] for fault in alice["faults"]] == [CARD_FAULT]
        assert len(alice["history"][0]["points"]) == 3
        assert CARD_FAULT in (await get(competition, "/p/alice")).text
        # The seed column keeps the public identity, never the derived seed.
        with sqlite3.connect(competition.config.database) as db:
            seeds = {row[0] for row in db.execute("SELECT seed FROM matches")}
        assert seeds == {group.seed}
    finally:
        store.close()


async def test_a_group_given_up_is_public_at_once(tmp_path: Path) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    try:
        group = admitted_group(store)
        key = group_matches(competition, group, 0, set())[0]
        store.record(group, 0, key.bots, result("g1r0", (1, 0, -1)), None, identity=key.seed)
        assert store.in_play(["g1r0"]) == {"g1r0"}
        store.abandon_group(group.id)  # never dealt again
        assert store.in_play(["g1r0"]) == set()
        assert (await get(competition, "/api/matches/g1r0")).json()["cards_public"] is True
    finally:
        store.close()


def test_every_rotation_of_a_group_is_dealt_from_the_key_and_not_its_seed(
    tmp_path: Path,
) -> None:
    competition = open_competition(tmp_path)
    try:
        group = admitted_group(competition.store)
        keys = group_matches(competition, group, 0, set())
        assert {key.seed for key in keys} == {group.seed}
        assert len({key.deal_seed for key in keys}) == 1  # a duplicate group: one deal
        assert keys[0].deal_seed != group.seed and keys[0].deal_seed >= 1 << 64
        # Another competition with the same seed and group deals other cards.
        (tmp_path / "other").mkdir()
        other = open_competition(tmp_path / "other")
        try:
            again = group_matches(other, admitted_group(other.store), 0, set())
            assert again[0].seed == keys[0].seed and again[0].deal_seed != keys[0].deal_seed
        finally:
            other.store.close()
    finally:
        competition.store.close()


def competition_file(tmp_path: Path, public: bool) -> Path:
    path = tmp_path / "cup.toml"
    flag = "true" if public else "false"
    path.write_text(f'[competition]\nname = "x"\nhouse_bots = []\npublic_deals = {flag}\n')
    return path


def test_public_deals_deal_the_seed_and_the_first_start_decides_for_good(tmp_path: Path) -> None:
    config = load_config(competition_file(tmp_path, public=True))
    competition = Competition(config, CompetitionStore.open(config.database))
    group = admitted_group(competition.store)
    keys = group_matches(competition, group, 0, set())
    assert keys[0].deal_seed == group.seed  # anyone who knows the seed knows the cards
    competition.store.close()

    secret = load_config(competition_file(tmp_path, public=False))
    store = CompetitionStore.open(secret.database)
    with pytest.raises(StoreError, match=r"competition\.public_deals: .* has dealt public cards"):
        Competition(secret, store)
    store.close()


def test_a_database_from_before_deal_keys_finishes_its_groups_on_their_public_seeds(
    tmp_path: Path,
) -> None:
    competition = open_competition(tmp_path)
    old = admitted_group(competition.store)
    competition.store.close()
    with sqlite3.connect(competition.config.database) as db:  # as an older server left it
        db.execute("DELETE FROM meta WHERE key IN ('deal_key', 'secret_deals_from')")

    config = competition.config
    reopened = Competition(config, CompetitionStore.open(config.database))
    try:
        resumed = group_matches(reopened, old, 0, {0})  # its rotations 1 and 2, as begun
        assert {key.deal_seed for key in resumed} == {old.seed}
        new = reopened.store.plan_group(99, old.versions, "test")
        assert group_matches(reopened, new, 0, set())[0].deal_seed != new.seed
    finally:
        reopened.store.close()


def test_the_deal_key_is_apart_from_the_signing_secret_and_stays_put(tmp_path: Path) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    key = store.meta("deal_key")
    assert key is not None and len(bytes.fromhex(key)) >= 16
    assert key != store.meta("secret")
    store.close()
    again = CompetitionStore.open(competition.config.database)
    assert again.meta("deal_key") == key
    assert again.group_deals(False) == competition.deals
    again.close()
