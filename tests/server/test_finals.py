"""The finals: planned at their date, played on fresh deals, ranked apart from the ladder,
and played again from their record to the same ranking.

The tables are ``PolicyTable``s (in-process policies, the cards from each
match's ``deal_seed`` as a worker's would be), and the clock is injected.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
import trio.testing

from referee.bots import resolve_bot
from referee.match.key import MatchKey
from referee.match.packed_result import unpack
from referee.match.result import MatchResult
from referee.scoring.policies import noisy, random_policy, tracker
from referee.server.app import build_app
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.competition_file import load_config
from referee.server.contest_db import contest_match_ids, contest_played, finals_record
from referee.server.finals import finals_loop, plan_tables, replay_finals
from referee.server.play import Table, local_tables
from referee.server.worker_table import WorkerError
from tests.clirun import newmarket
from tests.server.contest_fakes import PolicyTable, admitted

CUP = """[competition]
name = "cup"
house_bots = []
[phases]
freeze = "2026-12-20T18:00Z"
finals = "2026-12-21T00:00Z"
[finals]
groups = 8
"""


def test_every_pair_of_finalists_meets_about_equally_often() -> None:
    versions = list(range(1, 7))
    tables = plan_tables(versions, {v: v for v in versions}, 40, 3, random.Random(3))
    assert len(tables) == 40
    met = Counter(pair for t in tables for pair in itertools.combinations(sorted(t), 2))
    counts = [met[p] for p in itertools.combinations(versions, 2)]
    assert max(counts) - min(counts) <= 2, met
    seats = Counter(v for t in tables for v in t)
    assert max(seats.values()) - min(seats.values()) <= 1, seats
    # Linked accounts (5 and 6) never meet, and still play as often as the others.
    linked = plan_tables(versions, {v: v for v in versions} | {6: 5}, 40, 3, random.Random(3))
    assert not any({5, 6} <= set(t) for t in linked)
    seats = Counter(v for t in linked for v in t)
    assert max(seats.values()) - min(seats.values()) <= 2, seats


async def test_the_finals_start_at_their_date_and_rerun_to_the_same_ranking(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cup.toml"
    path.write_text(CUP)
    config = load_config(path)
    competition = Competition(config, CompetitionStore.open(config.database))
    store = competition.store
    try:
        versions = [admitted(store, name)[1] for name in ("ann", "ben", "cat", "dan")]
        policies = {
            versions[0]: tracker(),
            versions[1]: noisy(tracker(), 0.3),
            versions[2]: noisy(tracker(), 0.7),
            versions[3]: random_policy,
        }
        tables: list[PolicyTable] = []

        async def open_table(_number: int) -> Table:
            tables.append(PolicyTable(policies))
            return tables[-1]

        competition.clock = lambda: datetime.fromisoformat("2026-12-21T00:00Z").timestamp()
        await finals_loop(competition, 9, open_table)
        finals = finals_record(store)
        assert finals is not None and finals.ranking is not None
        assert sorted(finals.versions) == versions and len(finals.tables) == 8
        ranking = finals.ranking
        assert ranking["groups"] == 8 and ranking["matches"] == 24
        assert [row["rank"] for row in ranking["ranking"]] == [1, 2, 3, 4]
        assert 0 <= ranking["separated"] <= 4
        # Never on the ladder: the ladder's matches are its own.
        assert store.played_matches() == [] and store.match_count() == 0
        # Published as a page and as JSON.
        transport = httpx.ASGITransport(app=build_app(competition))
        async with httpx.AsyncClient(transport=transport, base_url="http://cup") as client:
            page = (await client.get("/finals")).text
            assert "8 duplicate groups (24 matches)" in page
            assert "of 4 ranks separated with 95% confidence" in page
            shown = (await client.get("/api/finals")).json()
            assert {key: value for key, value in shown.items() if key != "logs"} == ranking
            # Each match with its log's address, now that the ranking is out.
            assert [entry["log"] for entry in shown["logs"]] == [
                f"/api/matches/{mid}/log" for mid in contest_match_ids(store, "finals", finals.id)
            ]
            assert len(shown["logs"]) == 24
        # The record is all it takes: played again, the same cards give the same ranking.
        published, again = await replay_finals(config, store, PolicyTable(policies))
        assert published == ranking
        assert again == ranking
        # Fresh deals: a key of the finals' own, and a deal of its own for each group.
        assert finals.deal_key != store.meta("deal_key")
        played = contest_played(store, "finals", finals.id)
        assert len({m.seed for m in played}) == 8
        assert len(tables) == 1 and len(tables[0].played) == 24  # one table, every match once
    finally:
        store.close()


async def test_a_failed_finals_table_is_replaced_and_the_finals_still_finish(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cup.toml"
    path.write_text(CUP.replace("groups = 8", "groups = 2"))
    config = load_config(path)
    competition = Competition(config, CompetitionStore.open(config.database))
    store = competition.store
    try:
        versions = [admitted(store, name)[1] for name in ("ann", "ben", "cat")]
        policies = {v: tracker() for v in versions}
        opened = 0

        class Dying(PolicyTable):
            async def play(self, key: MatchKey, *args: Any) -> MatchResult:
                if key.match_id.endswith("g1r2") and opened < 2:
                    raise WorkerError("the table worker ended (killed by signal 9)", -9)
                return await super().play(key, *args)

        async def open_table(_number: int) -> Table:
            nonlocal opened
            opened += 1
            return Dying(policies)

        competition.clock = lambda: datetime.fromisoformat("2026-12-21T00:00Z").timestamp()
        await finals_loop(competition, 9, open_table)
        finals = finals_record(store)
        assert finals is not None and finals.ranking is not None
        # g1r2 failed on the first table; a second played it and the rest.
        assert opened == 2 and finals.ranking["matches"] == 6
        err = capsys.readouterr().err
        assert err.count("finals match f1g1r2 failed (attempt 1 of 2)") == 1
        assert "the final ranking is published" in err
    finally:
        store.close()


def test_finals_rerun_plays_the_record_again_with_real_bots_to_the_same_ranking(
    tmp_path: Path,
) -> None:
    # Bundled bots in real table workers: the published finals, then `finals-rerun`.
    path = tmp_path / "cup.toml"
    path.write_text(
        CUP.replace("groups = 8", "groups = 1")
        + "[tables]\nhand_limit = 4\n"
        + '[sandbox]\nlevel = "none"\n'  # bundled bots; the sandbox has tests of its own
    )
    config = load_config(path)
    store = CompetitionStore.open(config.database)
    try:
        # Participants play bundled bots, under names of their own (a bundled bot's is reserved).
        for name, bot in (("ann", "random"), ("bea", "tracker"), ("cal", "lowest")):
            participant, _token = store.add_participant(name)
            version = store.add_version(participant.id, "bundled", bot, "", 0)
            store.decide(version.id, "admitted", "ok", "", resolve_bot(name, bot).to_json())

        async def finals() -> None:
            competition = Competition(config, store)
            competition.clock = lambda: datetime.fromisoformat("2026-12-22T00:00Z").timestamp()
            await finals_loop(competition, 9, local_tables(competition))

        trio.run(finals)
        published = finals_record(store)
        assert published is not None and published.ranking is not None
        logs = sorted(p.name for p in config.logs_dir.iterdir())
        assert logs == ["f1g0r0.nmr", "f1g0r1.nmr", "f1g0r2.nmr"]  # compact records
        # Each match's whole result is kept packed, as the ladder's are.
        for match_id, stored, net_chips in store.connection.execute(
            "SELECT match_id, result, net_chips FROM contest_matches ORDER BY match_id"
        ).fetchall():
            kept = unpack(stored)
            assert kept.match_id == match_id and kept.hands >= 1
            assert [seat.net_chips for seat in kept.seats] == json.loads(net_chips)
        before = (config.logs_dir / "f1g0r0.nmr").read_bytes()
        code, out, err = newmarket("serve", "finals-rerun", str(path))
        assert code == 0, err
        assert "finals 1: 1 groups, 3 matches" in out
        assert out.strip().endswith("the same ranking as the published one")
        # The evidence stays as it was: the re-run's logs are its own.
        assert (config.logs_dir / "f1g0r0.nmr").read_bytes() == before
        assert (config.data / "rerun-logs" / "f1g0r0.nmr").exists()
    finally:
        store.close()
