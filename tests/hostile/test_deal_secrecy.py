"""A bot that carries the engine cannot find its deal's seed: issue 26's attack, replayed.

``attack_bots/deal_search.py`` is a real bot program: at its first hand it
tries every seed a participant could think of (small numbers, every seed a
league or a competition with a known seed derives for its schedule), looking
for the one that deals it its own hand.  It writes what it found on stderr,
which each match's log keeps.

* A league whose seed is published: nothing found, in any match.
* A league whose file gives no seed: nothing found, though the bot is handed
  the seed its database drew (the seed sets the schedule, not the cards).
* A competition with default settings (``seed = 1``): nothing found.
* The control: the same bot, in a league that opted in to public deals, finds
  its seed, and the dead hand it then announces for hand 2 (which no bot may
  know before that hand ends) is the dead hand the match log recorded.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.league.league_db import LeagueStore
from referee.league.league_file import parse_config
from referee.league.runner import SilentReporter, run_league
from referee.match.log import read_log
from tests.match_logs import kept_logs

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")

REPO = Path(__file__).resolve().parents[2]
ATTACK = "tests.hostile.attack_bots.deal_search"
FOUND = re.compile(r"DEALSEARCH FOUND seed=(\d+) searched=\d+ hand2-dead=(.*)")
NONE = re.compile(r"DEALSEARCH NONE searched=(\d+)")


def attack_command(*argv: str) -> str:
    return json.dumps([sys.executable, "-m", ATTACK, *argv])


def league_text(league: str, attack: str) -> str:
    return f"""
[league]
{league}
table_size = 3
hand_limit = 2
logs = "logs"

[rules]
preset = "stops"

[time_control]
move_time = 60.0
startup_time = 60.0

[sandbox]
level = "none"

[[bots]]
name = "attacker"
command = {attack}
cwd = "{REPO}"

[[bots]]
name = "lowest"
command = "lowest"

[[bots]]
name = "longest"
command = "longest"

