"""Every fault kind, with a bot that makes it on purpose, and the verdict the referee gives.

These bots are coroutines on in-memory streams (``tests.referee.fakes``) and
time is trio's virtual clock, so a five-second stall costs nothing and no
verdict depends on how loaded the machine is.  Each test asserts what a bot
author or a league would see: the fault's kind and detail, the choice applied,
the ``fault`` message the bot receives, disqualification and places, and that
the match log still replays.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from engine import Rules, preset
from referee.match import MatchResult, final_places, play_match
from referee.matchlog import read_log
from referee.replay import verify_log
from referee.timecontrol import TimeControl
from tests.referee.fakes import (
    FakeWire,
    Message,
    Policy,
    by_default,
    fake_table,
    randomly,
)

CONTROL = TimeControl(move_time=1.0, time_bank=0.0, margin=0.05)
SHORT = preset("boodle").with_options({"hand_limit": 3})
FREE = preset("stops").with_options({"hand_limit": 3})
AUCTION = preset("boodle").with_options(
    {"hand_limit": 3, "ante": "free", "dead_hand_exchange": "exchange_or_auction"}
)


@dataclasses.dataclass
class Played:
    results: list[MatchResult]
    wires: list[FakeWire]
    logs: list[list[dict[str, Any]]]

    @property
    def result(self) -> MatchResult:
        return self.results[0]

    def faults(self, seat: int, match: int = 0) -> list[tuple[str, str]]:
        return [(f.kind, f.detail) for f in self.results[match].seats[seat].faults]

    def records(self, kind: str, seat: int | None = None, match: int = 0) -> list[dict[str, Any]]:
        return [
            r
            for r in self.logs[match]
            if r["type"] == kind and (seat is None or r.get("seat") == seat)
        ]


async def play(
    policies: Sequence[Policy],
    tmp_path: Path,
    *,
    rules: Rules = SHORT,
    control: TimeControl = CONTROL,
    matches: int = 1,
    seed: int = 1,
    ready: Sequence[Message | None] | None = None,
) -> Played:
    results = []
    logs = []
    async with fake_table(policies, control, ready=ready) as (sessions, wires):
        for number in range(matches):
            path = tmp_path / f"match{number}.jsonl"
            results.append(
                await play_match(
                    sessions,
                    rules,
                    seed + number,
                    time_control=control,
                    match_id=f"m{number}",
                    log_path=path,
                )
            )
            verify_log(path)  # every log in this file replays, faults and all
            logs.append([record for _, record in read_log(path)])
    return Played(results, wires, logs)


def on_request(which: int, bad: Policy, good: Policy | None = None) -> Policy:
    """``bad`` for the bot's ``which``-th request (0: every request), ``good`` otherwise."""
    fallback = good or by_default

    async def policy(wire: FakeWire, request: Message) -> None:
        if which in (0, wire.requests):
            await bad(wire, request)
        else:
            await fallback(wire, request)

    return policy


def good() -> list[Policy]:
    """Two well-behaved bots with fresh random generators (no state shared between tests)."""
    return [randomly(1), randomly(2)]


# ---------------------------------------------------------------- timeout and time bank


async def test_a_slow_bot_times_out_and_the_default_is_applied(
    autojump_clock: object, tmp_path: Path
) -> None:
    async def stall(wire: FakeWire, request: Message) -> None:
        await trio.sleep(1.5)
        await wire.reply(request, request["legal"][-1])  # late: discarded

    played = await play([on_request(1, stall), *good()], tmp_path)
    [(kind, detail)] = played.faults(0)
    assert kind == "timeout"
    assert detail.startswith("no reply to request 1 within 1050 ms")
    [fault] = played.records("fault", seat=0)
    first_request = played.records("request", seat=0)[0]
    assert fault["applied"] == first_request["default"]
    assert played.records("decision", seat=0)[0]["by"] == "default"
    assert played.records("late", seat=0)  # the late reply came and was discarded
    [message] = played.wires[0].of_type("fault")
    assert message["kind"] == "timeout" and message["id"] == 1 and not message["disqualified"]
    assert played.result.seats[0].status == "ok"


