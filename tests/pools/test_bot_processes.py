"""Bot processes that scale: which process plays which deal, in leagues of 8 to 64 bots.

The rule that picks a table worker's bot processes (``referee.tables.bot_processes``)
is driven here, in-process, through whole leagues as ``newmarket league`` schedules
and hands them out (``round_robin_jobs``, the pool's split between two table workers),
with a fresh number for each process it starts.  The checks are what an organiser
would notice: no process ever plays two matches dealt from the same cards, the
processes started per match do not grow with the number of bots, and no worker
runs more bot processes at once than ``--bot-processes`` gives it.  That real bot
processes follow the rule is ``tests/league/test_fair_deals.py``'s part.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
from pathlib import Path

import pytest

from referee.league.league_file import parse_config
from referee.league.runner import round_robin_jobs
from referee.match.dealkey import DealKey
from referee.tables.bot_processes import ProcessPlan
from referee.tables.job import TableJob
from referee.tables.local_pool import BOT_PROCESSES, _Waiting, processes_per_bot

WORKERS = 2


def league_jobs(tmp_path: Path, bots: int, schedule: str = "") -> list[TableJob]:
    entries = "".join(f'[[bots]]\nname = "b{i}"\ncommand = "lowest"\n' for i in range(bots))
    text = f"[league]\nseed = 7\ntable_size = 4\nhand_limit = 1\n{schedule}\n{entries}"
    path = tmp_path / "scale.toml"
    path.write_text(text)
    return round_robin_jobs(parse_config(text, path), 7, DealKey.public())


@dataclasses.dataclass
class Played:
    matches: int = 0
    started: int = 0
    most: int = 0  # the most processes one worker ran at once
    deals: dict[int, list[int]] = dataclasses.field(default_factory=dict)  # process: its deals


def play_out(
    jobs: list[TableJob], bot_processes: int = BOT_PROCESSES, per_bot: int | None = None
) -> Played:
    """Hand ``jobs`` to two workers as the pool does, each picking processes by the rule."""
    waiting = _Waiting(jobs, WORKERS)
    per_bot = processes_per_bot(jobs) if per_bot is None else per_bot
    plans = [ProcessPlan[int](bot_processes, per_bot) for _ in range(WORKERS)]
    numbers = itertools.count()
    played = Played()
    running = True
    while running:
        running = False
        for slot, plan in enumerate(plans):  # workers of equal speed take turns
            job = waiting.take(slot)
            if job is None:
                continue
            running = True
            chosen, _ending = plan.seat(job.key.bots, job.key.deal_seed)
            for seat, process in enumerate(chosen):
                if process is None:
                    chosen[seat] = plan.add(job.key.bots[seat], next(numbers))
                    played.started += 1
            played.most = max(played.most, len(plan))
            playing = [process for process in chosen if process is not None]
            plan.played(playing, job.key.deal_seed)
            for process in playing:
                played.deals.setdefault(process.handle, []).append(job.key.deal_seed)
            played.matches += 1
    return played


def deals_met_twice(played: Played) -> list[int]:
    return [
        process
        for process, deals in played.deals.items()
        if max(collections.Counter(deals).values()) > 1
    ]


@pytest.mark.parametrize("bots", [8, 32, 64])
def test_processes_started_per_match_stay_flat_as_the_league_grows(
    tmp_path: Path, bots: int
) -> None:
    jobs = league_jobs(tmp_path, bots)
    played = play_out(jobs)
    assert played.matches == len(jobs)
    assert not deals_met_twice(played)
    # One process per bot and seat rotation is the least fairness allows (every rotation
    # of a bot's table shares its deal); the handing out may cost a few more at the end.
    least = bots * 4
    assert least <= played.started <= least + 2 * 4 * WORKERS
    # Processes started per match: 0.11 at 8 bots, 0.33 at 32, 0.19 at 64, where the
    # old bound of two idle processes per seat started 2.8 per match at 32 bots.
    assert played.started / played.matches < 0.4
    assert played.most <= bots + 4


def test_a_tight_bound_holds_the_processes_and_keeps_the_deals_fair(tmp_path: Path) -> None:
    jobs = league_jobs(tmp_path, 64)
    played = play_out(jobs, bot_processes=32)
    assert played.most <= 32
    assert not deals_met_twice(played)
    # Memory traded for start-ups: more than the unbounded league, fewer than a start per seat.
    assert 64 * 4 < played.started < 4 * played.matches


def test_a_gauntlet_keeps_a_process_per_candidate_for_its_field_bots(tmp_path: Path) -> None:
    # Every candidate meets a field table with the same deal, so a field bot needs a
    # process per candidate within one rotation; the pool sizes each bot's pool by it.
    schedule = '[schedule]\nkind = "gauntlet"\ncandidates = 3\n'
    jobs = league_jobs(tmp_path, 32, schedule)
    assert processes_per_bot(jobs) == 3
    played = play_out(jobs, bot_processes=1000)
    assert not deals_met_twice(played)
    # A field bot needs a process per candidate and rotation: 29 * 3 * 4 + 3 * 4 at least.
    assert 360 <= played.started <= 360 + 2 * 4 * WORKERS
    one_each = play_out(jobs, bot_processes=1000, per_bot=1)
    assert not deals_met_twice(one_each)
    assert one_each.started > 1.5 * played.started


def test_plain_deals_reuse_one_process_per_bot_and_worker(tmp_path: Path) -> None:
    jobs = league_jobs(tmp_path, 32, "[schedule]\nduplicate = false\n")
    assert processes_per_bot(jobs) == 1
    played = play_out(jobs)
    assert not deals_met_twice(played)
    assert played.started <= 32 * WORKERS


def test_at_the_limit_the_idle_process_that_played_last_ends_first() -> None:
    plan = ProcessPlan[str](limit=3)
    for name, bot in (("a", 0), ("b", 1), ("c", 2)):
        process = plan.add(bot, name)
        plan.played([process], seed=100 + bot)
    # A table of bots 1 and 3: bot 1's process is reused, bot 3's starts, and the
    # limit of 3 ends an idle one: the most recently used (bot 2's "c").
    chosen, ending = plan.seat((1, 3), seed=7)
    assert [None if p is None else p.handle for p in chosen] == ["b", None]
    assert [process.handle for process in ending] == ["c"]
    # The same deal again: bot 1's only process has played it, so it needs a new one.
    plan.played([p for p in chosen if p is not None], seed=7)
    chosen, _ = plan.seat((1,), seed=7)
    assert chosen == [None]
