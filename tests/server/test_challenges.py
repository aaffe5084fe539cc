"""Challenges by the API: asked for, played at once on a table of their own, seen by the
requester and its opponents only, limited per hour, and never in the ranking."""

from __future__ import annotations

from pathlib import Path

import httpx
import trio

from referee.scoring.policies import random_policy, tracker
from referee.server.app import build_app
from referee.server.auth import SESSION_COOKIE
from referee.server.challenges import challenge_loop
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.competition_file import load_config
from referee.server.contest_db import challenge
from referee.server.contest_play import group_keys
from referee.server.play import Table
from tests.server.contest_fakes import PolicyTable, admitted, asgi_client, contest

CUP = """[competition]
name = "cup"
house_bots = []
[challenges]
per_hour = 2
"""


async def test_a_challenge_is_played_at_once_and_is_never_in_the_ranking(tmp_path: Path) -> None:
    path = tmp_path / "cup.toml"
    path.write_text(CUP)
    config = load_config(path)
    competition = Competition(config, CompetitionStore.open(config.database))
    store = competition.store
    people = {name: admitted(store, name) for name in ("alice", "bob", "carol", "dave")}
    policies = {version: tracker() for _p, version, _t in people.values()}
    policies[people["carol"][1]] = random_policy

    async def open_table(_number: int) -> Table:
        return PolicyTable(policies)

    def token(name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {people[name][2]}"}

    transport = httpx.ASGITransport(app=build_app(competition))
    try:
        async with (
            httpx.AsyncClient(transport=transport, base_url="http://cup") as client,
            trio.open_nursery() as nursery,
        ):
            nursery.start_soon(challenge_loop, competition, 9, open_table)
            asked = await client.post(
                "/api/challenges", json={"opponents": ["bob", "carol"]}, headers=token("alice")
            )
            assert asked.status_code == 201, asked.text
            made = asked.json()
            assert made["rated"] is False and made["status"] in ("waiting", "playing")
            assert [seat["label"] for seat in made["table"]] == ["alice v1", "bob v1", "carol v1"]
            with trio.fail_after(60):
                while (found := challenge(store, made["id"])) is None or found.status != "finished":
                    await trio.sleep(0.05)
            seen = (
                await client.get(f"/api/challenges/{made['id']}", headers=token("alice"))
            ).json()
            assert seen["status"] == "finished" and len(seen["matches"]) == 3
            assert sum(entry["chips"] for entry in seen["net_chips"]) == sum(
                sum(match["net_chips"]) for match in seen["matches"]
            )
            # The opponents see it; nobody else, with a token or without.
            bob = await client.get(f"/api/challenges/{made['id']}", headers=token("bob"))
            assert bob.status_code == 200
            for headers in (token("dave"), {}):
                other = await client.get(f"/api/challenges/{made['id']}", headers=headers)
                assert other.status_code == 404
            mine = (await client.get("/api/challenges", headers=token("bob"))).json()
            assert [c["id"] for c in mine["challenges"]] == [made["id"]]
            # Never in the ranking: the ladder has no match, the leaderboard no groups.
            assert store.match_count() == 0
            await competition.refresh_board()
            board = (await client.get("/api/leaderboard")).json()
            assert len(board["rows"]) == 4 and all(row["matches"] == 0 for row in board["rows"])
            # Refusals: one line each.
            refused = await client.post(
                "/api/challenges", json={"opponents": ["zed"]}, headers=token("alice")
            )
            assert refused.status_code == 400
            assert (
                refused.json()["error"]
                == "'zed' has no current version to challenge (see /challenge)"
            )
            alone = await client.post(
                "/api/challenges", json={"opponents": ["bob"]}, headers=token("alice")
            )
            assert alone.status_code == 400  # no house bot to fill the third seat
            assert alone.json()["error"] == "a table needs 3 seats: pick 2 opponents"
            stranger = await client.post("/api/challenges", json={"opponents": ["bob", "dave"]})
            assert stranger.status_code == 401
            second = await client.post(
                "/api/challenges", json={"opponents": ["bob", "dave"]}, headers=token("alice")
            )
            assert second.status_code == 201
            third = await client.post(
                "/api/challenges", json={"opponents": ["carol", "dave"]}, headers=token("alice")
            )
            assert third.status_code == 429
            assert third.json()["error"] == "challenge limit: 2 an hour; try again later"
            nursery.cancel_scope.cancel()
    finally:
        store.close()


async def test_a_challenge_is_refused_without_csrf_and_once_the_finals_start(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cup.toml"
    path.write_text(CUP + '[phases]\nfinals = "2026-12-21T00:00Z"\n')
    config = load_config(path)
    competition = Competition(config, CompetitionStore.open(config.database))
    store = competition.store
    people = {name: admitted(store, name) for name in ("alice", "bob", "carol")}
    transport = httpx.ASGITransport(app=build_app(competition))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://cup") as client:
            # A browser signed in as alice, but a form without its CSRF token (another site's).
            cookie = store.open_session(people["alice"][0], 3600)
            client.cookies.set(SESSION_COOKIE, cookie)
            forged = await client.post(
                "/challenge", data={"opponent1": "bob", "opponent2": "carol"}
            )
            assert forged.status_code == 403 and "CSRF token missing or wrong" in forged.text
            competition.clock = lambda: 1_800_000_000.0  # 2027: the finals have started
            late = await client.post(
                "/api/challenges",
                json={"opponents": ["bob", "carol"]},
                headers={"Authorization": f"Bearer {people['alice'][2]}"},
            )
            assert late.status_code == 403
            assert late.json()["error"] == (
                "challenges ended when the finals started: the tables are the finals' now"
            )
        assert challenge(store, 1) is None
    finally:
        store.close()


async def test_the_hourly_limit_is_each_requesters_own_and_each_challenge_has_fresh_cards(
    tmp_path: Path,
) -> None:
    """Issue 30's "rate-limited per hour ... on fresh deals": alice's spent limit is not
    bob's, it comes back an hour after her first challenge (the competition's clock), and
    no two challenges of the same table, nor the ladder, deal the same cards."""
    with contest(tmp_path, CUP, ("alice", "bob", "carol")) as (competition, people):
        now = [1_700_000_000.0]
        competition.clock = lambda: now[0]

        def token(name: str) -> dict[str, str]:
            return {"Authorization": f"Bearer {people[name][2]}"}

        async def ask(name: str, *opponents: str) -> int:
            answer = await client.post(
                "/api/challenges", json={"opponents": list(opponents)}, headers=token(name)
            )
            return answer.status_code

        async with asgi_client(build_app(competition)) as client:
            assert await ask("alice", "bob", "carol") == 201
            now[0] += 600
            assert await ask("alice", "bob", "carol") == 201
            assert await ask("alice", "bob", "carol") == 429
            assert await ask("bob", "alice", "carol") == 201  # his own hour, not hers
            now[0] += 3600 - 600 - 1  # a second short of an hour after her first
            assert await ask("alice", "bob", "carol") == 429
            now[0] += 2  # past the hour
            assert await ask("alice", "bob", "carol") == 201
            assert await ask("alice", "bob", "carol") == 429  # her second is within the hour
        store = competition.store
        asked = [challenge(store, number) for number in (1, 2, 4)]  # alice's, one table
        deals = set()
        for found in asked:
            assert found is not None
            keys = group_keys("c", found.seed, found.deal_key, 0, found.versions, 100)
            deals.add(tuple(key.deal_seed for key in keys))
        assert len(deals) == 3
        ladder = store.meta("deal_key")
        assert ladder is not None and ladder not in {found.deal_key for found in asked if found}