async def test_time_beyond_the_move_time_comes_out_of_the_bank(
    autojump_clock: object, tmp_path: Path
) -> None:
    control = TimeControl(move_time=1.0, time_bank=2.0, margin=0.1)

    async def think(wire: FakeWire, request: Message) -> None:
        await trio.sleep(1.5)
        await by_default(wire, request)

    played = await play([on_request(1, think), *good()], tmp_path, control=control)
    requests = played.wires[0].of_type("request")
    assert requests[0]["time_left_ms"] == 3000 and requests[0]["time_bank_ms"] == 2000
    assert requests[1]["time_left_ms"] == 2500 and requests[1]["time_bank_ms"] == 1500
    assert not played.faults(0)
    assert played.records("reply", seat=0)[0]["latency_ms"] == pytest.approx(1500, abs=1)


async def test_a_reply_inside_the_margin_is_accepted_but_empties_the_bank(
    autojump_clock: object, tmp_path: Path
) -> None:
    control = TimeControl(move_time=1.0, time_bank=2.0, margin=0.1)

    async def just_in_time(wire: FakeWire, request: Message) -> None:
        await trio.sleep(3.05)
        await by_default(wire, request)

    played = await play([on_request(1, just_in_time), *good()], tmp_path, control=control)
    assert not played.faults(0)
    assert played.wires[0].of_type("request")[1]["time_left_ms"] == 1000


async def test_a_timeout_empties_the_bank(autojump_clock: object, tmp_path: Path) -> None:
    control = TimeControl(move_time=1.0, time_bank=2.0)

    async def stall(wire: FakeWire, request: Message) -> None:
        await trio.sleep(3.5)

    played = await play([on_request(1, stall), *good()], tmp_path, control=control)
    assert [kind for kind, _ in played.faults(0)] == ["timeout"]
    assert played.wires[0].of_type("request")[1]["time_bank_ms"] == 0


# ---------------------------------------------------------------- late replies


async def test_a_late_reply_is_discarded_and_never_applied_to_a_later_request(
    autojump_clock: object, tmp_path: Path
) -> None:
    held: list[Message] = []

    async def late(wire: FakeWire, request: Message) -> None:
        if wire.requests == 1:
            held.append(request)  # no answer in time
            return
        if held:
            # The late reply names the *first* request but carries a choice that is
            # legal for this one; a referee matching by order would apply it here.
            await wire.reply(held.pop(), request["legal"][-1])
            await trio.sleep(0.5)
            await wire.reply(request, request["legal"][0])
            return
        await by_default(wire, request)

    played = await play([late, *good()], tmp_path)
    assert [kind for kind, _ in played.faults(0)] == ["timeout"]
    [discarded] = played.records("late", seat=0)
    assert discarded["id"] == 1
    second = played.wires[0].of_type("request")[1]
    assert len(second["legal"]) > 1  # so the two choices differ
    decision = played.records("decision", seat=0)[1]
    assert decision["choice"] == second["legal"][0] != discarded["choice"]
    assert decision["by"] == "bot"


async def test_a_late_reply_in_the_next_match_is_still_discarded(
    autojump_clock: object, tmp_path: Path
) -> None:
    """Request ids never repeat on a connection, so a reply can name only its own request."""
    held: list[Message] = []

    async def late_across_matches(wire: FakeWire, request: Message) -> None:
        if not held and wire.requests == 1:
            held.append(request)
            return
        if held and any(m["type"] == "match_end" for m in wire.received):
            await wire.reply(held.pop(), request["default"])
        await by_default(wire, request)

    rules = preset("boodle").with_options({"hand_limit": 1})
    played = await play([late_across_matches, *good()], tmp_path, rules=rules, matches=2)
    assert [kind for kind, _ in played.faults(0, match=0)] == ["timeout"]
    assert played.faults(0, match=1) == []
    assert played.records("late", seat=0, match=1)[0]["id"] == 1


