"""The Python bot SDK: write one method per decision, and the SDK speaks the protocol.

A bot is a subclass of ``Bot`` that overrides the decisions it cares about::

    from bots.sdk import Bot, run

    class Lowest(Bot):
        name = "lowest"

        def lead(self, request, state):
            return min(request.legal, key=state.rank)

    if __name__ == "__main__":
        run(Lowest())

Everything else has a sensible default (the request's own ``default``, which is
always legal), so the bot above plays every decision of every preset.

Why it is shaped this way:

* ``BotSession`` is sans-IO, like ``protocol.framing.LineFramer``: it takes one
  line from the referee and returns the lines to send back.  The handshake, the
  match lifecycle and the leniency rules live there and nowhere else, and the
  tests drive it with literal lines, without processes or sockets.
* ``serve`` and ``run`` are the thin I/O loop around it: stdio by default,
  TCP when ``NEWMARKET_CONNECT=host:port`` is set (SPEC.md, "Transports").
* The SDK is forgiving in both directions.  From the referee it accepts what a
  later protocol version may add (unknown fields, messages and events are
  skipped, as ``protocol.messages.decode_referee_message`` does).  From the
  bot's own code it accepts mistakes: a decision method that raises, returns
  nothing or returns an illegal choice is logged to stderr and the request's
  ``default`` is sent instead, so a bug costs a poor move, never a fault.
* stdout carries the protocol, so ``run`` points ``sys.stdout`` at stderr
  before the first line: a stray ``print`` in a bot is a log line, not a
  malformed message.
* ``TableState`` is kept up to date from the events (and re-synchronised from
  every request), so heuristic bots read the table instead of tracking it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, BinaryIO, Final, NoReturn, TextIO

from protocol.decisions import choice_fault
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
    SeatDisqualified,
    StakePlaced,
    WentOut,
)
from protocol.framing import FramingError, LineFramer
from protocol.messages import (
    PROTOCOL_VERSION,
    Choice,
    Events,
    Fault,
    Hello,
    MalformedMessageError,
    MatchEnd,
    MatchStart,
    Ready,
    Reply,
    Request,
    RuleValue,
    Shutdown,
    decode_json,
    decode_referee_message,
    encode,
)
from protocol.transports import ENV_TOKEN, connect_address, parse_connect

__all__ = [
    "RANKS",
    "SUITS",
    "Bot",
    "BotSession",
    "TableState",
    "card_rank",
    "card_suit",
    "full_deck",
    "run",
    "serve",
]

SUITS: Final = "CDHS"
RANKS: Final = "23456789TJQKA"
"""Rank characters from 2 up to the Ace (a card is its rank then its suit: ``"TH"``)."""

_ACES_LOW_RANKS: Final = "A23456789TJQK"
# Each card's sort key (suit, then rank) under each rank order: one dictionary lookup.
_SORT_KEYS: Final = {
    ranks: {rank + suit: (s, r) for s, suit in enumerate(SUITS) for r, rank in enumerate(ranks)}
    for ranks in (RANKS, _ACES_LOW_RANKS)
}


def card_rank(card: str) -> str:
    """The rank character of a card: ``card_rank("TH") == "T"``."""
    return card[0]


def card_suit(card: str) -> str:
    """The suit character of a card: ``card_suit("TH") == "H"``."""
    return card[1]


def full_deck() -> list[str]:
    """All 52 cards, clubs first, each suit from 2 up to the Ace."""
    return [rank + suit for suit in SUITS for rank in RANKS]


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the table


class TableState:
    """What this seat knows about the current match, kept up to date by the SDK.

    Cards are text (``"TH"``), seats are 0-based, and per-seat lists are indexed
    by seat.  Everything of the current hand is reset when a hand starts.
    """

    def __init__(self) -> None:
        # The match (from match_start).
        self.match_id = ""
        self.seat = 0
        self.players = 0
        self.names: list[str] = []
        self.rules: dict[str, RuleValue] = {}
        self.boodle_cards: list[str] = []
        """The pay cards, in the order that stakes and ``boodle`` use."""
        self.move_time_ms = 0
        self.time_bank_ms = 0
        # Chips (kept from events, refreshed by each request).
        self.chips: list[int] = []
        self.boodle: list[int] = []
        """Chips on each boodle card, in the order of ``boodle_cards``."""
        self.kitty = 0
        self.out: set[int] = set()
        """Seats eliminated or disqualified in this match."""
        self.faults: list[Fault] = []
        # The hand.
        self.hand_number = 0
        self.dealer = 0
        self.hand: list[str] = []
        """Your own cards, in rank order within each suit."""
        self.hand_sizes: list[int] = []
        self.dead_hand_size = 0
        self.played: list[tuple[int, str]] = []
        """Every ``(seat, card)`` played this hand, in order."""
        self.played_cards: set[str] = set()
        self.known_dead: set[str] = set()
        """Cards certainly in the dead hand: the missing card of each ``dead`` stop,
        and your own old hand after you swapped it for the dead hand."""
        self.stops: list[RunStopped] = []
        """The stops of this hand, in order."""
        self.last_card: str | None = None
        self.swapped: set[int] = set()
        """Seats that took the dead hand this hand."""
        self.revealed: HandEnded | None = None
        """The last finished hand's showdown: every hand and the dead hand."""

    # -- updating --------------------------------------------------------------------------

    @classmethod
    def for_match(cls, start: MatchStart) -> TableState:
        """A clean table for a new match."""
        state = cls()
        state.start_match(start)
        return state

    def start_match(self, start: MatchStart) -> None:
        self.match_id = start.match_id
        self.seat = start.seat
        self.players = start.players
        self.names = list(start.names)
        self.rules = dict(start.rules)
        boodle = start.rules.get("boodle_cards", [])
        self.boodle_cards = [str(card) for card in boodle] if isinstance(boodle, list) else []
        self.move_time_ms = start.move_time_ms
        self.time_bank_ms = start.time_bank_ms
        self.chips = list(start.chips)
        self.boodle = [0] * len(self.boodle_cards)
        self.hand_sizes = [0] * start.players

    def sync(self, request: Request) -> None:
        """Take the facts a request repeats; they are the referee's word, events are ours."""
        self.hand = self.sort_cards(request.hand)
        self.hand_sizes = list(request.hand_sizes)
        self.chips = list(request.chips)
        self.boodle = list(request.boodle)
        self.kitty = request.kitty
        if request.boodle_cards is not None:
            self.boodle_cards = list(request.boodle_cards)

    def apply(self, event: Event) -> None:
        """Update the table with one event."""
        if type(event) is CardPlayed:  # most events by far: the quick path
            seat, card = event.seat, event.card
            self.played.append((seat, card))
            self.played_cards.add(card)
            self.last_card = card
            sizes = self.hand_sizes
            if 0 <= seat < len(sizes) and sizes[seat] > 0:
                sizes[seat] -= 1
            if card in self.hand:
                self.hand.remove(card)
            return
        match event:  # the commoner events first
            case RunStopped(cause=cause, missing=missing):
                self.stops.append(event)
                if cause == "dead" and missing is not None:
                    self.known_dead.add(missing)
            case HandStarted(hand_number=number, dealer=dealer):
                self._new_hand(number, dealer)
            case PlayerEliminated():
                self._eliminated(event)
            case StakePlaced():
                self._stake(event)
            case CardsDealt(hand_sizes=sizes, dead_hand_size=dead_size, hand=hand):
                self.hand_sizes, self.dead_hand_size = list(sizes), dead_size
                self.hand = self.sort_cards(hand)
            case HandSwapped():
                self._swap(event)
            case CardPlayed(seat=seat, card=card):
                self.played.append((seat, card))
                self.played_cards.add(card)
                self.last_card = card
                self._set_size(seat, max(0, self._size_of(seat) - 1))
                if card in self.hand:
                    self.hand.remove(card)
            case BoodleWon(seat=seat, card=card, chips=chips):
                self._add_chips(seat, chips)
                if card in self.boodle_cards:
                    self.boodle[self.boodle_cards.index(card)] = 0
            case ChipsPaid(payer=payer, payee=payee, chips=chips):
                self._add_chips(payer, -chips)
                if payee is not None:
                    self._add_chips(payee, chips)
            case PotShared(seat=seat, chips=chips):
                self._add_chips(seat, chips)
            case KittyWon(seat=seat, chips=chips):
                self._add_chips(seat, chips)
                self.kitty = max(0, self.kitty - chips)
            case HandEnded():
                self.revealed = event
            case SeatDisqualified(seat=seat):
                self.out.add(seat)
            case DeadHandDecided() | BidsRevealed() | LeadPassed() | HandBlocked() | WentOut():
                pass  # nothing to keep: the events that follow carry the consequences

    def _new_hand(self, number: int, dealer: int) -> None:
        self.hand_number, self.dealer = number, dealer
        self.hand, self.played, self.stops = [], [], []
        self.played_cards, self.known_dead, self.swapped = set(), set(), set()
        self.last_card, self.dead_hand_size = None, 0
        self.hand_sizes = [0] * self.players

    def _eliminated(self, event: PlayerEliminated) -> None:
        """Out: its chips go, shared among the others as the event says."""
        seat = event.seat
        self.out.add(seat)
        self._add_chips(seat, -self._chips_of(seat))
        for receiver, amount in event.shares:
            self._add_chips(receiver, amount)

    def _stake(self, event: StakePlaced) -> None:
        amounts, kitty = event.amounts, event.kitty
        self._add_chips(event.seat, -(sum(amounts) + kitty))
        if len(self.boodle) != len(amounts):
            self.boodle = [0] * len(amounts)
        self.boodle = [have + add for have, add in zip(self.boodle, amounts, strict=True)]
        self.kitty += kitty

    def _swap(self, event: HandSwapped) -> None:
        """A seat took the dead hand: chips move, and what the old hand was is known or not."""
        seat = event.seat
        self.swapped.add(seat)
        self._add_chips(seat, -event.price)
        if event.paid_to is not None:
            self._add_chips(event.paid_to, event.price)
        else:
            self.kitty += event.price  # a purchase pays the kitty; a free exchange pays 0
        if seat == self.seat and event.hand is not None:
            self.known_dead = set(self.hand)  # your old hand is the dead hand now
            self.hand = self.sort_cards(event.hand)
        else:
            self.known_dead = set()  # someone else's old hand: unknown to you
        self.dead_hand_size = self._size_of(seat)
        self._set_size(seat, event.hand_size)

    def _chips_of(self, seat: int) -> int:
        return self.chips[seat] if 0 <= seat < len(self.chips) else 0

    def _add_chips(self, seat: int, amount: int) -> None:
        if 0 <= seat < len(self.chips):
            self.chips[seat] = max(0, self.chips[seat] + amount)

    def _size_of(self, seat: int) -> int:
        return self.hand_sizes[seat] if 0 <= seat < len(self.hand_sizes) else 0

    def _set_size(self, seat: int, size: int) -> None:
        if 0 <= seat < len(self.hand_sizes):
            self.hand_sizes[seat] = size

    # -- reading: cards under this match's rank order ------------------------------------------

    @property
    def aces_low(self) -> bool:
        """True when the Ace is the lowest card and runs stop at the King (``stops`` preset)."""
        return self.rules.get("rank_order") == "aces_low"

    def rank(self, card: str) -> int:
        """The card's place in its suit, 0 (lowest) to 12 (the top card, where runs stop)."""
        return (_ACES_LOW_RANKS if self.aces_low else RANKS).index(card[0])

    def _sort_key(self, card: str) -> tuple[int, int]:
        """(suit, rank) of a card, for ``sort_cards``."""
        return (SUITS.index(card[1]), self.rank(card))

    def next_card(self, card: str) -> str | None:
        """The card that would follow ``card`` in a run, or None after the top card."""
        ranks = _ACES_LOW_RANKS if self.aces_low else RANKS
        position = ranks.index(card[0])
        return ranks[position + 1] + card[1] if position < 12 else None

    def sort_cards(self, cards: Iterable[str]) -> list[str]:
        """Cards by suit (C D H S), then by rank under this match's order."""
        keys = _SORT_KEYS[_ACES_LOW_RANKS if self.aces_low else RANKS]
        try:
            return sorted(cards, key=keys.__getitem__)
        except KeyError:  # not a card text: sort what can be sorted, as before
            return sorted(cards, key=self._sort_key)

    def suit_of_hand(self, suit: str) -> list[str]:
        """Your cards of one suit, lowest first."""
        return [card for card in self.hand if card[1] == suit]

    def is_boodle(self, card: str) -> bool:
        return card in self.boodle_cards

    def is_gone(self, card: str) -> bool:
        """True if ``card`` can never be played this hand: played already or known dead."""
        return card in self.played_cards or card in self.known_dead

    def unseen(self) -> set[str]:
        """Cards whose place you do not know: in another seat's hand or in the dead hand."""
        return set(full_deck()) - set(self.hand) - self.played_cards - self.known_dead

    def my_run(self, card: str) -> list[str]:
        """The cards you would play in a row if a run reached ``card`` in your hand.

        A run moves to whoever holds the next card, so it stays with you while
        you hold each next card: leading 5H from 5H 6H 7H 9H plays 5H 6H 7H.
        """
        run: list[str] = []
        current: str | None = card
        while current is not None and current in self.hand:
            run.append(current)
            current = self.next_card(current)
        return run

    def stops_after(self, card: str) -> bool:
        """True if a run that reaches ``card`` certainly stops right after it.

        The top card always stops a run; otherwise the next card must be
        played already or known to be in the dead hand.
        """
        following = self.next_card(card)
        return following is None or self.is_gone(following)


