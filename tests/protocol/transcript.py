"""Build SPEC.md's example transcript by playing a real match with the engine.

The transcript shows one bot's side of a short match, every line exactly as it
would cross the wire.  It is produced here, not written by hand, so it cannot
show anything the engine would not do; ``test_spec.py`` fails if the block in
SPEC.md differs from what this module produces.  Print the block with::

    .venv/bin/python -m tests.protocol.transcript

This module plays the referee's part for one seat in the simplest way (every
reply instant, no faults).  It is a test helper and the one place in
``tests/protocol`` that imports the engine; ``protocol/`` itself never does.
Events and requests are converted by ``referee.match.convert``, exactly as the
referee converts them, so the transcript is what a bot really reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from engine import Match, Rules, preset
from protocol.events import Event, HandEnded
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
from referee.match.convert import build_request, protocol_event, to_action

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


def _request(match: Match, request_id: int) -> Request:
    """The request the seat to act gets now (with every reply instant, the bank stays full)."""
    return build_request(
        match, request_id, time_left_ms=MOVE_TIME_MS + TIME_BANK_MS, time_bank_ms=TIME_BANK_MS
    )


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
            converted = protocol_event(event)
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
            request = _request(match, request_id)
            yield "<", request
            choice = mine(request)
            yield ">", Reply(id=request_id, choice=choice)
        else:
            choice = others(_request(match, 1))  # other seats' ids are not on this wire
        match.apply(to_action(match.decision.value, choice))
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