# ---------------------------------------------------------------- malformed lines


async def test_garbage_resolves_the_waiting_request_and_its_reply_is_discarded(
    autojump_clock: object, tmp_path: Path
) -> None:
    async def garbage(wire: FakeWire, request: Message) -> None:
        await wire.raw(b"thinking about it...\n")
        await wire.reply(request, request["legal"][-1])

    played = await play([on_request(1, garbage), *good()], tmp_path)
    [(kind, detail)] = played.faults(0)
    assert kind == "malformed"
    assert detail.startswith("not JSON") and "thinking about it..." in detail
    [fault] = played.records("fault", seat=0)
    assert fault["id"] == 1 and fault["applied"] == played.records("request", seat=0)[0]["default"]
    assert played.records("decision", seat=0)[0]["by"] == "default"
    assert played.records("late", seat=0)[0]["id"] == 1  # the reply after it: discarded


async def test_garbage_while_no_request_waits_is_a_fault_with_no_id(
    autojump_clock: object, tmp_path: Path
) -> None:
    async def chatty(wire: FakeWire, request: Message) -> None:
        # One write: the stray line arrives with the reply, before the next request.
        reply = msgspec.json.encode(
            {"type": "reply", "id": request["id"], "choice": request["default"]}
        )
        await wire.raw(reply + b"\n" + b"debug: done\n")

    played = await play([on_request(1, chatty), *good()], tmp_path)
    [(kind, _detail)] = played.faults(0)
    assert kind == "malformed"
    [fault] = played.records("fault", seat=0)
    assert fault["id"] is None and fault["applied"] is None
    decisions = played.records("decision", seat=0)
    assert [d["by"] for d in decisions[:2]] == ["bot", "bot"]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"type":"reply","id":1,"choise":"2C"}', "unknown field"),
        (b'{"type":"reply","id":1}', "missing required field"),
        (b'{"type":"reply","id":"1","choice":"2C"}', "expected `int`"),
        (b'{"type":"answer","id":1,"choice":"2C"}', "unknown message type"),
        (b"[1, 2, 3]", "not a JSON object"),
        (b"\xff\xfe", "not JSON"),
    ],
)
async def test_valid_json_of_the_wrong_shape_is_malformed(
    autojump_clock: object, tmp_path: Path, line: bytes, expected: str
) -> None:
    async def wrong(wire: FakeWire, request: Message) -> None:
        await wire.raw(line + b"\n")

    played = await play([on_request(1, wrong), *good()], tmp_path)
    [(kind, detail)] = played.faults(0)
    assert kind == "malformed" and expected in detail, detail
    assert played.records("fault", seat=0)[0]["id"] == 1


@pytest.mark.parametrize(
    ("rules", "decision", "choice", "kind", "expected"),
    [
        (SHORT, "lead", "10H", "malformed", 'a lead is a card such as "TH"'),
        (SHORT, "lead", 7, "malformed", "a lead is a card"),
        (SHORT, "lead", "XX", "malformed", "a lead is a card"),
        (FREE, "stake", [1, 1], "malformed", "stakes are a list of 4 whole numbers"),
        (FREE, "stake", [5, 0, 0, 0], "illegal", "stakes must total exactly 4 chips, got 5"),
        (FREE, "stake", [-1, 5, 0, 0], "malformed", "stakes are a list"),
        (AUCTION, "dead_hand", "sell", "malformed", "a dead-hand choice is one of"),
        (AUCTION, "dead_hand", "buy", "illegal", "buy is not allowed now"),
    ],
)
async def test_a_choice_of_the_wrong_form_is_malformed_and_a_forbidden_one_illegal(
    autojump_clock: object,
    tmp_path: Path,
    rules: Rules,
    decision: str,
    choice: object,
    kind: str,
    expected: str,
) -> None:
    async def bad(wire: FakeWire, request: Message) -> None:
        await wire.reply(request, choice if request["decision"] == decision else request["default"])

    played = await play([bad, *good()], tmp_path, rules=rules, control=TimeControl(max_faults=50))
    faults = played.faults(0)
    assert faults, "the bad choice was never asked for"
    assert {k for k, _ in faults} == {kind}
    assert expected in faults[0][1], faults[0][1]
    # every bad choice was replaced by its request's default
    for fault in played.records("fault", seat=0):
        assert fault["applied"] is not None


