"""No message to a seat ever shows another seat's cards or the dead hand before the hand ends.

The engine-level check (``tests/engine/test_simulation.py``, ``check_views``)
looks at the engine's events; this one looks at what actually goes down the
wire: every line the referee writes to each seat, as the bot reads it, in
many random matches through ``play_match`` (presets with dead-hand
exchanges, auctions and purchases, three to seven seats, bots that sometimes
err so that ``fault`` messages are in the stream too).

The truth is the referee's own engine (captured with a monkeypatch) seen
omnisciently after the match: each hand's deal, the dead hand, who swapped,
the cards played in order, the stops.  Walking each seat's stream, every
card-shaped word in any string of any message must be one the seat may know
at that point (SPEC.md 10.10): its own cards this hand (and the dead hand,
if it took it), a card already played, or a card a ``"dead"`` stop showed.
``hand_ended`` shows everything and is exempt; so are the boodle cards'
names (``boodle_cards``), which are rules, not cards in anyone's hand.  The
stream's public events are also checked against the truth (cards played in
the engine's order, a dead stop naming a card really in the dead hand), so
the "already played" it relies on cannot be invented.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import pytest
import trio
import trio.testing

from engine import Match, preset
from engine import events as ev
from engine.rules import Rules
from protocol.framing import LineFramer
from referee.match.referee import play_match
from referee.transport.session import open_stream_bot
from referee.transport.timecontrol import TimeControl

Message = dict[str, Any]
CARD_WORD = re.compile(r"(?<![0-9A-Za-z])[2-9TJQKA][CDHS](?![0-9A-Za-z])")
CONTROL = TimeControl(move_time=1.0, time_bank=0.0, margin=0.05)
VARIANTS: dict[str, Rules] = {
    "boodle": preset("boodle"),
    "auction": preset("boodle").with_options(
        {"ante": "free", "dead_hand_exchange": "exchange_or_auction"}
    ),
    "purchase": preset("new-market").with_options({"dead_hand_exchange": "purchase"}),
    "exchange": preset("newmarket").with_options({"dead_hand_exchange": "exchange"}),
    "stops": preset("stops"),
    "michigan": preset("michigan"),
}
MATCHES = 48


@dataclass
class Hand:
    """One hand as the engine saw it, omnisciently."""

    dealt: list[set[str]] = field(default_factory=list)
    dead: set[str] = field(default_factory=set)  # as dealt
    dead_after_swap: set[str] = field(default_factory=set)  # the swapper's old hand, if any
    swapper: int | None = None
    played: list[str] = field(default_factory=list)
    dead_stops: set[str] = field(default_factory=set)

    def known_to(self, seat: int) -> set[str]:
        """The cards ``seat`` holds or held this hand (and the dead hand, if it took it)."""
        known = set(self.dealt[seat]) if seat < len(self.dealt) else set()
        if self.swapper == seat:
            known |= self.dead
        return known


def truth(match: Match) -> dict[int, Hand]:
    hands: dict[int, Hand] = {}
    hand = Hand()
    for event in match.events(viewer=None):
        if isinstance(event, ev.HandStarted):
            hand = hands[event.hand] = Hand()
        elif isinstance(event, ev.CardsDealt):
            hand.dealt = [{str(c) for c in cards or ()} for cards in event.hands]
            hand.dead = {str(c) for c in event.dead_hand or ()}
            hand.dead_after_swap = hand.dead
        elif isinstance(event, ev.HandSwapped):
            hand.swapper = event.seat
            hand.dead_after_swap = hand.dealt[event.seat]
        elif isinstance(event, ev.CardPlayed):
            hand.played.append(str(event.card))
        elif isinstance(event, ev.RunStopped) and event.cause == "dead":
            assert event.missing is not None
            hand.dead_stops.add(str(event.missing))
    return hands


def card_words(value: object, *, skip: str = "boodle_cards") -> Iterator[str]:
    """Every card-shaped word in any string of ``value``, except under the key ``skip``."""
    if isinstance(value, str):
        yield from CARD_WORD.findall(value)
    elif isinstance(value, list):
        for item in value:
            yield from card_words(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key != skip:
                yield from card_words(item)


def check_stream(seat: int, messages: list[Message], hands: dict[int, Hand]) -> int:
    """Walk one seat's messages in order; returns how many card words were checked."""
    checked = 0
    hand: Hand | None = None
    known: set[str] = set()
    shown: set[str] = set()  # played or shown dead by a stop, this hand, as the stream said
    played = 0

    def check(value: object, what: str) -> None:
        nonlocal checked
        for card in card_words(value):
            checked += 1
            assert card in known | shown, f"seat {seat} was shown {card} in {what}: {value}"

    for message in messages:
        if message["type"] != "events":
            check(message, message["type"])
            continue
        for event in message["events"]:
            kind = event["type"]
            if kind == "hand_started":
                hand = hands[event["hand_number"]]
                known, shown, played = hand.known_to(seat), set(), 0
            elif kind == "hand_ended":
                assert hand is not None and played == len(hand.played)
                hand, known, shown = None, set(), set()
                continue  # the hand is over: every card is shown to all
            elif kind == "cards_dealt":
                assert hand is not None and set(event["hand"]) == hand.dealt[seat]
            elif kind == "hand_swapped":
                assert hand is not None
                assert (event["hand"] is not None) == (event["seat"] == seat)
                if event["hand"] is not None:
                    assert set(event["hand"]) == hand.dead
            elif kind == "card_played":
                assert hand is not None and hand.played[played] == event["card"]
                played += 1
                shown.add(event["card"])
            elif kind == "run_stopped" and event["cause"] == "dead":
                assert hand is not None and event["missing"] in hand.dead_stops
                assert event["missing"] in hand.dead_after_swap
                shown.add(event["missing"])
            check(event, kind)
    return checked