# ---------------------------------------------------------------- the bot


class Bot:
    """Override the decisions you care about; each default is the request's ``default``.

    Every decision method gets the ``Request`` (``legal``, ``default``, your
    ``hand``, chips, the time left...) and the ``TableState``.  Hooks are
    called as the match goes on; their default is to do nothing.
    """

    name: str = "python-bot"
    """Your bot's name in the ``ready`` line (1 to 64 characters)."""
    version: str = "0.1"

    # -- decisions -------------------------------------------------------------------------

    def lead(self, request: Request, state: TableState) -> str:
        """Which card to lead: one of ``request.legal`` (each the lowest card of a suit)."""
        return _default_text(request)

    def stake(self, request: Request, state: TableState) -> list[int]:
        """Free stakes: one amount per ``request.boodle_cards``, summing to ``stake_total``."""
        default = request.default
        if isinstance(default, list):
            return list(default)
        return _spread(request.stake_total or 0, len(request.boodle_cards or ()))

    def dead_hand(self, request: Request, state: TableState) -> str:
        """As dealer, what to do with the dead hand: one of ``request.legal``."""
        return _default_text(request)

    def bid(self, request: Request, state: TableState) -> int:
        """A sealed bid for the dead hand in chips, ``min_bid..max_bid``; 0 is no bid."""
        return request.default if isinstance(request.default, int) else 0

    # -- hooks -----------------------------------------------------------------------------

    def on_match_start(self, start: MatchStart, state: TableState) -> None:
        """A match begins (``state`` already holds its seat, rules and chips)."""

    def on_events(self, events: list[Event], state: TableState) -> None:
        """Events arrived (``state`` already reflects them)."""

    def on_fault(self, fault: Fault, state: TableState) -> None:
        """The referee says you broke a rule (the SDK has logged it to stderr)."""

    def on_match_end(self, end: MatchEnd, state: TableState) -> None:
        """The match is over: ``end.places`` and ``end.chips`` per seat."""