[[bots]]
name = "boodle"
command = "boodle"
"""


def findings(logs: Path) -> list[tuple[str, Path, list[dict[str, Any]]]]:
    """For each match the attacker played: its ``DEALSEARCH`` line, the log, its deals.

    The line is looked for in the log's ``stderr`` records and in the bots' stderr
    files (``logs/stderr``, written whole when a process ends): a line written just
    before a reply may reach the referee after its match's record was taken.
    """
    texts = [path.read_text() for path in logs.rglob("*.stderr")]
    out = []
    for path in kept_logs(logs):
        records = [record for _, record in read_log(path)]
        header = next(r for r in records if r["type"] == "header")
        if not any(bot["name"] == "attacker" for bot in header["bots"]):
            continue  # a table without the attacker
        texts += [r["text"] for r in records if r["type"] == "stderr"]
        out.append((header["match_id"], path, [r for r in records if r["type"] == "chance"]))
    lines = {line for text in texts for line in text.splitlines() if "DEALSEARCH" in line}
    found = []
    for match_id, path, chance in out:
        tail = f" match={match_id}"
        mine = {line.removesuffix(tail) for line in lines if line.endswith(tail)}
        assert len(mine) == 1, (match_id, mine)
        found.append((mine.pop(), path, chance))
    return found


async def play_league(tmp_path: Path, league: str, attack: str, drawn: int | None = None) -> Path:
    path = tmp_path / "deals.toml"
    path.write_text(league_text(league, attack))
    config = parse_config(path.read_text(), path)
    with LeagueStore.for_league(tmp_path / "deals.db", config, drawn) as store:
        run = await run_league(
            config,
            store,
            jobs=2,
            reporter=SilentReporter(),
            logs=tmp_path / "logs",
            handle_signals=False,
        )
    assert run.done == run.total == 12
    return tmp_path / "logs"


def assert_nothing_found(logs: Path) -> None:
    seen = findings(logs)
    assert len(seen) == 9  # the attacker's matches: 3 tables, 3 rotations each
    for line, _path, _chance in seen:
        nothing = NONE.fullmatch(line)
        assert nothing is not None, line
        # It really searched: every small seed and the schedule's seeds.
        assert int(nothing.group(1)) > 20_000


async def test_a_league_whose_seed_is_published_deals_cards_no_bot_can_find(
    tmp_path: Path,
) -> None:
    logs = await play_league(tmp_path, "seed = 23", attack_command("league", "23"))
    assert_nothing_found(logs)


async def test_a_league_without_a_seed_deals_cards_no_bot_can_find_even_knowing_the_drawn_seed(
    tmp_path: Path,
) -> None:
    # The bot is told the seed the database draws: it sets the schedule, not the cards.
    logs = await play_league(tmp_path, "", attack_command("league", "4242"), drawn=4242)
    with LeagueStore.open_existing(tmp_path / "deals.db") as store:
        assert store.schedule_seed() == 4242 and not store.deal_key().is_public
    assert_nothing_found(logs)


async def test_the_same_bot_finds_every_card_when_the_league_opts_in_to_public_deals(
    tmp_path: Path,
) -> None:
    logs = await play_league(
        tmp_path, "seed = 23\npublic_deals = true", attack_command("league", "23")
    )
    seen = findings(logs)
    assert len(seen) == 9
    foreseen = 0
    for line, path, chance in seen:
        found = FOUND.fullmatch(line)
        assert found is not None, line
        header = next(r for _, r in read_log(path) if r["type"] == "header")
        assert int(found.group(1)) == header["seed"]  # the match's very seed
        second = [record for record in chance if record["hand"] == 2]
        if second:  # hand 2 was dealt: the bot named its dead hand before it was played
            assert found.group(2).split() == sorted(second[0]["dead"])
            foreseen += 1
    assert foreseen >= 1


async def test_a_competition_with_default_settings_deals_cards_no_bot_can_find(
    tmp_path: Path,
) -> None:
    """Two groups at seed 1, the second stopped after its first rotation: the bot finds
    nothing, and the unfinished group's match shows nothing of its cards on the web."""
    import httpx

    from referee.bots import BotSpec
    from referee.server.app import build_app
    from referee.server.competition import Competition
    from referee.server.competition_db import CompetitionStore
    from referee.server.competition_file import load_config
    from referee.server.play import GroupQueue, local_tables, play_group
    from referee.tools.replay import verify_log

    path = tmp_path / "cup.toml"
    path.write_text(
        '[competition]\nname = "cup"\nhouse_bots = ["lowest", "longest"]\n'
        '[sandbox]\nlevel = "none"\n[time_control]\nmove_time = 60.0\nstartup_time = 60.0\n'
        '[rules]\npreset = "stops"\n[tables]\nhand_limit = 2\n'
    )
    config = load_config(path)
    assert config.seed == 1  # the default every competition file gets
    competition = Competition(config, CompetitionStore.open(config.database))
    store = competition.store
    transport = httpx.ASGITransport(app=build_app(competition))
    web = httpx.AsyncClient(transport=transport, base_url="http://cup")
    try:
        competition.ensure_house_bots(config.house_bots)
        mallory, _token = store.add_participant("mallory")
        version = store.add_version(mallory.id, "python3", "main.py", "", 1)
        argv = json.loads(attack_command("server", "1"))
        spec = BotSpec("attacker", tuple(argv), cwd=REPO)
        store.decide(version.id, "admitted", "ok", "", spec.to_json())
        seated = tuple(v.id for v in store.playing_versions())
        queue = GroupQueue(competition)
        first, second = (queue._plan(seated, "test") for _ in range(2))
        table = await local_tables(competition)(0)
        try:
            await play_group(competition, table, 0, first, set())
            await play_group(competition, table, 0, second, {1, 2})  # its first rotation only
            seen = findings(config.logs_dir)
            assert len(seen) == 4
            for line, _path, _chance in seen:
                assert NONE.fullmatch(line), line

            # The finished group: its seed (the log's, from which `replay` verifies it).
            done = (await web.get("/api/matches/g1r0")).json()
            header = next(r for _, r in read_log(config.logs_dir / "g1r0.nmr"))
            assert done["seed"] == header["seed"] and done["replay"] and done["cards_public"]
            assert done["seed"] >= 1 << 64  # a derived seed, not the group's 48-bit one
            verify_log(config.logs_dir / "g1r0.nmr")
            # The group still being played: nothing from its cards, in the API or the page.
            hidden = (await web.get("/api/matches/g2r0")).json()
            assert hidden["cards_public"] is False
            assert hidden["seed"] is None and hidden["replay"] is None
            assert all(seat["chips"] is None for seat in hidden["seats"])
            assert "1 of 3 matches finished" in hidden["in_play"]
            page = (await web.get("/matches/g2r0")).text
            secret = next(r for _, r in read_log(config.logs_dir / "g2r0.nmr"))["seed"]
            assert str(secret) not in page and "still being played" in page
            assert not re.search(r"(?<![0-9A-Za-z])[2-9TJQKA][CDHS](?![0-9A-Za-z])", page)
            owner = (await web.get("/api/participants/mallory")).json()
            in_play = [m for m in owner["matches"] if m["match_id"] == "g2r0"]
            assert in_play and in_play[0]["cards_public"] is False and in_play[0]["hands"] is None

            await play_group(competition, table, 0, second, {0})  # the group finishes
        finally:
            await table.aclose()
        shown = (await web.get("/api/matches/g2r0")).json()
        assert shown["cards_public"] and shown["seed"] == secret and shown["replay"]
    finally:
        await web.aclose()
        store.close()