class Recorder:
    """A bot on a memory stream: random legal choices, sometimes an own card it may not lead."""

    def __init__(self, stream: trio.abc.Stream, seed: int) -> None:
        self.stream = stream
        self.rng = random.Random(seed)
        self.received: list[Message] = []

    async def run(self) -> None:
        framer = LineFramer()
        try:
            while data := await self.stream.receive_some(65536):
                for line in framer.feed(data):
                    message = json.loads(line)
                    self.received.append(message)
                    if message["type"] == "hello":
                        await self.send({"type": "ready", "name": "recorder", "protocol": 1})
                    elif message["type"] == "request":
                        await self.answer(message)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return

    async def send(self, message: Message) -> None:
        await self.stream.send_all(json.dumps(message).encode() + b"\n")

    async def answer(self, request: Message) -> None:
        rng = self.rng
        decision = request["decision"]
        choice: object
        if decision == "lead":
            unplayable = [card for card in request["hand"] if card not in request["legal"]]
            if unplayable and rng.random() < 0.1:
                choice = rng.choice(unplayable)  # an illegal fault that names an own card
            else:
                choice = rng.choice(request["legal"])
        elif decision == "dead_hand":
            choice = rng.choice(request["legal"])
        elif decision == "bid":
            choice = rng.randint(0, min(request["max_bid"], 4))
        else:
            amounts = [0] * len(request["boodle_cards"])
            for _ in range(request["stake_total"]):
                amounts[rng.randrange(len(amounts))] += 1
            choice = amounts
        await self.send({"type": "reply", "id": request["id"], "choice": choice})


async def play_recorded(
    rules: Rules, players: int, seed: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[Match, list[list[Message]]]:
    matches: list[Match] = []

    class RecordedMatch(Match):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            matches.append(self)

    monkeypatch.setattr("referee.match.referee.Match", RecordedMatch)
    pairs = [trio.testing.memory_stream_pair() for _ in range(players)]
    bots = [Recorder(bot_end, seed * 10 + i) for i, (_, bot_end) in enumerate(pairs)]
    async with trio.open_nursery() as nursery, AsyncExitStack() as stack:
        for bot in bots:
            nursery.start_soon(bot.run)
        sessions = [
            await stack.enter_async_context(open_stream_bot(referee_end, f"bot{i}", CONTROL))
            for i, (referee_end, _) in enumerate(pairs)
        ]
        await play_match(sessions, rules, seed, time_control=CONTROL, match_id=f"info-{seed}")
        await stack.aclose()
        nursery.cancel_scope.cancel()
    [match] = matches
    return match, [bot.received for bot in bots]


async def test_no_message_shows_a_seat_a_card_it_may_not_know(
    autojump_clock: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(2026)
    names = sorted(VARIANTS)
    checked = swaps = dead_stops = faults = 0
    for number in range(MATCHES):
        name = names[number % len(names)]
        players = rng.randint(3, 7)
        rules = VARIANTS[name].with_options({"hand_limit": 3})
        seed = rng.randrange(2**31)
        match, streams = await play_recorded(rules, players, seed, monkeypatch)
        hands = truth(match)
        for seat, messages in enumerate(streams):
            assert messages[0]["type"] == "hello" and messages[1]["type"] == "match_start"
            checked += check_stream(seat, messages, hands)
            faults += sum(m["type"] == "fault" for m in messages)
        swaps += sum(hand.swapper is not None for hand in hands.values())
        dead_stops += sum(len(hand.dead_stops) for hand in hands.values())
    # The walk was not vacuous: swaps, dead stops and faults were all in the streams.
    assert checked > 10_000 and swaps >= 10 and dead_stops >= 10 and faults >= 10, (
        checked,
        swaps,
        dead_stops,
        faults,
    )