async def test_an_illegal_lead_is_refused_and_the_default_played(
    autojump_clock: object, tmp_path: Path
) -> None:
    deck = [rank + suit for suit in "CDHS" for rank in "23456789TJQKA"]

    async def cheat(wire: FakeWire, request: Message) -> None:
        wrong = next(card for card in deck if card not in request["legal"])
        await wire.reply(request, wrong)

    played = await play([on_request(1, cheat), *good()], tmp_path)
    [(kind, detail)] = played.faults(0)
    assert kind == "illegal" and "may not be led now (legal:" in detail
    assert played.records("decision", seat=0)[0]["by"] == "default"


async def test_a_bid_above_max_bid_is_illegal(autojump_clock: object, tmp_path: Path) -> None:
    async def auction_and_overbid(wire: FakeWire, request: Message) -> None:
        if request["decision"] == "dead_hand":
            await wire.reply(request, "auction")
        elif request["decision"] == "bid":
            await wire.reply(request, request["max_bid"] + 1)
        else:
            await by_default(wire, request)

    policies = [auction_and_overbid] * 3
    played = await play(policies, tmp_path, rules=AUCTION, control=TimeControl(max_faults=50))
    kinds = {kind for seat in range(3) for kind, _ in played.faults(seat)}
    details = [detail for seat in range(3) for _, detail in played.faults(seat)]
    assert kinds == {"illegal"}
    assert any("more than max_bid" in detail for detail in details)


# ---------------------------------------------------------------- protocol faults


async def test_a_second_reply_is_a_protocol_fault_and_is_not_applied(
    autojump_clock: object, tmp_path: Path
) -> None:
    async def twice(wire: FakeWire, request: Message) -> None:
        await wire.reply(request, request["default"])
        await wire.reply(request, request["legal"][-1])

    played = await play([on_request(1, twice), *good()], tmp_path)
    [(kind, detail)] = played.faults(0)
    assert kind == "protocol"
    assert detail.startswith("a second reply to request 1")
    # the first reply was applied, the second discarded; play went on normally
    assert (
        played.records("decision", seat=0)[0]["choice"]
        == played.records("request", seat=0)[0]["default"]
    )
    assert played.result.seats[0].status == "ok"


async def test_a_reply_with_an_unknown_id_does_not_resolve_the_request(
    autojump_clock: object, tmp_path: Path
) -> None:
    async def wrong_id_then_right(wire: FakeWire, request: Message) -> None:
        await wire.send({"type": "reply", "id": 999, "choice": request["default"]})
        await wire.reply(request, request["legal"][-1])

    played = await play([on_request(1, wrong_id_then_right), *good()], tmp_path)
    [(kind, detail)] = played.faults(0)
    assert kind == "protocol"
    assert "a reply to request 999, which was never sent (waiting for request 1)" in detail
    first = played.records("decision", seat=0)[0]
    assert (
        first["by"] == "bot"
        and first["choice"] == played.records("request", seat=0)[0]["legal"][-1]
    )


async def test_a_second_ready_is_a_protocol_fault(autojump_clock: object, tmp_path: Path) -> None:
    async def ready_again(wire: FakeWire, request: Message) -> None:
        await wire.send({"type": "ready", "name": "again", "protocol": 1})
        await by_default(wire, request)

    played = await play([on_request(1, ready_again), *good()], tmp_path)
    assert played.faults(0) == [("protocol", "unexpected ready: the handshake is over")]


