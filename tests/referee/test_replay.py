"""A match log replays: every line agrees with the engine, and any change is found by line.

The logs are written by real ``play_match`` calls against fake bots (one of
which makes faults, so disqualification is in the log too), then edited the
way a careless or dishonest hand would edit them.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

from engine import preset
from referee.cli import app
from referee.match import play_match
from referee.matchlog import LogError, MatchLog, read_log
from referee.replay import render_replay, verify_log
from referee.timecontrol import TimeControl
from tests.referee.fakes import FakeWire, Message, fake_table, randomly

RULES = preset("stops").with_options({"hand_limit": 3})


async def cheater(wire: FakeWire, request: Message) -> None:
    await wire.reply(request, "XX" if wire.requests in (2, 4, 6) else request["default"])


@pytest.fixture
async def log(tmp_path: Path, autojump_clock: object) -> Path:
    path = tmp_path / "match.jsonl"
    control = TimeControl()
    async with fake_table([randomly(1), cheater, randomly(3)], control) as (sessions, _wires):
        await play_match(sessions, RULES, 42, time_control=control, match_id="t", log_path=path)
    return path


def records(path: Path) -> list[dict[str, Any]]:
    return [record for _, record in read_log(path)]


def rewrite(path: Path, edit: Any) -> None:
    """Apply ``edit(records) -> records`` and write the log back: a record the edit left
    alone keeps its bytes (a ``sent`` line's are the very bytes the seat was sent)."""
    raws = path.read_bytes().splitlines(keepends=True)
    rows = records(path)
    kept = {id(row): (raw, copy.deepcopy(row)) for raw, row in zip(raws, rows, strict=True)}
    lines = []
    for row in edit(rows):
        raw, before = kept.get(id(row), (b"", None))
        lines.append(raw if row == before else msgspec.json.encode(row) + b"\n")
    path.write_bytes(b"".join(lines))


def index_of(rows: list[dict[str, Any]], kind: str, nth: int = 0, **match: object) -> int:
    found = [
        i
        for i, r in enumerate(rows)
        if r["type"] == kind and all(r.get(k) == v for k, v in match.items())
    ]
    return found[nth]


async def test_a_log_verifies_and_prints_hand_by_hand(log: Path) -> None:
    replay = verify_log(log)
    assert replay.result.seats[1].status == "disqualified"
    text = "\n".join(render_replay(replay))
    assert "Hand 1 — dealer:" in text and "Hand 3 — dealer:" in text
    assert any(symbol in text for symbol in "♣♦♥♠")
    assert "! bot1: malformed" in text and "DISQUALIFIED" in text


async def test_a_changed_event_fails_at_its_line(log: Path) -> None:
    rows = records(log)
    at = index_of(rows, "event", 3)

    def edit(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rows[at]["event"]["seat"] = (rows[at]["event"].get("seat", 0) + 1) % 3
        return rows

    rewrite(log, edit)
    with pytest.raises(LogError) as caught:
        verify_log(log)
    assert caught.value.line == at + 1
    assert "differs" in str(caught.value) and str(caught.value).startswith(f"line {at + 1}:")


async def test_a_changed_card_in_a_run_fails_at_its_line(log: Path) -> None:
    rows = records(log)
    at = next(
        i
        for i, r in enumerate(rows)
        if r["type"] == "event" and r["event"]["type"] == "card_played"
    )

    def edit(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        card = rows[at]["event"]["card"]
        rows[at]["event"]["card"] = ("3" if card[0] != "3" else "4") + card[1]
        return rows

    rewrite(log, edit)
    with pytest.raises(LogError) as caught:
        verify_log(log)
    assert caught.value.line == at + 1


async def test_a_changed_deal_fails_at_its_chance_line(log: Path) -> None:
    rows = records(log)
    at = index_of(rows, "chance", 1)

    def edit(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rows[at]["hands"][0], rows[at]["hands"][1] = rows[at]["hands"][1], rows[at]["hands"][0]
        return rows

    rewrite(log, edit)
    with pytest.raises(LogError) as caught:
        verify_log(log)
    assert caught.value.line == at + 1 and "the deal differs" in str(caught.value)


async def test_a_changed_decision_is_caught(log: Path) -> None:
    rows = records(log)
    at = index_of(rows, "decision", 0, decision="stake", by="bot")

    def edit(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rows[at]["choice"] = [4, 0, 0, 0] if rows[at]["choice"] != [4, 0, 0, 0] else [0, 4, 0, 0]
        return rows

    rewrite(log, edit)
    with pytest.raises(LogError) as caught:
        verify_log(log)
    assert caught.value.line == at + 1 and "is not the choice it replied" in str(caught.value)


async def test_a_changed_result_fails_at_the_result_line(log: Path) -> None:
    rows = records(log)

    def edit(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rows[-1]["seats"][1]["status"] = "ok"
        return rows

    rewrite(log, edit)
    with pytest.raises(LogError) as caught:
        verify_log(log)
    assert caught.value.line == len(rows)
    assert "seats[1].status: the log has 'ok', the replay gives 'disqualified'" in str(caught.value)


async def test_a_hidden_disqualification_is_caught(log: Path) -> None:
    rows = records(log)
    at = index_of(rows, "fault", 0, disqualified=True)

    def edit(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rows[at]["disqualified"] = False
        return rows

    rewrite(log, edit)
    with pytest.raises(LogError) as caught:
        verify_log(log)
    assert caught.value.line == at + 1 and "disqualifies" in str(caught.value)


async def test_a_missing_event_is_caught(log: Path) -> None:
    rows = records(log)
    at = index_of(rows, "event", 5)
    rewrite(log, lambda rows: rows[:at] + rows[at + 1 :])
    with pytest.raises(LogError) as caught:
        verify_log(log)
    assert caught.value.line == at + 1  # the next event now sits on the missing one's line


async def test_a_log_cut_short_says_so(log: Path) -> None:
    data = log.read_bytes()
    log.write_bytes(data[: len(data) // 2])
    with pytest.raises(LogError) as caught:
        verify_log(log)
    assert "cut short" in str(caught.value) or "before the match's result" in str(caught.value)


async def test_a_log_without_its_result_does_not_verify(log: Path) -> None:
    rows = records(log)
    rewrite(log, lambda rows: rows[:-1])
    with pytest.raises(LogError) as caught:
        verify_log(log)
    assert f"the log ends at line {len(rows) - 1} before the match's result" in str(caught.value)


async def test_newmarket_replay_exit_codes(log: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["replay", str(log)])
    assert ok.exit_code == 0, ok.output
    assert "Verified:" in ok.output
    as_json = runner.invoke(app, ["replay", str(log), "--json"])
    data = json.loads(as_json.output)
    assert data["verified"] is True and data["result"]["seats"][1]["status"] == "disqualified"
    missing = runner.invoke(app, ["replay", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2
    rewrite(log, lambda rows: rows[:-1])
    bad = runner.invoke(app, ["replay", str(log), "--json"])
    assert bad.exit_code == 1
    assert json.loads(bad.output)["verified"] is False


def test_a_log_that_cannot_be_written_names_its_file() -> None:
    """A full disk during a match is the referee's error, and it says which file (not just
    'No space left on device'); /dev/full fails every write as a full disk does."""
    log = MatchLog(Path("/dev/full"))
    log.write({"type": "header"})
    with pytest.raises(OSError) as caught:
        log.flush()
    assert caught.value.filename == "/dev/full"
    assert "No space left on device" in str(caught.value)
    log.close()  # what did not fit was dropped with the error: closing raises nothing more


async def test_a_full_disk_mid_match_is_one_oserror_naming_the_log(autojump_clock: object) -> None:
    """play_match's promise: a log it cannot write is an ``OSError`` (not a nursery's group),
    so a league's table worker can report it in one line and stop cleanly."""
    control = TimeControl()
    async with fake_table([randomly(1), randomly(2), randomly(3)], control) as (sessions, _w):
        with pytest.raises(OSError) as caught:
            await play_match(
                sessions, RULES, 42, time_control=control, match_id="t", log_path=Path("/dev/full")
            )
    assert caught.value.filename == "/dev/full"
