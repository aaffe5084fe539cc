"""The scenarios themselves: each shows the bot what it promises, whatever the bot chooses.

A scenario that only worked for bots that happen to choose as the bundled
ones do would blame a perfectly good bot (the report calls that a bug of the
check).  So here the bot under test is an in-process policy on a memory
stream (``referee.check.play_opponent``, the same loop the opponents run),
and every scenario is played by bots that choose at random, always the first
choice, always the last one (the largest bid, every chip on one card), and
always go for the dead hand: no scenario may fail to show any of them what
it promises.  No process is started, so this is quick.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import pytest
import trio
import trio.testing

from engine import Match
from protocol.messages import Choice
from referee.bots import BotSpec
from referee.check import (
    SCENARIOS,
    CheckReport,
    HangUp,
    Line,
    Message,
    Policy,
    Scenario,
    build_transcript,
    check_scenarios,
    play_opponent,
    render_report,
    render_transcript,
    secret_scenarios,
)
from referee.dealkey import DealKey
from referee.session import open_stream_bot
from referee.timecontrol import TimeControl

CONTROL = TimeControl(move_time=5.0, margin=0.1)


def randomly(seed: int) -> Policy:
    rng = random.Random(seed)

    def policy(request: Message) -> Choice | HangUp:
        decision = request["decision"]
        if decision in ("lead", "dead_hand"):
            choice: Choice = rng.choice(request["legal"])
            return choice
        if decision == "bid":
            return rng.randint(0, request["max_bid"])
        amounts = [0] * len(request["boodle_cards"])
        for _ in range(request["stake_total"]):
            amounts[rng.randrange(len(amounts))] += 1
        return amounts

    return policy


def extreme(last: bool) -> Policy:
    def policy(request: Message) -> Choice | HangUp:
        decision = request["decision"]
        if decision in ("lead", "dead_hand"):
            choice: Choice = request["legal"][-1 if last else 0]
            return choice
        if decision == "bid":
            return request["max_bid"] if last else 0
        amounts = [0] * len(request["boodle_cards"])
        amounts[-1 if last else 0] = request["stake_total"]
        return amounts

    return policy


def swapper(request: Message) -> Choice | HangUp:
    """Takes the dead hand whenever it can: buy, exchange, else every chip as a bid."""
    if request["decision"] == "dead_hand":
        for choice in ("buy", "exchange"):
            if choice in request["legal"]:
                return choice
    if request["decision"] == "bid":
        return int(request["max_bid"])
    return extreme(False)(request)


async def check_policy(
    policy: Policy, tmp_path: Path, scenarios: Sequence[Scenario] = SCENARIOS
) -> CheckReport:
    report = CheckReport(BotSpec("policy", (), transport="tcp"), CONTROL)
    referee_end, bot_end = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(play_opponent, bot_end, "under-test", policy)
        async with open_stream_bot(referee_end, "under-test", CONTROL) as session:
            await check_scenarios(session, CONTROL, tmp_path, report, scenarios)
        nursery.cancel_scope.cancel()
    return report


def policy_named(name: str) -> Policy:
    if name.startswith("random-"):
        return randomly(int(name.removeprefix("random-")))
    return {"first": extreme(False), "last": extreme(True), "swapper": swapper}[name]


POLICIES = [*(f"random-{seed}" for seed in range(6)), "first", "last", "swapper"]


@pytest.mark.parametrize("name", POLICIES)
def test_every_scenario_shows_what_it_promises_whatever_the_bot_chooses(
    name: str, tmp_path: Path
) -> None:
    report = trio.run(check_policy, policy_named(name), tmp_path)
    assert report.failure is None, render_report(report)
    assert [stage.name for stage in report.stages] == [s.name for s in SCENARIOS]
    assert all(stage.ok for stage in report.stages)
    decisions = report.decisions()
    assert all(decisions[kind] > 0 for kind in ("stake", "dead_hand", "bid", "lead")), decisions


@pytest.mark.parametrize("name", POLICIES)
def test_every_scenario_keeps_its_promise_dealt_from_a_secret_key(
    name: str, tmp_path: Path
) -> None:
    # Admission deals the check from a fresh key (a bot must not recognise its fixed
    # seeds' cards): no scenario may depend on the cards its seed happens to deal.
    for attempt in range(3):
        scenarios = secret_scenarios(DealKey.generate())
        assert all(s.seed != f.seed for s, f in zip(scenarios, SCENARIOS, strict=True))
        report = trio.run(check_policy, policy_named(name), tmp_path / str(attempt), scenarios)
        assert report.failure is None, render_report(report)
        assert all(stage.ok for stage in report.stages)


def test_the_scenarios_cover_every_preset_and_dead_hand_option() -> None:
    names = [scenario.name for scenario in SCENARIOS]
    assert len(set(names)) == len(names)
    presets = {"boodle", "michigan", "new-market", "newmarket", "stops"}
    assert presets <= set(names)
    options = {scenario.rules.dead_hand_exchange.value for scenario in SCENARIOS}
    assert options == {"off", "exchange", "exchange_or_auction", "purchase"}
    assert {scenario.rules.rank_order.value for scenario in SCENARIOS} == {
        "aces_high",
        "aces_low",
    }
    assert {scenario.players for scenario in SCENARIOS} >= {3, 4, 5, 8}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_each_scripted_deal_is_a_whole_pack_the_engine_accepts(scenario: Scenario) -> None:
    match = Match(
        scenario.rules,
        scenario.players,
        scenario.seed,
        dealer=scenario.dealer,
        deals=scenario.deals,
    )
    assert match.current_seat() is not None or match.is_over
    assert scenario.rules.hand_limit <= 2  # the check stays quick: at most two hands a match


def test_the_transcript_puts_each_reply_and_verdict_after_its_request() -> None:
    sent = [
        b'{"type":"match_start"}',
        b'{"type":"events","events":[]}',
        b'{"type":"request","id":7,"decision":"lead","legal":["4C"]}',
        b'{"type":"fault","id":7}',
        b'{"type":"request","id":8,"decision":"lead","legal":["5C"]}',
        b'{"type":"match_end"}',
    ]
    records: list[Message] = [
        {"type": "request", "seat": 1, "id": 7},
        {"type": "request", "seat": 0, "id": 1},  # another seat's: not shown
        {"type": "reply", "seat": 1, "id": 7, "choice": "9C", "latency_ms": 1.5},
        {"type": "fault", "seat": 1, "id": 7, "kind": "illegal", "detail": "9C no"},
        {"type": "decision", "seat": 1, "by": "default", "choice": "4C"},
        {"type": "request", "seat": 1, "id": 8},
        {"type": "reply", "seat": 1, "id": 8, "choice": "5C", "latency_ms": 0.5},
        {"type": "decision", "seat": 1, "by": "bot", "choice": "5C"},
    ]
    lines, step = build_transcript(sent, records, seat=1)
    assert [str(line) for line in lines] == [
        '< {"type":"match_start"}',
        '< {"type":"events","events":[]}',
        '< {"type":"request","id":7,"decision":"lead","legal":["4C"]}',
        '> {"type":"reply","id":7,"choice":"9C"}   (1.5 ms)',
        "! illegal fault: request 7: 9C no",
        '= the referee applied the default "4C"',
        '< {"type":"fault","id":7}',
        '< {"type":"request","id":8,"decision":"lead","legal":["5C"]}',
        '> {"type":"reply","id":8,"choice":"5C"}   (0.5 ms)',
        '< {"type":"match_end"}',
    ]
    assert step == 4


def test_a_long_transcript_shows_its_start_and_the_lines_around_the_failing_step() -> None:
    lines = [Line("<", f"line {n}") for n in range(1, 101)]
    shown = render_transcript(lines, step=59)
    assert shown[0].strip() == "1 < line 1" and shown[1].strip() == "2 < line 2"
    assert "… 33 lines …" in shown[2]
    assert any(row.startswith("→  60 < line 60") for row in shown)
    assert shown[-1].strip() == "… 34 more lines …"