def _default_text(request: Request) -> str:
    if isinstance(request.default, str):
        return request.default
    return request.legal[0] if request.legal else ""


def _spread(total: int, cards: int) -> list[int]:
    if cards < 1:
        return []
    base, extra = divmod(total, cards)
    return [base + 1 if index < extra else base for index in range(cards)]


# ---------------------------------------------------------------- the session (sans-IO)


class BotSession:
    """The bot's side of one connection: referee lines in, bot lines out, no I/O.

    >>> session = BotSession(Bot())
    >>> session.receive(b'{"type":"hello","protocol":1,"referee":"test"}')
    [b'{"type":"ready","name":"python-bot","protocol":1,"version":"0.1"}\\n']

    ``finished`` turns true at ``shutdown`` (``exit_status`` 0) or at a ``hello``
    of another protocol version (``exit_status`` 2, as SPEC.md asks).
    """

    def __init__(
        self, bot: Bot, *, token: str | None = None, log: Callable[[str], None] = _log
    ) -> None:
        self.bot = bot
        self.state = TableState()
        self.token = token
        self.log = log
        self.greeted = False
        self.finished = False
        self.exit_status = 0
        self.in_match = False

    def receive(self, line: bytes) -> list[bytes]:
        """Handle one line from the referee; return the lines to send (each ends in ``\\n``)."""
        if self.finished:
            return []
        try:
            message = decode_referee_message(line)
        except MalformedMessageError as error:
            return self._salvage(line, error)
        if message is None:
            return []  # a message type from a later protocol version: skip it
        try:
            return self._dispatch(message)
        except Exception:
            self.log(f"newmarket sdk: error while handling a {type(message).__name__}:")
            self.log(_traceback_text())
            if isinstance(message, Request):
                return [encode(Reply(id=message.id, choice=message.default))]
            return []

    def _dispatch(self, message: Any) -> list[bytes]:
        bot, state = self.bot, self.state
        match message:
            case Hello(protocol=version, referee=referee):
                return self._greet(version, referee)
            case MatchStart():
                self.state = state = TableState.for_match(message)
                self.in_match = True
                self._hook(bot.on_match_start, message)
            case Events(events=events):
                for event in events:
                    state.apply(event)
                self._hook(bot.on_events, events)
            case Request():
                return [encode(Reply(id=message.id, choice=self._decide(message)))]
            case Fault(kind=kind, detail=detail, id=request_id, applied=applied):
                state.faults.append(message)
                about = "" if request_id is None else f" (request {request_id})"
                then = "" if applied is None else f"; the referee applied {applied!r}"
                self.log(f"newmarket sdk: fault {kind}{about}: {detail}{then}")
                self._hook(bot.on_fault, message)
            case MatchEnd():
                self.in_match = False
                self._hook(bot.on_match_end, message)
            case Shutdown():
                self.finished = True
        return []

    def _greet(self, version: int, referee: str) -> list[bytes]:
        if self.greeted:
            self.log("newmarket sdk: a second hello was ignored")
            return []
        self.greeted = True
        if version != PROTOCOL_VERSION:
            # SPEC.md, "Handshake": say why on stderr and exit with status 2.
            self.log(
                f"newmarket sdk: the referee {referee!r} speaks protocol {version}, "
                f"this SDK speaks {PROTOCOL_VERSION}; exiting"
            )
            self.finished, self.exit_status = True, 2
            return []
        ready = Ready(
            name=self.bot.name[:64] or "python-bot",
            protocol=PROTOCOL_VERSION,
            version=self.bot.version[:64],
            token=self.token,
        )
        return [encode(ready)]

    def _decide(self, request: Request) -> Choice:
        """Ask the bot; fall back to the request's default if it fails or answers illegally."""
        self.state.sync(request)
        method: Callable[[Request, TableState], Any] = {
            "lead": self.bot.lead,
            "stake": self.bot.stake,
            "dead_hand": self.bot.dead_hand,
            "bid": self.bot.bid,
        }.get(request.decision, _no_method)
        try:
            choice = _as_choice(method(request, self.state))
        except Exception:
            self.log(f"newmarket sdk: {request.decision} raised; replying with the default:")
            self.log(_traceback_text())
            return request.default
        fault = choice_fault(request, choice) if choice is not None else None
        if choice is None or fault is not None:
            why = fault.detail if fault is not None else "not a choice"
            self.log(
                f"newmarket sdk: {request.decision} returned {choice!r} ({why}); "
                f"replying with the default {request.default!r}"
            )
            return request.default
        return choice

    def _hook(self, hook: Callable[[Any, TableState], None], argument: Any) -> None:
        try:
            hook(argument, self.state)
        except Exception:
            self.log(f"newmarket sdk: {getattr(hook, '__name__', 'a hook')} raised:")
            self.log(_traceback_text())

    def _salvage(self, line: bytes, error: MalformedMessageError) -> list[bytes]:
        """A line we cannot read as a message: log it, and still answer if it is a request.

        A request whose fields changed shape in a later version still carries an
        ``id`` and a ``default``; replying with that default keeps the bot in the match.
        """
        self.log(f"newmarket sdk: skipped a line from the referee: {error}")
        try:
            data = decode_json(line)  # nesting bounded: a deep line is skipped, not a crash
        except MalformedMessageError:
            return []
        if not isinstance(data, dict) or data.get("type") != "request":
            return []
        request_id, default = data.get("id"), _as_choice(data.get("default"))
        if type(request_id) is not int or request_id < 1 or default is None:
            return []
        self.log(f"newmarket sdk: answered request {request_id} with its default")
        return [encode(Reply(id=request_id, choice=default))]