# ---------------------------------------------------------------- the stream breaks


async def test_an_over_long_line_disqualifies_at_once_and_ends_the_session(
    autojump_clock: object, tmp_path: Path
) -> None:
    async def flood(wire: FakeWire, request: Message) -> None:
        await wire.raw(b"x" * 70_000)

    played = await play([on_request(2, flood), *good()], tmp_path, matches=2)
    [(kind, detail)] = played.faults(0)
    assert kind == "line_too_long"
    assert "line too long" in detail and "65536" in detail
    assert played.result.seats[0].status == "disqualified"
    later = played.records("decision", seat=0)[2:]
    assert later and all(d["by"] == "default" for d in later)
    # the next match on the same session: dead from the start, disqualified again
    [(kind, detail)] = played.faults(0, match=1)
    assert kind == "line_too_long" and detail.startswith("lost before this match:")
    assert played.results[1].seats[0].status == "disqualified"
    assert not played.records("request", seat=0, match=1)


async def test_a_closed_stream_is_eof_and_disqualifies(
    autojump_clock: object, tmp_path: Path
) -> None:
    async def hang_up(wire: FakeWire, request: Message) -> None:
        await wire.close()

    played = await play([on_request(1, hang_up), *good()], tmp_path)
    [(kind, detail)] = played.faults(0)
    assert kind == "eof" and detail == "it closed the connection"
    assert played.result.seats[0].status == "disqualified"


async def test_a_bot_that_stops_reading_is_lost_when_a_write_cannot_finish(
    autojump_clock: object, tmp_path: Path
) -> None:
    async def stop_reading(wire: FakeWire, request: Message) -> None:
        await trio.sleep_forever()  # neither answers nor reads again

    policies = [on_request(2, stop_reading), *good()]
    async with fake_table(policies, CONTROL, lockstep=True) as (sessions, _wires):
        result = await play_match(sessions, SHORT, 1, time_control=CONTROL, match_id="s")
    faults = [(f.kind, f.detail) for f in result.seats[0].faults]
    assert faults[0][0] == "timeout" and faults[0][1].startswith("no reply to request 2")
    assert faults[1] == ("timeout", "did not read its input for 1.05 s")
    assert result.seats[0].status == "disqualified"
    assert [seat.status for seat in result.seats[1:]] == ["ok", "ok"]


# ---------------------------------------------------------------- disqualification


async def test_the_third_fault_disqualifies_and_every_seat_is_told(
    autojump_clock: object, tmp_path: Path
) -> None:
    async def always_wrong(wire: FakeWire, request: Message) -> None:
        await wire.reply(request, "XX")

    played = await play([always_wrong, *good()], tmp_path)
    faults = played.records("fault", seat=0)
    assert [f["count"] for f in faults] == [1, 2, 3]
    assert [f["disqualified"] for f in faults] == [False, False, True]
    messages = played.wires[0].of_type("fault")
    assert [m["disqualified"] for m in messages] == [False, False, True]
    assert played.wires[0].requests == 3  # never asked again
    result = played.result
    assert result.seats[0].status == "disqualified"
    assert result.seats[0].defaults == len(played.records("decision", seat=0))
    for wire in played.wires:
        told = [e for e in wire.events() if e["type"] == "seat_disqualified"]
        assert told == [{"type": "seat_disqualified", "seat": 0, "reason": "malformed"}]
    # every seat still receives events to the end, and match_end names the seat
    for wire in played.wires:
        [end] = wire.of_type("match_end")
        assert end["disqualified"] == [0]
        assert end["places"] == result.places
    assert result.seats[0].place > max(s.place for s in result.seats if s.status == "ok")


