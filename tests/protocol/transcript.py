"""Build SPEC.md's example transcript by playing a real match with the engine.

The transcript shows one bot's side of a short match, every line exactly as it
would cross the wire.  It is produced here, not written by hand, so it cannot
show anything the engine would not do; ``test_spec.py`` fails if the block in
SPEC.md differs from what this module produces.  Print the block with::

    .venv/bin/python -m tests.protocol.transcript

This module plays the referee's part for one seat in the simplest way (every
reply instant, no faults).  It is a test helper and the one place in
``tests/protocol`` that imports the engine; ``protocol/`` itself never does.
The event conversion below is the one the referee needs too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from engine import Bid, Card, DeadHandChoice, Decision, Match, Rules, Stakes, preset
from engine import events as ev
from protocol.decisions import default_choice
from protocol.events import (
    BidsRevealed,
    BoodleWon,
    CardPlayed,
    CardsDealt,
    ChipsPaid,
    DeadHandDecided,
    Event,
    HandBlocked,
    HandEnded,
    HandStarted,
    HandSwapped,
    KittyWon,
    LeadPassed,
    PlayerEliminated,
    PotShared,
    RunStopped,
    StakePlaced,
    WentOut,
)
from protocol.messages import (
    PROTOCOL_VERSION,
    BotMessage,
    Choice,
    Events,
    Hello,
    MatchEnd,
    MatchStart,
    Ready,
    RefereeMessage,
    Reply,
    Request,
    Shutdown,
    encode,
)

SEED = 2
PLAYERS = 3
SEAT = 0
NAMES = ["ada", "awk-bot", "randy"]
MATCH_ID = "example-1"
MOVE_TIME_MS = 1000
TIME_BANK_MS = 10_000


def example_rules() -> Rules:
    """The boodle preset with free stakes, the dealer's exchange-or-auction, and two hands."""
    return preset("boodle").with_options(
        {
            "ante": "free",
            "stake_total": 4,
            "dead_hand_exchange": "exchange_or_auction",
            "hand_limit": 2,
        }
    )


def _text(cards: tuple[Card, ...] | None) -> list[str] | None:
    return None if cards is None else [str(card) for card in cards]


def convert_event(event: ev.Event) -> Event | None:
    """An engine event, already filtered for one viewer, as a protocol event.

    ``MatchEnded`` gives None: the ``match_end`` message carries the result.
    """
    match event:
        case ev.HandStarted(hand, dealer):
            return HandStarted(hand_number=hand, dealer=dealer)
        case ev.PlayerEliminated(seat, chips, shares):
            return PlayerEliminated(seat=seat, chips=chips, shares=list(shares))
        case ev.StakePlaced(seat, amounts, kitty):
            return StakePlaced(seat=seat, amounts=list(amounts), kitty=kitty)
        case ev.CardsDealt(hand_sizes, dead_hand_size, hands, _dead):
            own = next((hand for hand in hands if hand is not None), ())
            return CardsDealt(
                hand_sizes=list(hand_sizes), dead_hand_size=dead_hand_size, hand=_text(own) or []
            )
        case ev.DeadHandDecided(dealer, choice):
            return DeadHandDecided(dealer=dealer, choice=choice)  # type: ignore[arg-type]
        case ev.BidsRevealed(bids):
            return BidsRevealed(bids=list(bids))
        case ev.HandSwapped(seat, price, paid_to, hand, hand_size):
            return HandSwapped(
                seat=seat, price=price, paid_to=paid_to, hand=_text(hand), hand_size=hand_size
            )
        case ev.CardPlayed(seat, card, lead):
            return CardPlayed(seat=seat, card=str(card), lead=lead)
        case ev.BoodleWon(seat, card, chips):
            return BoodleWon(seat=seat, card=str(card), chips=chips)
        case ev.RunStopped(card, cause, missing):
            return RunStopped(
                card=str(card),
                cause=cause,  # type: ignore[arg-type]
                missing=None if missing is None else str(missing),
            )
        case ev.LeadPassed(from_seat, to_seat):
            return LeadPassed(from_seat=from_seat, to_seat=to_seat)
        case ev.HandBlocked():
            return HandBlocked()
        case ev.WentOut(seat):
            return WentOut(seat=seat)
        case ev.ChipsPaid(payer, payee, chips, owed):
            return ChipsPaid(payer=payer, payee=payee, chips=chips, owed=owed)
        case ev.PotShared(seat, chips):
            return PotShared(seat=seat, chips=chips)
        case ev.KittyWon(seat, chips):
            return KittyWon(seat=seat, chips=chips)
        case ev.HandEnded(hands, dead_hand, winners):
            return HandEnded(
                hands=[[str(c) for c in hand] for hand in hands],
                dead_hand=[str(c) for c in dead_hand],
                winners=list(winners),
            )
        case ev.MatchEnded():
            return None
    raise AssertionError(f"no protocol event for {event!r}")


