"""The starter bots: each idea does what its tutorial says, and every bot plays every preset.

The full matches here run the bots in this process (``InProcessBot`` feeds the
same protocol lines to a ``BotSession``), so many seeds and rule sets cost
little; ``test_bundled.py`` plays the same bots as real processes.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from bots.sdk import Bot, BotSession, TableState
from bots.starters.boodle import BoodleBot
from bots.starters.longest import LongestBot
from bots.starters.lowest import LowestBot
from bots.starters.random import RandomBot
from bots.starters.tracker import TrackerBot
from protocol.messages import Choice, Reply, Request, decode_bot_message
from tests.bots.driver import (
    InProcessBot,
    Tally,
    auctioneer,
    handshake,
    play_match,
    rule_sets,
)

STARTERS: dict[str, type[Bot]] = {
    "random": RandomBot,
    "lowest": LowestBot,
    "longest": LongestBot,
    "boodle": BoodleBot,
    "tracker": TrackerBot,
}
KINDS = {"lead", "stake", "dead_hand", "bid"}


def in_process(name: str) -> InProcessBot:
    bot = InProcessBot(BotSession(STARTERS[name]()), label=name)
    handshake(bot)
    return bot


def test_the_starters_play_every_rule_set_against_each_other_without_a_fallback() -> None:
    """Every starter's own choices are legal: the SDK never had to send a default for it.

    (The SDK replaces a failing or illegal choice by the default, which would
    hide a bug from a test that only checks the replies.)  Six seats, one of
    them an auctioneer so that every bot is asked to bid.
    """
    tally = Tally()
    bots = {name: in_process(name) for name in STARTERS}
    seats: list[Any] = [(name, bot) for name, bot in bots.items()]
    for seed, (_label, rules) in enumerate(rule_sets()):
        capped = rules.with_options({"hand_limit": min(rules.hand_limit, 12)})
        play_match([*seats, auctioneer], capped, seed, tally, noise=True)
        play_match([auctioneer, *reversed(seats)], capped, seed + 100, tally)
    assert {kind for (_, kind) in tally.counts} == KINDS
    for name, bot in bots.items():
        assert {kind for (who, kind) in tally.counts if who == name} == KINDS, name
        assert bot.log == [], bot.log


# ---------------------------------------------------------------- one decision at a time

RULES = {
    "rank_order": "aces_high",
    "boodle_cards": ["AS", "KH", "QC", "JD"],
    "ante": "free",
    "stake_total": 10,
    "dead_hand": True,
    "dead_hand_exchange": "exchange_or_auction",
}


def decide(
    bot: Bot,
    request: dict[str, Any],
    *,
    events: tuple[dict[str, Any], ...] = (),
    rank_order: str = "aces_high",
) -> Choice:
    """The bot's choice for one request, after a match start and some events."""
    session = BotSession(bot, log=lambda line: pytest.fail(f"the bot fell back: {line}"))
    start = {
        "type": "match_start",
        "match_id": "t",
        "seat": 0,
        "players": 3,
        "names": ["a", "b", "c"],
        "rules": {**RULES, "rank_order": rank_order},
        "chips": [40, 40, 40],
        "move_time_ms": 1000,
        "time_bank_ms": 10000,
    }
    lines = [b'{"type":"hello","protocol":1,"referee":"t"}', msgspec.json.encode(start)]
    if events:
        lines.append(msgspec.json.encode({"type": "events", "events": list(events)}))
    for line in lines:
        session.receive(line)
    full = {
        "type": "request",
        "id": 1,
        "default": request.get("legal", ["keep"])[0] if request["decision"] != "stake" else [],
        "legal": [],
        "hand": [],
        "hand_sizes": [13, 13, 13],
        "chips": [40, 40, 40],
        "boodle": [3, 3, 3, 3],
        "kitty": 0,
        "time_left_ms": 11000,
        "time_bank_ms": 10000,
        **request,
    }
    if full["decision"] == "bid":
        full["default"] = 0
    if full["decision"] == "dead_hand":
        full["default"] = "keep"
    if full["decision"] == "stake":
        full["default"] = [3, 3, 2, 2]
    (written,) = session.receive(msgspec.json.encode(full))
    reply = decode_bot_message(written[:-1])
    assert isinstance(reply, Reply)
    return reply.choice


