"""Fair tables: one owner (or linked accounts) never at one table; the collusion statistic.

The statistic is tested on in-process matches (``referee.scoring.policies``):
a giver and a taker written to feed each other (``attack_bots/feeding.py``),
an honest tracker and an honest random bot, every table of three of the four
played as duplicate rotation groups.  The feeding pair is listed; the honest
pair, whose strengths differ as much, is not.
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import httpx

from engine import Rules
from referee.match.convert import log_event
from referee.match.key import rotations
from referee.scoring.collusion import TableFlows, flows_from_events, pair_flows, suspicious
from referee.scoring.policies import play_match, random_policy, tracker
from referee.server.app import build_app, templates
from referee.server.collusion import collusion_report
from referee.server.competition_db import PlayedMatch
from referee.server.contest_db import households
from referee.server.play import GroupQueue
from referee.server.scheduler import Candidate, choose_table
from referee.server.scoring import Score, score_versions
from tests.clirun import newmarket
from tests.hostile.attack_bots.feeding import giver, taker
from tests.server.contest_fakes import admitted
from tests.server.inprocess import finished, open_competition

GIVER, TAKER, HONEST, WEAK = 1, 2, 3, 4


def test_one_owner_and_linked_accounts_never_share_a_table() -> None:
    # alice has two versions (as a resumed group or a race could offer), bob and carol are
    # linked (one person), dave and erin are strangers: every table of three has three
    # households.
    candidates = [
        Candidate(1, participant=10),
        Candidate(2, participant=10),
        Candidate(3, participant=11, linked=11),
        Candidate(4, participant=12, linked=11),
        Candidate(5, participant=13),
        Candidate(6, participant=14),
    ]
    scores = {c.version: Score(c.version, 3, 9, 0.0, -1.0, 1.0, 1, 1, 6) for c in candidates}
    rng = random.Random(7)
    seen_tables = set()
    for _ in range(300):
        choice = choose_table(candidates, scores, [], 3, 1.0, rng)
        assert choice is not None
        held = [next(c for c in candidates if c.version == v).household for v in choice.versions]
        assert len(set(held)) == 3, choice
        seen_tables.add(frozenset(choice.versions))
    assert len(seen_tables) > 5  # the rule narrows the tables, it does not fix one
    # Two households cannot fill a table of three: no table, rather than an unfair one.
    two = [c for c in candidates if c.household in (10, 11)]
    assert choose_table(two, scores, [], 3, 1.0, rng) is None


def test_linked_accounts_are_kept_apart_by_the_server(tmp_path: Path) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    try:
        ids = {name: admitted(store, name)[0] for name in ("alice", "bob", "carol", "dave")}
        config = str(competition.config.path)
        code, _out, err = newmarket("serve", "link-accounts", "alice", "bob", config)
        assert code == 0, err
        assert "'alice' and 'bob' linked: they never share a table" in err
        code, _out, err = newmarket("serve", "link-accounts", "alice", "zed", config)
        assert code == 2 and "no participant named 'zed'" in err
        assert households(store) == {ids["alice"]: ids["alice"], ids["bob"]: ids["alice"]}
        queue = GroupQueue(competition)
        for _ in range(50):
            choice = choose_table(queue.candidates(False), {}, [], 3, 1.0, queue.rng)
            assert choice is not None
            owners = {v.participant for v in store.versions() if v.id in choice.versions}
            assert not {ids["alice"], ids["bob"]} <= owners
    finally:
        store.close()


def feeding_tables(reps: int) -> list[TableFlows]:
    """Every table of three of the four, ``reps`` duplicate groups each, with their flows."""
    seating: dict[str, int] = {}
    policies = {
        GIVER: giver(lambda _m: seating.get("taker")),
        TAKER: taker(lambda _m: seating.get("giver")),
        HONEST: tracker(),
        WEAK: random_policy,
    }
    played, raw = [], []
    for rep in range(reps):
        for index, table in enumerate(itertools.combinations(sorted(policies), 3)):
            group = rep * 10 + index
            seed = random.Random(f"1/{rep}/{table}").getrandbits(64)
            for rotation, seats in enumerate(rotations(table)):
                seating.clear()
                if GIVER in seats and TAKER in seats:
                    seating.update(giver=seats.index(GIVER), taker=seats.index(TAKER))
                rngs = [random.Random(f"{seed}/{rotation}/{s}") for s in range(3)]
                match = play_match(Rules(), seed, [policies[v] for v in seats], rngs)
                outcome = match.outcome()
                paid = flows_from_events(log_event(event) for event in match.events())
                played.append(
                    PlayedMatch(
                        group, rotation, seed, seats, outcome.net_chips, outcome.hands_played
                    )
                )
                raw.append((f"g{group}r{rotation}", seats, outcome.hands_played, paid, group))
    scores = score_versions(played, sorted(policies))
    strength = {v: scores[v].score or 0.0 for v in policies}
    return [
        TableFlows(mid, seats, tuple(strength[v] for v in seats), hands, paid, deal)
        for mid, seats, hands, paid, deal in raw
    ]


def test_the_collusion_statistic_names_a_feeding_pair_and_not_an_honest_one() -> None:
    flows = pair_flows(feeding_tables(25))
    listed = suspicious(flows, z=4.0, min_matches=12)
    assert [(pair.giver, pair.taker) for pair in listed] == [(GIVER, TAKER)]
    (feeding,) = listed
    assert feeding.flow > feeding.expected + 300  # hundreds of chips beyond its prediction
    honest = next(p for p in flows if {p.giver, p.taker} == {HONEST, WEAK})
    assert honest.z < 3.0 and len(honest.matches) == len(feeding.matches)


def test_the_organisers_collusion_report_reads_the_match_logs(tmp_path: Path) -> None:
    # Two ladder matches whose logs say bob paid alice 30 chips; carol's with nobody.
    competition = open_competition(tmp_path)
    store = competition.store
    try:
        versions = [admitted(store, name)[1] for name in ("alice", "bob", "carol")]
        logs = tmp_path / "logs"
        logs.mkdir()
        for number in range(2):
            group = store.plan_group(number, tuple(versions), "test")
            log = logs / f"g{group.id}r0.jsonl"
            events = [
                {
                    "type": "event",
                    "n": 0,
                    "event": {
                        "type": "chips_paid",
                        "payer": 1,
                        "payee": 0,
                        "chips": 15,
                        "owed": 15,
                    },
                },
                {
                    "type": "event",
                    "n": 1,
                    "event": {
                        "type": "hand_swapped",
                        "seat": 1,
                        "price": 0,
                        "paid_to": None,
                        "hand": None,
                        "hand_size": 5,
                    },
                },
            ]
            log.write_text("".join(json.dumps(line) + "\n" for line in events))
            store.record(
                group, 0, versions, finished(f"g{group.id}r0", number), log, identity=number
            )
        # A missing log is counted, not guessed.
        group = store.plan_group(9, tuple(versions), "test")
        store.record(
            group, 0, versions, finished(f"g{group.id}r0", 9), logs / "gone.jsonl", identity=9
        )
        report = collusion_report(competition.config, store)
        assert report.matches == 2 and report.unread == 1
        assert report.pairs == []  # two matches are below the file's collusion_matches (12)
        code, out, _err = newmarket("serve", "collusion", str(competition.config.path))
        assert code == 0
        assert "2 ladder matches read (1 logs unreadable)" in out and "  none" in out
    finally:
        store.close()


async def test_the_organiser_reads_and_links_by_the_api_with_its_own_token(tmp_path: Path) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    try:
        tokens = {name: admitted(store, name)[2] for name in ("alice", "bob", "carol")}
        code, out, _err = newmarket("serve", "organiser-token", str(competition.config.path))
        assert code == 0
        organiser = out.strip()
        transport = httpx.ASGITransport(app=build_app(competition))
        async with httpx.AsyncClient(transport=transport, base_url="http://cup") as client:
            for headers in ({}, {"Authorization": f"Bearer {tokens['alice']}"}):
                assert (
                    await client.get("/api/organiser/contest", headers=headers)
                ).status_code == 404  # as an unknown address: nothing to attack here
                linked = await client.post(
                    "/api/organiser/links", json={"names": ["alice", "bob"]}, headers=headers
                )
                assert linked.status_code == 404
            me = {"Authorization": f"Bearer {organiser}"}
            linked = await client.post(
                "/api/organiser/links", json={"names": ["alice", "bob"]}, headers=me
            )
            assert linked.json() == {"linked": ["alice", "bob"], "new": True}
            missing = await client.post(
                "/api/organiser/links", json={"names": ["alice", "zed"]}, headers=me
            )
            assert (
                missing.status_code == 404
                and missing.json()["error"] == "no participant named 'zed'"
            )
            contest = (await client.get("/api/organiser/contest", headers=me)).json()
        assert contest["linked_accounts"] == [["alice", "bob"]]
        assert contest["dates"] == {"opens": None, "freeze": None, "finals": None, "ends": None}
        assert contest["collusion"]["pairs"] == []
        # The section the organiser's page includes renders the same data.
        html = templates().get_template("organiser_contest.html").render(contest=contest)
        assert "alice and bob" in html and "no pair beyond the threshold" in html
    finally:
        store.close()