async def test_max_faults_is_configurable(autojump_clock: object, tmp_path: Path) -> None:
    async def always_wrong(wire: FakeWire, request: Message) -> None:
        await wire.reply(request, "XX")

    control = TimeControl(max_faults=1)
    played = await play([always_wrong, *good()], tmp_path, control=control)
    assert len(played.faults(0)) == 1
    assert played.result.seats[0].status == "disqualified"


async def test_fault_counts_start_again_at_each_match(
    autojump_clock: object, tmp_path: Path
) -> None:
    async def two_wrong_per_match(wire: FakeWire, request: Message) -> None:
        asked = 0
        for message in reversed(wire.received):
            if message["type"] == "match_start":
                break
            asked += message["type"] == "request"
        await wire.reply(request, "XX" if asked <= 2 else request["default"])

    rules = preset("boodle").with_options({"hand_limit": 2})
    played = await play([two_wrong_per_match, *good()], tmp_path, rules=rules, matches=2)
    assert len(played.faults(0, match=0)) == 2
    assert len(played.faults(0, match=1)) == 2
    assert all(r.seats[0].status == "ok" for r in played.results)


def test_disqualified_seats_rank_below_every_other_seat() -> None:
    assert final_places([1, 2, 3, 4], [True, False, False, False]) == [4, 1, 2, 3]
    assert final_places([1, 2, 2, 4], [False, True, False, False]) == [1, 4, 2, 3]
    assert final_places([2, 1, 3], [True, True, False]) == [3, 2, 1]
    assert final_places([1, 1, 3], [False, False, False]) == [1, 1, 3]


# ---------------------------------------------------------------- start-up


async def test_a_bot_that_never_says_ready_is_a_startup_fault(
    autojump_clock: object, tmp_path: Path
) -> None:
    control = TimeControl(startup_time=5)
    silent: Message = {"type": "ready"}  # not a valid ready: no name, no protocol
    played = await play(
        [by_default, *good()], tmp_path, control=control, ready=[silent, None, None]
    )
    [(kind, detail)] = played.faults(0)
    assert kind == "startup" and detail.startswith(
        "instead of ready, line 1 of its TCP connection: ready: object missing required field"
    ), detail
    assert played.result.seats[0].status == "disqualified"
    assert played.result.seats[0].decisions == 0
    assert played.records("fault", seat=0)[0]["hand"] == 0
    # told before the first hand_started
    first_events = played.wires[1].events()[:2]
    assert first_events[0] == {"type": "seat_disqualified", "seat": 0, "reason": "startup"}
    assert first_events[1]["type"] == "hand_started"


async def test_a_protocol_version_mismatch_is_a_protocol_fault_that_disqualifies(
    autojump_clock: object, tmp_path: Path
) -> None:
    future: Message = {"type": "ready", "name": "future", "protocol": 2}
    played = await play([by_default, *good()], tmp_path, ready=[future, None, None])
    assert played.faults(0) == [("protocol", "this referee speaks protocol 1; ready says 2")]
    assert played.result.seats[0].status == "disqualified"
    [told] = played.wires[0].of_type("fault")
    assert told["kind"] == "protocol" and told["disqualified"] and told["id"] is None


async def test_the_match_log_records_every_decision_with_its_latency(
    autojump_clock: object, tmp_path: Path
) -> None:
    async def slowish(wire: FakeWire, request: Message) -> None:
        await trio.sleep(0.25)
        await by_default(wire, request)

    played = await play([slowish, *good()], tmp_path)
    header = played.logs[0][0]
    assert header["type"] == "header" and header["seed"] == 1
    assert header["rules"] == SHORT.to_dict()
    assert [bot["reported_name"] for bot in header["bots"]] == ["bot0", "bot1", "bot2"]
    replies = played.records("reply", seat=0)
    assert replies and all(r["latency_ms"] == pytest.approx(250, abs=1) for r in replies)
    assert played.records("chance")  # every deal is logged
    assert played.logs[0][-1]["type"] == "result"