def _no_method(request: Request, state: TableState) -> Choice:
    return request.default


def _as_choice(value: object) -> Choice | None:
    """``value`` as a reply's choice (a tuple of stakes becomes a list), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str | int):
        return value
    if isinstance(value, list | tuple) and all(
        isinstance(item, int) and not isinstance(item, bool) for item in value
    ):
        return [int(item) for item in value]
    return None


# ---------------------------------------------------------------- I/O


def serve(
    bot: Bot,
    read: Callable[[], bytes],
    write: Callable[[bytes], None],
    *,
    token: str | None = None,
    log: Callable[[str], None] = _log,
) -> int:
    """Play over any byte stream until ``shutdown`` or its end; return the exit status.

    ``read`` returns the next bytes available (``b""`` at the end); ``write``
    sends and flushes.  Exit status (SPEC.md, "The process"): 0 after
    ``shutdown`` or when the input ends; 2 if the referee speaks another
    protocol version; 1 if it sends a line too long to frame.
    """
    session = BotSession(bot, token=token, log=log)
    framer = LineFramer()
    while not session.finished:
        data = read()
        if not data:
            if session.in_match:
                log("newmarket sdk: the referee closed the connection during a match")
            return 0
        try:
            lines = framer.feed(data)
        except FramingError as error:
            log(f"newmarket sdk: {error}; giving up on this connection")
            return 1
        for line in lines:
            for out in session.receive(line):
                write(out)
            if session.finished:
                break
    return session.exit_status


def run(
    bot: Bot,
    environ: Mapping[str, str] | None = None,
    *,
    connect: str | None = None,
    token: str | None = None,
) -> NoReturn:
    """Play ``bot`` on stdio, or over TCP when ``NEWMARKET_CONNECT`` is set; then exit.

    ``connect="host:port"`` and ``token`` join a league directly (a remote bot
    of ``newmarket league``), whatever the environment says.
    """
    env = os.environ if environ is None else environ
    token = token or env.get(ENV_TOKEN) or None
    try:
        address = parse_connect(connect) if connect else connect_address(env)
    except ValueError as error:
        _log(f"newmarket sdk: {error}")
        sys.exit(2)
    if address is None:
        sys.exit(_serve_stdio(bot, token))
    sys.exit(_serve_tcp(bot, address, token))


def _serve_stdio(bot: Bot, token: str | None) -> int:
    stdin: BinaryIO = sys.stdin.buffer
    stdout: BinaryIO = sys.stdout.buffer
    # From here on stdout is the protocol's; a print() in bot code goes to the log.
    sys.stdout = sys.stderr
    read1: Callable[[int], bytes] = getattr(stdin, "read1", stdin.read)

    def write(data: bytes) -> None:
        stdout.write(data)
        stdout.flush()

    try:
        return serve(bot, lambda: read1(65536), write, token=token)
    except (BrokenPipeError, KeyboardInterrupt):
        return 1
    finally:
        _restore(sys.__stdout__)


def _traceback_text() -> str:
    """The exception being handled, as ``traceback`` prints it (imported only when needed)."""
    import traceback  # only on an error: a bot's start-up skips it

    return traceback.format_exc().rstrip()


def _serve_tcp(bot: Bot, address: tuple[str, int], token: str | None) -> int:
    # Imported here: most bots speak stdio, and every bot process's start-up pays for
    # what the SDK imports (a league starts one per bot and seat rotation per table).
    import socket

    try:
        connection = socket.create_connection(address, timeout=30)
    except OSError as error:
        _log(f"newmarket sdk: cannot connect to {address[0]}:{address[1]}: {error}")
        return 1
    connection.settimeout(None)
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sys.stdout = sys.stderr
    with connection:
        try:
            return serve(bot, lambda: connection.recv(65536), connection.sendall, token=token)
        except (ConnectionError, KeyboardInterrupt) as error:
            _log(f"newmarket sdk: connection lost: {error}")
            return 1


def _restore(stream: TextIO | None) -> None:
    if stream is not None:
        with contextlib.suppress(Exception):
            sys.stdout = stream
