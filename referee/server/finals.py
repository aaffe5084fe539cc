"""The final evaluation: after the freeze, the finalists play a fixed number of duplicate
groups on fresh secret deals, and the result is a ranking of its own.

* **Who.**  The last admitted version of each participant (house bots are the
  organiser's sparring partners and do not play), or only the ladder's top
  ``[finals] top`` of them.
* **Where.**  ``[finals] groups`` duplicate rotation groups; each group's table
  is chosen so that every pair of finalists meets about equally often
  (``plan_tables``: the table whose pairs have met least, then whose members
  have played least; ties by a seeded draw), never two of one household
  (``[fair_tables]``, linked accounts).
* **Cards.**  A deal key drawn for the finals alone (``DealKey.generate``),
  kept in the finals' record: nobody, not even a ladder match, has seen them.
* **Ranking.**  The ladder's fit over the finals' matches only, with its
  score and rank intervals (``referee.server.scoring.score_versions``, a
  seeded bootstrap), published at ``/finals`` and ``/api/finals`` once every
  group is in, with the number of groups and how many ranks are *separated*
  (a version whose 95% rank interval is its rank alone).
* **Re-run.**  The record (finalists, tables, seed, deal key) is everything the
  finals were: ``newmarket serve finals-rerun`` plays it again on a table of
  this machine and compares the ranking with the published one.

The server starts the finals when the ``finals`` date comes (``finals_loop``),
on a table of their own; a restart plays only the matches still missing.
"""

from __future__ import annotations

import itertools
import random
import sys
import traceback
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import trio

from referee.match.dealkey import DealKey
from referee.match.key import derive_seed
from referee.server.busy import written
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore, PlayedMatch, Version
from referee.server.competition_file import CompetitionConfig
from referee.server.contest_db import (
    FinalsRecord,
    contest_match_ids,
    contest_played,
    finals_record,
    finish_finals,
    households,
    start_finals,
)
from referee.server.contest_events import announce
from referee.server.contest_play import group_keys, play_keys
from referee.server.phases import current
from referee.server.play import POLL, RESTART_DELAY, OpenTable, Table, specs, wait_for_room
from referee.server.scoring import Score, score_versions
from referee.server.worker_table import WorkerError

KIND = "finals"
MATCH_ATTEMPTS = 2  # table workers one finals match may cost before it is left out


def finalists(competition: Competition, scores: Mapping[int, Score], top: int) -> list[Version]:
    """Each participant's last admitted version, or the ladder's ``top`` of them."""
    playing = [v for v in competition.store.playing_versions() if not competition.is_house(v)]
    playing = [v for v in playing if v.runtime != "remote"]  # the finals' table is local
    if top:
        playing.sort(key=lambda v: scores[v.id].rank if v.id in scores else 1 << 30)
        playing = playing[:top]
    return sorted(playing, key=lambda v: v.id)


def plan_tables(
    versions: Sequence[int],
    household: Mapping[int, int],
    groups: int,
    players: int,
    rng: random.Random,
) -> list[tuple[int, ...]]:
    """``groups`` tables of ``players`` versions, pairs meeting about equally often.

    ``household`` maps a version to whoever it must not meet (its owner's
    household).  Greedy, group by group: first the version that has played
    least, then each next seat to the version that has met those already
    seated least (then played least); a version of a household already seated
    never sits.  An empty list when no table can be filled.
    """
    met: Counter[tuple[int, int]] = Counter()
    played: Counter[int] = Counter()
    tables: list[tuple[int, ...]] = []
    for _ in range(groups):
        draw = {v: rng.random() for v in versions}
        first = min(versions, key=lambda v: (played[v], draw[v]))
        table = [first]
        while len(table) < players:
            seated = {household[v] for v in table}
            free = [v for v in versions if v not in table and household[v] not in seated]
            if not free:
                return []
            table.append(
                min(
                    free,
                    key=lambda v: (
                        sum(met[min(v, s), max(v, s)] for s in table),
                        played[v],
                        draw[v],
                    ),
                )
            )
        for a, b in itertools.combinations(sorted(table), 2):
            met[a, b] += 1
        played.update(table)
        tables.append(tuple(table))
    return tables


