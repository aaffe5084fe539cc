"""Hostile bots that break the protocol on purpose, each a real process in seat 0.

One test per behaviour.  Each asserts the verdict a bot author would read
(fault kind and detail, disqualification), and ``play_hostile`` checks what
every behaviour shares: the match finishes, its result is saved, no process
of any bot's tree is left, and the referee's memory stays bounded.  The last
test seats several of these bots in one league and checks that it finishes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio

from tests.hostile.protocol_harness import REPO, play_hostile, proto_bot, table_mates
from tests.match_logs import kept_logs

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")

GARBAGE = "\ufffd\ufffd garbage {{{ not json"  # garbage.py's line, as the detail quotes it
TIMEOUT_DETAIL = "within 2500 ms (2000 ms time left + 500 ms margin)"


async def test_a_bot_that_never_answers_times_out_three_times_and_is_disqualified(
    tmp_path: Path,
) -> None:
    played = await play_hostile([proto_bot("silent"), *table_mates()], tmp_path)
    assert played.kinds() == ["timeout"] * 3
    for (_, detail), request in zip(played.faults(), played.of_type("request"), strict=False):
        assert detail == f"no reply to request {request['id']} {TIMEOUT_DETAIL}"
    assert played.status == ["disqualified", "ok", "ok"]
    assert played.result.seats[0].place == 3
    # Every decision of the silent seat was the default.
    assert {r["by"] for r in played.of_type("decision")} == {"default"}


async def test_a_late_reply_is_discarded_and_never_applied_to_a_later_request(
    tmp_path: Path,
) -> None:
    played = await play_hostile([proto_bot("late"), *table_mates()], tmp_path)
    assert set(played.kinds()) == {"timeout"}  # a late reply is no further fault
    timed_out = {int(detail.split()[4]) for kind, detail in played.faults() if kind == "timeout"}
    late = played.of_type("late")
    assert late, "the bot sent no late reply"
    assert {r["id"] for r in late} <= timed_out
    # Every reply the referee took was for the request waiting at that moment.
    waiting = None
    for record in played.records:
        if record.get("seat") != 0:
            continue
        if record["type"] == "request":
            waiting = record["id"]
        elif record["type"] == "reply":
            assert record["id"] == waiting
    # And what was played is what the bot said on time, never the late line's choice.
    said = dict(
        line.split()[1:] for line in played.stderr.splitlines() if line.startswith("answered")
    )
    replies = {str(r["id"]): r["choice"] for r in played.of_type("reply")}
    assert said and all(replies[rid] == choice for rid, choice in said.items())


async def test_a_second_reply_is_a_protocol_fault_and_is_not_applied(tmp_path: Path) -> None:
    played = await play_hostile([proto_bot("twice"), *table_mates()], tmp_path)
    assert played.kinds() == ["protocol"] * 3
    replies = played.of_type("reply")
    for (_, detail), reply in zip(played.faults(), replies, strict=False):
        assert detail.startswith(f"a second reply to request {reply['id']}")
    assert len({r["id"] for r in replies}) == len(replies)  # each id applied once
    assert played.status[0] == "disqualified"


async def test_garbage_is_malformed_and_the_default_is_applied(tmp_path: Path) -> None:
    played = await play_hostile([proto_bot("garbage"), *table_mates()], tmp_path)
    assert played.kinds() == ["malformed"] * 3
    for _, detail in played.faults():
        assert detail == f"not JSON: invalid character (byte 0) (line: {GARBAGE})"
    faults = played.of_type("fault")
    requests = played.of_type("request")
    assert [f["applied"] for f in faults] == [r["default"] for r in requests[:3]]
    assert played.status[0] == "disqualified"


async def test_valid_json_of_the_wrong_shape_is_malformed(tmp_path: Path) -> None:
    played = await play_hostile([proto_bot("wrong_shape"), *table_mates()], tmp_path)
    assert played.kinds() == ["malformed"] * 3
    details = [detail for _, detail in played.faults()]
    assert details[0].startswith("not a JSON object: got an array")
    assert details[1].startswith("reply: expected `int`, got `str` - at `$.id`")
    assert details[2].startswith("reply: object contains unknown field `card`")
    assert played.status[0] == "disqualified"


async def test_an_illegal_choice_is_refused_and_the_default_played(tmp_path: Path) -> None:
    played = await play_hostile([proto_bot("illegal"), *table_mates()], tmp_path)
    assert played.kinds() == ["illegal"] * 3
    requests = played.of_type("request")
    for (_, detail), request in zip(played.faults(), requests, strict=False):
        # The bot leads a card it does not hold (boodle: leads are the only decisions).
        assert request["decision"] == "lead"
        assert detail.endswith(f"may not be led now (legal: {' '.join(request['legal'])})")
    assert {r["by"] for r in played.of_type("decision")} == {"default"}
    assert played.status[0] == "disqualified"


async def test_a_line_of_hundreds_of_megabytes_trips_the_cap_without_being_read(
    tmp_path: Path,
) -> None:
    started = trio.current_time()
    played = await play_hostile([proto_bot("huge_line", "300"), *table_mates()], tmp_path)
    [(kind, detail)] = played.faults()
    assert kind == "line_too_long"
    assert detail.startswith("line too long: ") and detail.endswith("(the limit is 65536)")
    assert played.status[0] == "disqualified"
    # The referee stopped reading at the cap: the bot never managed to write it all,
    # and the verdict did not wait for it (it sleeps ten minutes after writing).
    assert "wrote it all" not in played.stderr
    assert trio.current_time() - started < 60
    assert played.peak_bytes < 8 << 20


async def test_a_flood_of_valid_lines_costs_a_fault_count_not_memory(tmp_path: Path) -> None:
    played = await play_hostile([proto_bot("flood"), *table_mates()], tmp_path)
    kinds = played.kinds()
    assert kinds[:3] == ["protocol"] * 3 and played.status[0] == "disqualified"
    first = played.of_type("reply")[0]["id"]
    assert played.faults()[0][1].startswith(f"a second reply to request {first}")
    assert len(played.of_type("reply")) == 1  # only the first line was ever applied


def tagged_processes(tag: str) -> list[int]:
    """Live processes whose environment holds ``HOSTILE_TAG=<tag>`` (this test's bots)."""
    needle = f"HOSTILE_TAG={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                stat = (entry / "stat").read_text()
                if stat.rpartition(")")[2].split()[0] != "Z":
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


async def test_a_league_of_hostile_bots_finishes_with_every_result_saved(tmp_path: Path) -> None:
    from referee.league.league_db import LeagueStore
    from referee.league.league_file import parse_config
    from referee.league.runner import SilentReporter, run_league

    tag = f"league-{tmp_path.name}"
    # No silent or late bot: their timeouts would make this slow, and tests above have them.
    bots = [("good", ""), ("twice", ""), ("garbage", ""), ("huge_line", "300"), ("flood", "")]
    bots += [("wrong_shape", ""), ("illegal", "")]
    tables = "\n".join(
        f"""
[[bots]]
name = "{name}"
command = ["{sys.executable}", "-m", "tests.hostile.proto_bots.{name}"{f', "{arg}"' if arg else ""}]
cwd = "{REPO}"
env = {{ HOSTILE_TAG = "{tag}" }}
"""
        for name, arg in bots
    )
    text = f"""
[league]
seed = 7
table_size = 3
hand_limit = 1
logs = "logs"

[schedule]
kind = "balanced"
duplicate = false

[time_control]
move_time = 3.0
time_bank = 0.0
margin = 0.5
startup_time = 20.0
{tables}
"""
    path = tmp_path / "hostile.toml"
    path.write_text(text)
    config = parse_config(text, path)
    reporter = SilentReporter()
    with LeagueStore.for_league(tmp_path / "hostile.db", config) as store:
        run = await run_league(
            config, store, jobs=2, reporter=reporter, logs=tmp_path / "logs", handle_signals=False
        )
        stored = store.matches()
    assert not run.stopped and run.total is not None
    assert run.done == run.total == len(stored) == len(reporter.results)
    # Each hostile bot got only its own kind of fault, and was disqualified for it at
    # least once (a seat asked little in a one-hand match may not reach three faults);
    # the good bot never had a fault.
    kinds = {"good": set(), "twice": {"protocol"}, "garbage": {"malformed"}}
    kinds |= {"wrong_shape": {"malformed"}, "illegal": {"illegal"}}
    # The flood bot stops reading while it writes: telling it of a fault can time out.
    kinds |= {"huge_line": {"line_too_long"}, "flood": {"protocol", "timeout"}}
    disqualified, faulted = set(), set()
    for match in stored:
        for seat, bot in enumerate(match.key.bots):
            name, result = bots[bot][0], match.result.seats[seat]
            assert {fault.kind for fault in result.faults} <= kinds[name], (name, result)
            if result.faults:
                faulted.add(name)
            if result.status == "disqualified":
                disqualified.add(name)
    assert faulted == {name for name, kind in kinds.items() if kind}
    assert {"twice", "garbage", "huge_line", "flood"} <= disqualified
    assert disqualified <= {name for name, kind in kinds.items() if kind}
    huge = [w for w in reporter.warnings if "huge_line disqualified" in w]
    assert huge and all("(line_too_long in hand " in w and "line too long: " in w for w in huge)
    assert len(kept_logs(tmp_path / "logs")) == run.total
    # The workers ended every bot's tree; give the kernel a moment to finish tearing down.
    for _ in range(50):
        if not tagged_processes(tag):
            break
        await trio.sleep(0.1)
    assert tagged_processes(tag) == []
