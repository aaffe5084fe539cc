"""The search bot as a bot: every decision kind of every rule set, legal and in time.

Matches run through the test driver (``tests/bots/driver.py``) with the bot
in this process behind the real SDK session, so every reply is checked as
the referee checks it.  The search is capped by ``max_samples`` there, which
makes those matches quick and the same on every run.  Time is tested on a
virtual clock (the search stops at its deadline to the tick, whatever the
machine is doing) and once on the real clock with a wide margin.  One
scripted deal checks that the search sees the obvious: lead the Ace that
gives the lead back, then go out with the run.
"""

from __future__ import annotations

import time

import msgspec

from bots.sdk import BotSession, TableState
from bots.search.bot import OVERHEAD_MS, TIME_FRACTION, SearchBot, stake_candidates, think_time
from engine import Deal, Match, Rules, preset
from engine.rules import MAX_STAKE_PLACEMENTS
from protocol.messages import MatchStart, Request
from tests.bots.driver import (
    InProcessBot,
    Tally,
    auctioneer,
    build_request,
    handshake,
    play_match,
    rule_sets,
    to_protocol_event,
)

KINDS = {"lead", "stake", "dead_hand", "bid"}


def quiet(_text: str) -> None:
    pass


def test_it_answers_every_decision_kind_of_every_rule_set_legally() -> None:
    tally = Tally()
    logs: list[str] = []
    for seed, (_label, rules) in enumerate(rule_sets()):
        short = rules.with_options({"hand_limit": 4})
        bots = [
            InProcessBot(BotSession(SearchBot(seed=s, max_samples=6, log=quiet))) for s in (1, 2)
        ]
        for bot in bots:
            handshake(bot)
        play_match([("search", bots[0]), auctioneer, ("search", bots[1])], short, seed, tally)
        logs += [bot.stderr_text() for bot in bots]
    assert {kind for (_name, kind) in tally.counts} == KINDS
    # The SDK logs every fallback to a default (an exception or an illegal choice).
    assert not any("newmarket sdk" in log for log in logs), logs


# ---------------------------------------------------------------- time


def request_with(time_left_ms: int, time_bank_ms: int = 0) -> Request:
    return Request(
        id=1,
        decision="lead",
        legal=["2C"],
        default="2C",
        hand=["2C"],
        hand_sizes=[1, 1, 1],
        chips=[1, 1, 1],
        boodle=[0, 0, 0, 0],
        kitty=0,
        time_left_ms=time_left_ms,
        time_bank_ms=time_bank_ms,
    )


def test_the_planned_time_is_a_share_of_the_move_and_never_the_whole() -> None:
    assert think_time(request_with(1000), 1000) == (TIME_FRACTION * 1000 - OVERHEAD_MS) / 1000
    # A bank adds a slice of itself, and never beyond the share of the time left.
    with_bank = think_time(request_with(11_000, 10_000), 1000)
    assert 0.75 < with_bank < 1.0
    for left in (0, 10, 30, 100, 400, 5000):
        assert think_time(request_with(left, 4000), 1000) * 1000 <= TIME_FRACTION * left
    assert think_time(request_with(20), 1000) == 0.0


class VirtualClock:
    """Each reading moves the clock on by ``tick`` seconds."""

    def __init__(self, tick: float) -> None:
        self.now = 0.0
        self.tick = tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


def scripted_lead(bot: SearchBot) -> tuple[Match, Request]:
    """Seat 0 to lead from 2H 3H 4H AS; 5H is in seat 1.  Leading AS goes out for sure."""
    seat1 = ["5H", "6H", "7H", "8H", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C"]
    seat2 = ["9H", "TH", "JH", "QH", "KH", "AH", "2D", "3D", "4D", "5D", "6D", "7D"]
    deal = Deal.of([["2H", "3H", "4H", "AS"], seat1, seat2])
    rules = preset("boodle")
    match = Match(rules, 3, 1, dealer=2, deals=[deal])
    bot.on_match_start(start_message(rules, 3, 0, move_time_ms=1000), TableState())
    events = [to_protocol_event(e, 0) for e in match.events(viewer=0)]
    bot.on_events([e for e in events if e is not None], TableState())
    return match, build_request(match, 0, 1)


def start_message(rules: Rules, players: int, seat: int, move_time_ms: int) -> MatchStart:
    return MatchStart(
        match_id="bot-test",
        seat=seat,
        players=players,
        names=["search"] * players,
        rules=dict(rules.to_dict()),  # type: ignore[arg-type]
        chips=[rules.starting_chips] * players,
        move_time_ms=move_time_ms,
        time_bank_ms=0,
    )


def test_the_search_stops_at_its_deadline_on_a_virtual_clock() -> None:
    clock = VirtualClock(tick=0.001)
    bot = SearchBot(clock=clock, log=quiet)
    _match, request = scripted_lead(bot)
    request = msgspec.structs.replace(request, time_left_ms=400)
    planned = think_time(request, 1000)
    assert bot.lead(request, TableState()) == "AS"
    # One reading before the search, one per determinization, none after the deadline:
    # the search used its time to the tick and stopped.
    assert planned - 0.001 <= clock.now - 0.001 <= planned + 0.001
    assert bot.samples == round(planned / 0.001) - 1


def test_it_uses_most_of_a_real_second_and_answers_within_it() -> None:
    bot = SearchBot(log=quiet)
    match, request = scripted_lead(bot)
    started = time.perf_counter()
    assert bot.lead(request, TableState()) == "AS"
    elapsed = time.perf_counter() - started
    # It searches until its planned time (certain: the loop ends only at the deadline)
    # and answers well within the time it was given (11 s with the driver's bank).
    assert elapsed >= think_time(request, 1000)
    assert elapsed * 1000 < request.time_left_ms
    assert bot.samples > 10
    assert match.legal_actions()  # the real match is untouched by the search


def test_a_capped_search_is_the_same_every_time() -> None:
    answers = set()
    for _ in range(2):
        bot = SearchBot(seed=7, max_samples=40, log=quiet)
        _match, request = scripted_lead(bot)
        answers.add(bot.lead(request, TableState()))
    assert answers == {"AS"}


def test_stake_candidates_are_legal_and_few() -> None:
    for total, cards in ((6, 4), (10, 4), (4, 4), (1, 3), (7, 1)):
        candidates = stake_candidates(total, cards)
        assert candidates[0] == tuple(sorted(candidates[0], reverse=True))  # even spread first
        assert len(set(candidates)) == len(candidates) <= 2 * cards + 1 < MAX_STAKE_PLACEMENTS
        assert all(len(c) == cards and sum(c) == total and min(c) >= 0 for c in candidates)


def test_contradictory_knowledge_falls_back_to_unconstrained_deals() -> None:
    logged: list[str] = []
    bot = SearchBot(max_samples=30, log=logged.append)
    _match, request = scripted_lead(bot)
    assert bot.knowledge is not None
    bot.knowledge.forbidden[1] = (1 << 52) - 1  # "seat 1 holds no card at all": impossible
    assert bot.lead(request, TableState()) == "AS"
    assert any("without the inferred constraints" in line for line in logged)
