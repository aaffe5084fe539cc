"""Ten kilobytes of ``[[[[...]]]]``: as a reply in a match and in a league, and as a ``ready``.

A recursive JSON decoder raises ``RecursionError`` on these, past every error
it names, and that once ended the match, the league worker (on every
resume) and ``newmarket check``.  Now each is a named ``malformed`` (reply)
or ``startup`` (ready) fault of the bot that sent it, and everything else
goes on.  The remote lobby's side (a stranger's nested ``ready``) is in
``tests/remote``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from referee.bots import Transport
from referee.league.config import parse_config
from referee.league.runner import SilentReporter, run_league
from referee.league.store import LeagueStore
from tests.hostile.protocol_harness import CONTROL, REPO, play_hostile, proto_bot, table_mates

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")

TOO_DEEP = "arrays or objects nested more than 32 deep; no message nests deeper than 4"


@pytest.mark.parametrize("transport", ["stdio", "tcp"])  # (the referee's two ways of reading)
async def test_a_nested_reply_is_malformed_twice_and_the_bot_plays_on(
    tmp_path: Path, transport: Transport
) -> None:
    bots = [proto_bot("nested", transport=transport), *table_mates(transport=transport)]
    played = await play_hostile(bots, tmp_path)
    assert played.kinds() == ["malformed", "malformed"]
    first, second = (detail for _, detail in played.faults())
    assert first.startswith(f'{TOO_DEEP} (line: {{"type":"reply","id":1,"choice":[[[[')
    assert second.startswith(f"{TOO_DEEP} (line: [[[[[")
    assert played.status == ["ok", "ok", "ok"]
    # After its two bad lines it answered legally, and those answers were played.
    assert "bot" in {r["by"] for r in played.of_type("decision")}


@pytest.mark.parametrize("transport", ["stdio", "tcp"])
async def test_a_nested_ready_is_a_startup_fault_of_that_bot_alone(
    tmp_path: Path, transport: Transport
) -> None:
    bots = [proto_bot("nested", "ready", transport=transport), *table_mates(transport=transport)]
    started = time.monotonic()
    played = await play_hostile(bots, tmp_path)
    # The refused bot's exit is seen at once, over TCP too: its table is not held for the
    # whole start-up limit (it was, while a refused TCP handshake dropped the accept's wait).
    assert time.monotonic() - started < CONTROL.startup_time / 2
    [(kind, detail)] = played.faults()
    # (Over TCP the refused bot exits before its seat gives up: the detail says that first.)
    where = "stdout" if transport == "stdio" else "TCP connection"
    said = f"instead of ready, line 1 of its {where}: {TOO_DEEP}; the line "
    # Quoted from stdio; over TCP only its length: the line may hold the bot's token.
    said += 'begins "[' if transport == "stdio" else "(10000 bytes) is not quoted"
    assert kind == "startup" and said in detail, detail
    assert transport == "tcp" or detail.startswith(said)
    assert played.status == ["disqualified", "ok", "ok"]


async def test_a_league_with_nested_json_bots_finishes_with_their_faults_only(
    tmp_path: Path,
) -> None:
    bots = [("nested", "reply"), ("nested", "ready"), ("good", ""), ("good", "")]
    entries = "".join(
        f"""
[[bots]]
name = "{name}-{arg or index}"
command = ["{sys.executable}", "-m", "tests.hostile.proto_bots.{name}"{f', "{arg}"' if arg else ""}]
cwd = "{REPO}"
env = {{ HOSTILE_SEED = "{index}" }}
"""
        for index, (name, arg) in enumerate(bots)
    )
    text = f"""
[league]
seed = 3
table_size = 3
hand_limit = 1
logs = "logs"

[schedule]
duplicate = false

[time_control]
move_time = 10.0
startup_time = 30.0
{entries}"""
    path = tmp_path / "nested.toml"
    path.write_text(text)
    config = parse_config(text, path)
    reporter = SilentReporter()
    with LeagueStore.for_league(tmp_path / "nested.db", config) as store:
        run = await run_league(
            config, store, jobs=2, reporter=reporter, logs=tmp_path / "logs", handle_signals=False
        )
        stored = store.matches()
    assert not run.stopped and not run.abandoned
    assert run.done == run.total == len(stored) == 12  # 4 tables of 3, 3 rotations each
    # The reply bot sends its two nested lines in the first match its process plays
    # (processes are reused with plain deals); the ready bot never starts, so every
    # match of it records the startup fault.
    malformed = 0
    for match in stored:
        for seat, bot in enumerate(match.key.bots):
            name, result = config.bots[bot].name, match.result.seats[seat]
            kinds = [fault.kind for fault in result.faults]
            if name == "nested-ready":
                assert kinds == ["startup"] and result.status == "disqualified"
            elif name == "nested-reply":
                assert set(kinds) <= {"malformed"} and result.status == "ok"
                malformed += len(kinds)
            else:
                assert kinds == [] and result.status == "ok", (name, result.faults)
    assert malformed >= 2