def plan_finals(competition: Competition) -> FinalsRecord | str:
    """The finals' record, written; or why they cannot be played (one line)."""
    config = competition.config
    store = competition.store
    chosen = finalists(competition, competition.board.scores, config.contest.finals.top)
    linked = households(store)
    household = {v.id: linked.get(v.participant, v.participant) for v in chosen}
    seed = derive_seed(config.seed, "finals", store.last_group_id())
    rng = random.Random(seed)
    tables = plan_tables(
        [v.id for v in chosen], household, config.contest.finals.groups, config.players, rng
    )
    if not tables:
        return (
            f"the finals need {config.players} finalists of different households; "
            f"there are {len(set(household.values()))}"
        )
    return start_finals(store, [v.id for v in chosen], seed, DealKey.generate().to_text(), tables)


def prefix(finals: FinalsRecord, index: int) -> str:
    return f"f{finals.id}g{index}r"


def ranking(
    finals: FinalsRecord, played: Sequence[PlayedMatch], names: Mapping[int, str]
) -> dict[str, Any]:
    """The published ranking: each finalist's score, intervals, and the separated ranks."""
    scores = score_versions(played, finals.versions)
    rows = []
    for version in sorted(finals.versions, key=lambda v: scores[v].rank):
        score = scores[version]
        rows.append(
            {
                "rank": score.rank,
                "version": version,
                "name": names.get(version, str(version)),
                "score": None if score.score is None else round(score.score, 4),
                "low": None if score.low is None else round(score.low, 4),
                "high": None if score.high is None else round(score.high, 4),
                "rank_low": score.rank_low,
                "rank_high": score.rank_high,
                "separated": score.rank_low == score.rank_high == score.rank,
            }
        )
    return {
        "finals": finals.id,
        "groups": len({m.group_id for m in played}),
        "groups_planned": finals.groups,
        "matches": len(played),
        "separated": sum(1 for row in rows if row["separated"]),
        "ranking": rows,
    }


def owners(store: CompetitionStore, versions: Sequence[int]) -> list[int]:
    """The participants of ``versions``, for an announcement."""
    found = (store.version(v) for v in versions)
    return sorted({v.participant for v in found if v is not None})


def labels(store: CompetitionStore, versions: Sequence[int]) -> dict[int, str]:
    found = {}
    for version_id in versions:
        version = store.version(version_id)
        found[version_id] = version.label if version is not None else f"version {version_id}"
    return found


async def play_finals(
    competition: Competition, finals: FinalsRecord, open_table: OpenTable, number: int
) -> None:
    """Every match of ``finals`` not stored yet, then its ranking published.

    A match whose table worker fails is played again on a new one; after
    ``MATCH_ATTEMPTS`` failures it is left out (its group's other seatings still
    count) and the server's log says which: the finals are never stopped by one
    table, and a platform's failure (a full disk) waits for room as the ladder does.
    """
    store = competition.store
    done = set(contest_match_ids(store, KIND, finals.id))
    table = await open_table(number)
    try:
        for index, members in enumerate(finals.tables):
            keys = group_keys(
                prefix(finals, index),
                finals.seed,
                finals.deal_key,
                index,
                members,
                competition.config.rules.starting_chips,
            )
            competition.status = f"finals: group {index + 1} of {finals.groups}"
            for key in keys:
                for attempt in range(1, MATCH_ATTEMPTS + 1):
                    await wait_for_room(competition)
                    try:
                        await play_keys(competition, table, KIND, finals.id, index, [key], done)
                        break
                    except WorkerError as error:
                        await table.aclose()
                        print(
                            f"newmarket serve: finals match {key.match_id} failed "
                            f"(attempt {attempt} of {MATCH_ATTEMPTS}): {error.text}",
                            file=sys.stderr,
                            flush=True,
                        )
                        await trio.sleep(RESTART_DELAY)
                        table = await open_table(number)
                else:
                    print(
                        f"newmarket serve: finals match {key.match_id} left out after "
                        f"{MATCH_ATTEMPTS} failed tables",
                        file=sys.stderr,
                        flush=True,
                    )
    finally:
        await table.aclose()
    result = ranking(finals, contest_played(store, KIND, finals.id), labels(store, finals.versions))
    await written("publishing the finals", partial(finish_finals, store, finals.id, result))
    announce(
        store,
        "finals_published",
        owners(store, finals.versions),
        f"the final ranking is published: {result['separated']} of "
        f"{len(result['ranking'])} ranks separated over {result['groups']} groups",
        "/finals",
    )
    competition.status = "finals finished: the ranking is published"
    competition.notify()