def build_request(match: Match, request_id: int) -> Request:
    """The request the seat to act gets now (with every reply instant, the bank stays full)."""
    seat = match.current_seat()
    assert seat is not None
    decision = match.decision
    rules = match.rules
    observation = match.observation(seat)
    legal: list[str] = []
    extra: dict[str, Any] = {}
    if decision is Decision.LEAD:
        legal = [str(card) for card in match.legal_actions()]
    elif decision is Decision.DEAD_HAND:
        legal = [choice.value for choice in match.legal_actions()]
    elif decision is Decision.BID:
        extra = {"min_bid": 0, "max_bid": match.chips[seat]}
    else:
        extra = {
            "stake_total": rules.stake_total,
            "boodle_cards": [str(card) for card in rules.boodle_cards],
        }
    before_deal = decision is Decision.STAKE  # the cards of this hand are not dealt yet
    assert decision is not None
    return Request(
        id=request_id,
        decision=decision.value,
        legal=legal,
        default=default_choice(
            decision.value,
            legal,
            stake_total=rules.stake_total,
            boodle_cards=len(rules.boodle_cards),
        ),
        hand=[] if before_deal else [str(card) for card in observation.hand],
        hand_sizes=[0] * match.players if before_deal else list(observation.hand_sizes),
        chips=list(match.chips),
        boodle=list(match.boodle_stacks),
        kitty=match.kitty,
        time_left_ms=MOVE_TIME_MS + TIME_BANK_MS,
        time_bank_ms=TIME_BANK_MS,
        **extra,
    )


def to_action(decision: Decision, choice: Choice) -> Any:
    """A reply's choice as the engine action (the choice is already judged legal)."""
    if decision is Decision.LEAD:
        return Card.parse(str(choice))
    if decision is Decision.DEAD_HAND:
        return DeadHandChoice(str(choice))
    if decision is Decision.BID:
        return Bid(int(choice))  # type: ignore[arg-type]
    return Stakes(tuple(choice))  # type: ignore[arg-type]


Policy = Callable[[Request], Choice]


def example_bot(request: Request) -> Choice:
    """Seat 0's bot: exchanges when it deals, bids 2, leads the last card of ``legal``."""
    if request.decision == "dead_hand":
        return "exchange" if "exchange" in request.legal else "keep"
    if request.decision == "bid":
        return min(2, request.max_bid or 0)
    if request.decision == "lead":
        return request.legal[-1]
    return request.default


def other_bots(request: Request) -> Choice:
    """Everyone else: sell the dead hand when dealing, bid 1, otherwise the default."""
    if request.decision == "dead_hand" and "auction" in request.legal:
        return "auction"
    if request.decision == "bid":
        return min(1, request.max_bid or 0)
    return request.default


Line = tuple[str, RefereeMessage | BotMessage]
"""``("<", message)``: the bot reads it; ``(">", message)``: the bot writes it."""


def play(
    seat: int = SEAT, mine: Policy = example_bot, others: Policy = other_bots
) -> Iterator[Line]:
    """Every line seat ``seat`` reads and writes in the example match, in order."""
    rules = example_rules()
    match = Match(rules, players=PLAYERS, seed=SEED)
    yield "<", Hello(protocol=PROTOCOL_VERSION, referee="newmarket 0.1.0")
    yield ">", Ready(name=NAMES[seat], version="1.0", protocol=PROTOCOL_VERSION)
    yield (
        "<",
        MatchStart(
            match_id=MATCH_ID,
            seat=seat,
            players=PLAYERS,
            names=NAMES,
            rules=rules.to_dict(),  # type: ignore[arg-type]
            chips=list(match.chips),
            move_time_ms=MOVE_TIME_MS,
            time_bank_ms=TIME_BANK_MS,
        ),
    )
    cursor = 0
    request_id = 0
    pending: list[Event] = []

    def flush() -> Iterator[Line]:
        if pending:
            yield "<", Events(events=list(pending))
            pending.clear()

    while True:
        # Deliver new events, one batch per hand at most: a hand_ended closes a batch.
        count = match.event_count()
        for event in match.events(viewer=seat, since=cursor):
            converted = convert_event(event)
            if converted is not None:
                pending.append(converted)
            if isinstance(converted, HandEnded):
                yield from flush()
        cursor = count
        if match.is_over:
            break
        to_act = match.current_seat()
        assert to_act is not None and match.decision is not None
        if to_act == seat:
            yield from flush()
            request_id += 1
            request = build_request(match, request_id)
            yield "<", request
            choice = mine(request)
            yield ">", Reply(id=request_id, choice=choice)
        else:
            choice = others(build_request(match, 1))  # other seats' ids are not on this wire
        match.apply(to_action(match.decision, choice))
    yield from flush()
    outcome = match.outcome()
    yield (
        "<",
        MatchEnd(
            match_id=MATCH_ID,
            places=list(outcome.places),
            chips=list(outcome.chips),
            reason=outcome.reason,
            hands_played=outcome.hands_played,
            disqualified=[],
        ),
    )
    yield "<", Shutdown()


def transcript_lines() -> list[str]:
    """The transcript as SPEC.md shows it: ``< `` or ``> `` then the exact JSON line."""
    return [f"{arrow} {encode(message).decode().rstrip()}" for arrow, message in play()]


if __name__ == "__main__":
    print("```transcript")
    print("\n".join(transcript_lines()))
    print("```")