def lead(legal: list[str], hand: list[str]) -> dict[str, Any]:
    return {"decision": "lead", "legal": legal, "hand": hand}


def played(*cards: str) -> tuple[dict[str, Any], ...]:
    return tuple({"type": "card_played", "seat": 1, "card": card, "lead": False} for card in cards)


def test_lowest_leads_its_lowest_card_under_the_rank_order() -> None:
    hand = ["5D", "8D", "AD", "2H", "3H", "4S"]
    assert decide(LowestBot(), lead(["5D", "2H", "4S"], hand)) == "2H"
    assert decide(LowestBot(), lead(["AC", "2D"], ["AC", "2D"]), rank_order="aces_low") == "AC"
    assert decide(LowestBot(), lead(["AC", "2D"], ["AC", "2D"])) == "2D"


def test_longest_leads_from_its_longest_suit() -> None:
    hand = ["5D", "8D", "AD", "2H", "3H", "4H", "QH", "4S", "TS"]
    assert decide(LongestBot(), lead(["5D", "2H", "4S"], hand)) == "2H"


def test_longest_swaps_a_flat_hand_only_when_the_swap_is_free() -> None:
    flat = ["2C", "7C", "KC", "3D", "8D", "QD", "4H", "9H", "AH", "5S", "TS", "QS", "AS"]
    long = ["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "2C", "3C", "4C", "5H", "6D"]
    choice = {"decision": "dead_hand", "legal": ["auction", "exchange", "keep"]}
    assert decide(LongestBot(), {**choice, "hand": flat}) == "exchange"
    assert decide(LongestBot(), {**choice, "hand": long}) == "keep"
    assert decide(LongestBot(), {**choice, "hand": flat, "legal": ["buy", "keep"]}) == "keep"


def test_boodle_leads_the_run_that_takes_a_stack_where_tracker_sees_a_tie() -> None:
    # Two runs of three cards; the diamond run plays JD, which carries 3 chips.
    hand = ["2C", "3C", "4C", "9D", "TD", "JD"]
    assert decide(TrackerBot(), lead(["2C", "9D"], hand)) == "2C"
    assert decide(BoodleBot(), lead(["2C", "9D"], hand)) == "9D"


def test_boodle_steers_a_run_to_a_boodle_card_it_holds() -> None:
    # The club run is longer (and 5C, played, keeps it from reaching QC).
    hand = ["2C", "3C", "8D", "JD"]
    assert decide(BoodleBot(), lead(["2C", "8D"], hand), events=played("5C")) == "8D"
    # Not when the way is blocked: TD was played already.
    assert decide(BoodleBot(), lead(["2C", "8D"], hand), events=played("5C", "TD")) == "2C"


def test_boodle_does_not_lead_a_run_up_to_a_rivals_boodle_card() -> None:
    # Diamonds climb to JD, which a rival holds; the spade run stops at 7S, played.
    hand = ["2D", "5S"]
    assert decide(TrackerBot(), lead(["2D", "5S"], hand), events=played("7S")) == "2D"
    assert decide(BoodleBot(), lead(["2D", "5S"], hand), events=played("7S")) == "5S"
    # With no boodle card anywhere in reach it leads as tracker does.
    assert decide(BoodleBot(), lead(["3C", "2H"], ["3C", "2H"]), events=played("4C", "3H")) == "2H"


def test_boodle_stakes_most_on_the_lowest_boodle_card() -> None:
    stake = {"decision": "stake", "stake_total": 10, "boodle_cards": ["AS", "KH", "QC", "JD"]}
    # Half on JD, the lowest; the rest one by one from the next lowest up.
    assert decide(BoodleBot(), stake) == [1, 2, 2, 5]
    # With aces low the ace of spades is the lowest.
    assert decide(BoodleBot(), stake, rank_order="aces_low") == [5, 1, 2, 2]


def test_boodle_sells_the_dead_hand_when_it_holds_boodle_cards() -> None:
    choice = {"decision": "dead_hand", "legal": ["auction", "exchange", "keep"]}
    assert decide(BoodleBot(), {**choice, "hand": ["QC", "2D"]}) == "auction"
    assert decide(BoodleBot(), {**choice, "hand": ["3C", "2D"]}) == "exchange"
    bid = {"decision": "bid", "min_bid": 0, "max_bid": 36}
    assert decide(BoodleBot(), {**bid, "hand": ["3C"]}) == 2
    assert decide(BoodleBot(), {**bid, "hand": ["AS"]}) == 0


def test_tracker_leads_the_run_that_comes_back_to_it() -> None:
    # 5C 6C 7C and 8C already played: the run stops on our 7C and we lead again.
    hand = ["5C", "6C", "7C", "2D", "3D"]
    assert decide(TrackerBot(), lead(["5C", "2D"], hand), events=played("8C")) == "5C"
    # Two runs of two; only the spade run is known to stop on our card (5S is dead).
    hand = ["3H", "4H", "3S", "4S"]
    stop = {"type": "run_stopped", "card": "4D", "cause": "dead", "missing": "5S"}
    assert decide(TrackerBot(), lead(["3H", "3S"], hand), events=(stop,)) == "3S"


def test_random_is_repeatable_and_legal() -> None:
    stake = {"decision": "stake", "stake_total": 10, "boodle_cards": ["AS", "KH", "QC", "JD"]}
    first = [decide(RandomBot(seed=3), stake) for _ in range(3)]
    assert first[0] == first[1] == first[2]
    assert isinstance(first[0], list) and sum(first[0]) == 10
    bids = {
        decide(RandomBot(seed=s), {"decision": "bid", "min_bid": 0, "max_bid": 3})
        for s in range(40)
    }
    assert bids == {0, 1, 2, 3}


class Auditor(TrackerBot):
    """Checks, at every request, that the table it tracked from events matches the request."""

    def __init__(self) -> None:
        self.seen: tuple[Any, ...] | None = None
        self.checked = 0

    def on_events(self, events: list[Any], state: TableState) -> None:
        self.seen = self.snapshot(state)

    @staticmethod
    def snapshot(state: TableState) -> tuple[Any, ...]:
        hand = sorted(state.hand)
        return (list(state.chips), list(state.boodle), state.kitty, hand, list(state.hand_sizes))

    def check(self, request: Request) -> None:
        truth = (
            request.chips,
            request.boodle,
            request.kitty,
            sorted(request.hand),
            request.hand_sizes,
        )
        assert self.seen == truth
        self.checked += 1

    def lead(self, request: Request, state: TableState) -> str:
        self.check(request)
        return super().lead(request, state)

    def stake(self, request: Request, state: TableState) -> list[int]:
        self.check(request)
        return super().stake(request, state)

    def dead_hand(self, request: Request, state: TableState) -> str:
        self.check(request)
        return super().dead_hand(request, state)

    def bid(self, request: Request, state: TableState) -> int:
        self.check(request)
        return super().bid(request, state)


def test_the_table_state_agrees_with_every_request() -> None:
    """Chips, boodle stacks, kitty, hand and hand sizes, tracked from events alone."""
    auditors = [Auditor() for _ in range(3)]
    sessions = [BotSession(auditor) for auditor in auditors]
    bots = [InProcessBot(session, label="auditor") for session in sessions]
    for bot in bots:
        handshake(bot)
    for seed, (_label, rules) in enumerate(rule_sets()):
        seats: list[Any] = [("a", bots[0]), ("b", bots[1]), auctioneer, ("c", bots[2])]
        play_match(seats, rules, seed, Tally())
    for auditor, bot in zip(auditors, bots, strict=True):
        assert auditor.checked > 100
        assert bot.log == []  # an assertion in a decision would have been logged as a fallback


def test_boodle_plays_the_same_match_the_same_way_every_time() -> None:
    """The strongest starter is a fixed opponent: same seed, same cards, same game."""
    rules = rule_sets()[0][1].with_options({"hand_limit": 8})
    ends = []
    for _ in range(2):
        seats: list[Any] = [(f"boodle{seat}", in_process("boodle")) for seat in range(4)]
        ends.append(play_match(seats, rules, 11, Tally()))
    assert ends[0] == ends[1]
    assert ends[0].hands_played == 8