async def finals_loop(competition: Competition, number: int, open_table: OpenTable) -> None:
    """Start the finals when their date comes, on table ``number``; finish them after a restart.

    A bug on the finals' path is told to the operator and tried again a minute later:
    it must not end the server that serves the ladder and the pages.
    """
    while True:
        try:
            await _finals_step(competition, number, open_table)
            return
        except Exception as error:
            traceback.print_exc(file=sys.stderr)
            competition.status = f"finals wait: the server failed ({type(error).__name__})"
            await trio.sleep(60)


async def _finals_step(competition: Competition, number: int, open_table: OpenTable) -> None:
    while True:
        finals = finals_record(competition.store)
        if finals is not None and finals.finished_at is not None:
            return
        if finals is None and current(competition).name in ("finals", "ended"):
            await competition.refresh_board()  # the top N are the ladder's latest
            planned = await written("planning the finals", partial(plan_finals, competition))
            if isinstance(planned, str):
                competition.status = f"finals wait: {planned}"
            else:
                finals = planned
                announce(
                    competition.store,
                    "finals_started",
                    owners(competition.store, finals.versions),
                    f"the finals started: {len(finals.versions)} finalists, {finals.groups} groups",
                    "/finals",
                )
        if finals is not None:
            await play_finals(competition, finals, open_table, number)
            return
        with trio.move_on_after(POLL):
            await competition.changed.wait()


def rerun_lines(published: Mapping[str, Any] | None, again: Mapping[str, Any]) -> list[str]:
    """What the re-run found, a line per finalist, and whether it is the published ranking."""
    lines = [
        f"finals {again['finals']}: {again['groups']} groups, {again['matches']} matches, "
        f"{again['separated']} of {len(again['ranking'])} ranks separated with 95% confidence"
    ]
    for row in again["ranking"]:
        lines.append(
            f"  {row['rank']}. {row['name']}  {row['score']}  "
            f"[{row['low']}, {row['high']}]  ranks {row['rank_low']}-{row['rank_high']}"
        )
    if published is None:
        lines.append("the finals have no published ranking yet to compare with")
    elif [r["version"] for r in published["ranking"]] == [r["version"] for r in again["ranking"]]:
        lines.append("the same ranking as the published one")
    else:
        lines.append(
            "NOT the published ranking: a bot that is not deterministic, or a changed record"
        )
    return lines


async def replay_finals(
    config: CompetitionConfig, store: CompetitionStore, table: Table
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """Play the latest finals again from their record on ``table``, storing nothing;
    (the published ranking, the re-run's)."""
    finals = finals_record(store)
    if finals is None:
        raise LookupError("no finals have started in this competition")
    competition = Competition(config, store)
    played: list[PlayedMatch] = []
    for index, members in enumerate(finals.tables):
        for key in group_keys(
            prefix(finals, index),
            finals.seed,
            finals.deal_key,
            index,
            members,
            config.rules.starting_chips,
        ):
            result = await table.play(key, config.rules, specs(competition, key.bots), key.bots)
            seats = sorted(result.seats, key=lambda seat: seat.seat)
            played.append(
                PlayedMatch(
                    index,
                    key.rotation,
                    key.seed,
                    key.bots,
                    tuple(seat.net_chips for seat in seats),
                    result.hands,
                    tuple(seat.status == "disqualified" for seat in seats),
                )
            )
    return finals.ranking, ranking(finals, played, labels(store, finals.versions))


def rerun_finals(config: CompetitionConfig, store: CompetitionStore) -> list[str]:
    """``newmarket serve finals-rerun``: the finals played again on a local table worker.

    Its logs go to ``rerun-logs/`` beside ``logs/``: the finals' own logs are the
    evidence of the published result and are never overwritten.
    """
    from referee.server.sandboxing import sandbox_setting
    from referee.server.worker_table import WorkerTable
    from referee.storage.private_files import private_dir

    logs = config.data / "rerun-logs"
    private_dir(logs)

    async def run() -> tuple[dict[str, Any] | None, dict[str, Any]]:
        table = await WorkerTable.start(
            config.time_control, logs, 0, sandbox_setting(config), config.storage.stderr_bytes
        )
        try:
            return await replay_finals(config, store, table)
        finally:
            await table.aclose()

    try:
        published, again = trio.run(run)
    except LookupError as error:
        return [str(error)]
    return rerun_lines(published, again)
