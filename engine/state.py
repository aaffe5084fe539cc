"""The match state machine: the one file that owns every phase transition.

A match is a session at one table.  Each hand goes through

    eliminations -> stakes -> deal (chance) -> dead hand -> play -> settlement

and the match ends when few enough players are left or the hand limit is
reached.  The API is shaped like OpenSpiel's: ``current_seat`` says who must
decide, ``legal_actions`` lists the choices (sorted, never empty while the
match goes on), ``apply`` takes one, ``outcome`` gives the result.  Forced
plays (following a run) are applied by the engine, since no choice exists.
Chance (the first dealer and every deal) comes from the match seed, so the
same seed and the same decisions give the same match, card for card.

Hidden cards leave the engine only through ``observation(seat)`` and
``events(viewer=seat)`` (see ``engine.events``).

Inside, a card is a *position code* ``suit * 13 + position`` where position 0
is the lowest card of the suit under the rank order in force, so "the next
higher card" is always ``code + 1`` and a hand is a 52-bit mask.  Codes are
turned back into ``Card``s only at the API boundary.  Beside the owner table
(who was dealt each card, never changed once a run event refers to it) a hand
keeps a play table: who still holds each card, so that a run asks one list
"who holds the next card?" and a card played, dead or past the top of its
suit all answer "nobody".  Speed matters here
(search bots play millions of hands), so the hot path of a hand works on
plain ints and lists and records events as small tuples, turned into typed
events only when asked for.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from functools import lru_cache
from operator import add
from typing import Any

from engine.actions import Action, Bid, DeadHandChoice, Decision, Stakes
from engine.cards import CARDS, Card, Rank, RankOrder, Suit
from engine.chips import divide
from engine.deal import ONE_SEAT, Deal, first_dealer, shuffled
from engine.errors import (
    IllegalActionError,
    MalformedActionError,
    MatchOverError,
    NewmarketError,
    RulesError,
)
from engine.events import (
    E_BIDS,
    E_BLOCKED,
    E_BOODLE,
    E_DEAD_HAND,
    E_DEAL,
    E_ELIMINATED,
    E_HAND_END,
    E_HAND_START,
    E_KITTY,
    E_MATCH_END,
    E_OUT,
    E_PASS,
    E_PAY,
    E_RUN,
    E_SHARE,
    E_STAKE,
    E_STOP,
    E_SWAP,
    STOP_DEAD,
    STOP_PLAYED,
    STOP_TOP,
    CardPlayed,
    Event,
    EventViews,
    RecurringMemo,
    cards_of_mask,
    typed,
    typed_events,
    typed_views,
)
from engine.observation import Observation
from engine.outcome import Outcome
from engine.rules import (
    Ante,
    DeadHandExchange,
    Dealing,
    LeadSuit,
    Payment,
    Rules,
)
from engine.settlement import blocked_hand_owed, owed_to_winner

MIN_PLAYERS = 3
MAX_PLAYERS = 8

# The owner of a card in the dead hand (seats are 0..7).
DEAD = 8

END_PLAYERS_LEFT = "players_left"
END_HAND_LIMIT = "hand_limit"

_PHASE_STAKE = 1
_PHASE_DEAD_HAND = 2
_PHASE_BID = 3
_PHASE_LEAD = 4
_PHASE_OVER = 5

_DECISION_OF_PHASE = {
    _PHASE_STAKE: Decision.STAKE,
    _PHASE_DEAD_HAND: Decision.DEAD_HAND,
    _PHASE_BID: Decision.BID,
    _PHASE_LEAD: Decision.LEAD,
}

_SUIT_MASK = 0x1FFF
# Rule values the state machine tests once a hand.  An enum member read through its
# class (``Ante.FREE``) costs about 0.3 µs in Python 3.11, several times a module name.
_bit_count = int.bit_count  # the same: a method read through its type is a lookup each time
# _LOWEST[m] is the lowest set bit's index of a 13-bit mask m (m > 0).
_LOWEST: tuple[int, ...] = (-1, *(((m & -m).bit_length() - 1) for m in range(1, 1 << 13)))


def _tables(order: RankOrder) -> tuple[tuple[int, ...], tuple[Card, ...]]:
    to_pos = [0] * 52
    for card in CARDS:
        to_pos[card] = card.suit * 13 + order.position(Rank(card % 13))
    to_card = [CARDS[0]] * 52
    for index, pos in enumerate(to_pos):
        to_card[pos] = CARDS[index]
    return tuple(to_pos), tuple(to_card)


_TABLES = {order: _tables(order) for order in RankOrder}
# The play table (Match._in_hand) holds a seat for each card still in a hand, else why
# nobody can play it (DEAD, _PLAYED), and two entries past the pack: code 52, after
# each suit's top, holds _TOP, and code 53, after each boodle card, _BOODLE.  So a
# run's one lookup per card also finds the cards after which it may pay, and the
# value that stops a run is the stop's cause.
_AFTER_TOP = 52
_AFTER_BOODLE = 53
_BOODLE = 9
_PLAYED = 10
_TOP = 11
_PLAY_TAIL = [_TOP, _BOODLE]  # never changed: a hand appends it to its own copy


def _lowest_cards(to_card: tuple[Card, ...]) -> tuple[tuple[Card, ...], ...]:
    """Per suit, indexed by the suit's 13-bit mask m > 0: its lowest card (``Card(0)`` for m == 0,
    never read).  One lookup per suit lists a leader's legal leads.
    """
    lowest = (0, *_LOWEST[1:])
    return tuple(
        tuple(map(to_card[13 * suit : 13 * suit + 13].__getitem__, lowest)) for suit in range(4)
    )


_LOWS = {order: _lowest_cards(_TABLES[order][1]) for order in RankOrder}
_SUIT_OF: tuple[int, ...] = tuple(code // 13 for code in range(52))  # a lookup, not a division
_BIT: tuple[int, ...] = tuple(1 << code for code in range(53))  # 1 << 52 ends a run at code 51
# Every stop event there can be, made once: a stop is (E_STOP, code, why, next code),
# fixed by the card and the reason, so each hand's ten or so stops share these
# tuples instead of allocating their own and keeping them alive until the match ends.
_STOPS_TOP: tuple[tuple[Any, ...], ...] = tuple((E_STOP, code, STOP_TOP, -1) for code in range(52))
_STOPS_PLAYED: tuple[tuple[Any, ...], ...] = tuple(
    (E_STOP, code, STOP_PLAYED, code + 1) for code in range(52)
)
_STOPS_DEAD: tuple[tuple[Any, ...], ...] = tuple(
    (E_STOP, code, STOP_DEAD, code + 1) for code in range(52)
)
# The stops by the play table's value that stopped the run (DEAD, _PLAYED or _TOP).
_STOPS_BY: tuple[tuple[tuple[Any, ...], ...], ...] = (
    *((),) * DEAD,
    _STOPS_DEAD,
    (),
    _STOPS_PLAYED,
    _STOPS_TOP,
)


def _run_records(is_lead: bool) -> tuple[tuple[Any, ...], ...]:
    """``[first][last]``: the record ``(E_RUN, first, last, is_lead)`` of a run in one suit.

    A hand's log keeps runs in this short form, made once here, and ``raw_events``
    adds the hand's owner table: a lead allocates no event of its own.
    """
    return tuple(
        tuple(
            (E_RUN, first, last, is_lead) if last // 13 == first // 13 and last >= first else None
            for last in range(52)
        )
        for first in range(52)
    )


_LEAD_RUNS = _run_records(True)
_FOLLOW_RUNS = _run_records(False)
_ALL_CARDS = (1 << 52) - 1
_CODES: tuple[int, ...] = tuple(range(52))  # the pack by position code, before a shuffle
# A hand's going out, and its winners, shared like the stops: (E_OUT, seat) and (seat,).
_OUTS: tuple[tuple[int, int], ...] = tuple((E_OUT, seat) for seat in range(8))
_ALONE: tuple[tuple[int], ...] = tuple((seat,) for seat in range(8))
# The owner table between hands.  Owner tables are never changed in place (see
# Match.apply), so every match shares this one; and the play table, which only a
# lead changes, and no lead is made between hands.
_NO_OWNER = [DEAD] * 52
_NO_HOLDER = [*_NO_OWNER, *_PLAY_TAIL]


@lru_cache(maxsize=1024)
def _clockwise(live: tuple[bool, ...], start: int) -> tuple[int, ...]:
    """Live seats clockwise from ``start``; cached, as a hand asks two or three times."""
    n = len(live)
    return tuple((start + i) % n for i in range(n) if live[(start + i) % n])


@lru_cache(maxsize=1024)
def _holders_by_position(
    live: tuple[bool, ...], dealer: int, dead_hand: bool, equal_hands: bool
) -> tuple[int, ...]:
    """Who receives the k-th card dealt: clockwise from the dealer's left, dead hand last.

    Cached: a table has few (live seats, dealer) combinations and every hand needs one.
    """
    n = len(live)
    recipients = [(dealer + 1 + i) % n for i in range(n) if live[(dealer + 1 + i) % n]]
    if dead_hand:
        recipients.append(DEAD)
    ways = len(recipients)
    dealt = 52
    if equal_hands:
        dealt = 52 // ways * ways  # seed 002: the over-cards go to the dummy
    return tuple((recipients * (dealt // ways + 1))[:dealt] + [DEAD] * (52 - dealt))


def _with_owner(records: list[tuple[Any, ...]], owner: list[int]) -> list[tuple[Any, ...]]:
    """A hand's raw events from its log: each run record gains the hand's owner table."""
    return [(*record, owner) if record[0] == E_RUN else record for record in records]


def _play_table(owner: list[int], played: int) -> list[int]:
    """A hand's play table (``Match._in_hand``) from its owner table and the cards played."""
    table = [_PLAYED if played >> code & 1 else holder for code, holder in enumerate(owner)]
    return [*table, *_PLAY_TAIL]


def _leads(hand: int, lows: tuple[tuple[Card, ...], ...]) -> list[Card]:
    """The legal leads of a hand when any suit may be led: its lowest card in each suit, sorted.

    A lead is the lowest card held in a suit (every source).  Legal leads come
    out sorted because a suit's codes and its cards both sit in one block of 13.
    The 52-bit hand is split into two 26-bit halves first: operations on an int
    of one 30-bit digit cost less than on the whole two-digit hand.
    """
    clubs, diamonds, hearts, spades = lows
    low = hand & 0x3FFFFFF
    high = hand >> 26
    legal = []
    if suit := low & 0x1FFF:
        legal.append(clubs[suit])
    if suit := low >> 13:
        legal.append(diamonds[suit])
    if suit := high & 0x1FFF:
        legal.append(hearts[suit])
    if suit := high >> 13:
        legal.append(spades[suit])
    return legal


class _Seating:
    """The live seats clockwise from one seat's left, worked out once per table.

    Every hand needs them three times (who deals next, who stakes and is dealt
    to in which order, who pays the one who went out), and they change only
    when a seat is eliminated.  With fixed antes they also hold the hand's
    stakes when the seat deals: the stake events (immutable, so every hand
    dealt by the seat shares them) and what each boodle card gains.  A match
    reads them from ``Match._seatings``, a dict shared by every match at the
    same table (``_seatings_at``), so that after the first matches no hand
    works one out.
    """

    __slots__ = ("dues", "holders", "kitty", "order", "others", "pot", "stakes")

    order: tuple[int, ...]  # live seats from the seat's left; the seat itself last if live
    others: tuple[int, ...]  # ``order`` without the seat: who pays it when it goes out
    holders: tuple[int, ...]  # who receives the k-th card when the seat deals
    stakes: tuple[tuple[Any, ...], ...]  # fixed antes: the stake events when the seat deals
    pot: tuple[int, ...]  # fixed antes: chips each boodle card gains when the seat deals
    dues: tuple[int, ...]  # fixed antes: chips each seat pays (stakes and kitty) when it deals
    kitty: int  # fixed antes: chips the kitty gains when the seat deals

    def __init__(self, live: tuple[bool, ...], seat: int, table: _Table):
        dead_hand, equal_hands, ante_per_card, dealer_ante_per_card, kitty, cards = table
        self.order = _clockwise(live, (seat + 1) % len(live))
        self.others = tuple(s for s in self.order if s != seat)
        self.holders = _holders_by_position(live, seat, dead_hand, equal_hands)
        ante = (ante_per_card,) * cards
        dealer_ante = (dealer_ante_per_card,) * cards
        self.stakes = tuple(
            (E_STAKE, s, dealer_ante if s == seat else ante, kitty) for s in self.order
        )
        payers = len(self.order) - 1
        self.pot = tuple(a * payers + d for a, d in zip(ante, dealer_ante, strict=True))
        due = sum(ante) + kitty
        dealer_due = sum(dealer_ante) + kitty
        self.dues = tuple(
            dealer_due if s == seat else due if s in self.order else 0 for s in range(len(live))
        )
        self.kitty = kitty * len(self.order)


# What a table's seatings depend on besides its live seats, as plain values (a Rules
# hashes by a Python method over all its fields, and an enum member by another):
# (dead hand dealt, equal hands, ante per card, dealer's ante per card, kitty ante,
# boodle cards).
_Table = tuple[bool, bool, int, int, int, int]


def _table_of(rules: Rules) -> _Table:
    return (
        rules.dead_hand,
        rules.dealing is Dealing.EQUAL_HANDS,
        rules.ante_per_card,
        rules.dealer_ante_per_card,
        rules.kitty_ante,
        len(rules.boodle_cards),
    )


class _Plan:
    """What a match derives from its rules alone, worked out once per ``Rules`` object.

    A match starts every 16 hands or so of random play, and these took several
    µs a match (enum reads, ``stake_required``, the boodle tables).
    """

    __slots__ = (
        "after",
        "boodle_at",
        "due",
        "exchange",
        "free_ante",
        "hand_limit",
        "lead_any",
        "lows",
        "most_due",
        "per_card",
        "table",
    )

    def __init__(self, rules: Rules) -> None:
        to_pos = _TABLES[rules.rank_order][0]
        self.boodle_at = [-1] * 52  # shared by every match of these rules: never changed
        for index, card in enumerate(rules.boodle_cards):
            self.boodle_at[to_pos[card]] = index
        # Where a run looks up who holds the next card (see _AFTER_BOODLE).
        self.after = tuple(
            _AFTER_BOODLE
            if self.boodle_at[code] >= 0
            else _AFTER_TOP
            if code % 13 == 12
            else code + 1
            for code in range(52)
        )
        self.lows = _LOWS[rules.rank_order]
        self.lead_any = rules.lead_suit is LeadSuit.ANY
        self.free_ante = rules.ante is Ante.FREE
        self.exchange = rules.dead_hand_exchange is not DeadHandExchange.OFF
        self.hand_limit = rules.hand_limit
        self.per_card = rules.payment is Payment.PER_CARD
        self.due = (rules.stake_required(False), rules.stake_required(True))
        self.most_due = max(self.due)
        self.table = _table_of(rules)


# By id(rules), with the rules kept alive beside their plan so that no other object
# can take the id (a Rules hashes by a Python method over all its fields: slow).
_PLANS: dict[int, tuple[Rules, _Plan]] = {}


def _plan_of(rules: Rules) -> _Plan:
    # Keyed by identity (hashing Rules runs Python over every field). Safe: the entry
    # keeps its Rules alive, so no other object can take that id while it is here.
    entry = _PLANS.get(id(rules))
    if entry is not None:
        return entry[1]
    if len(_PLANS) >= 256:
        _PLANS.clear()
    plan = _Plan(rules)
    _PLANS[id(rules)] = (rules, plan)
    return plan


@lru_cache(maxsize=1024)
def _seatings_at(live: tuple[bool, ...], table: _Table) -> dict[int, _Seating]:
    """The seatings by seat at a table with these live seats, filled in as they are asked
    for (``Match._seating``) and shared by every match at such a table."""
    return {}


@lru_cache(maxsize=64)
def stake_placements(total: int, cards: int) -> tuple[Stakes, ...]:
    """Every way to spread ``total`` chips over ``cards`` boodle cards, sorted."""

    def spread(left: int, slots: int) -> Iterator[tuple[int, ...]]:
        if slots == 1:
            yield (left,)
            return
        for first in range(left + 1):
            for rest in spread(left - first, slots - 1):
                yield (first, *rest)

    return tuple(Stakes(amounts) for amounts in spread(total, cards))


def _checked_chips(chips: Sequence[int], players: int) -> tuple[int, ...]:
    """``chips=`` as a tuple, or a NewmarketError naming the argument and the bad entry."""
    if isinstance(chips, (str, bytes)) or not isinstance(chips, Sequence):
        raise NewmarketError(f"chips: a sequence of {players} whole numbers, got {chips!r}")
    if len(chips) != players:
        raise NewmarketError(f"chips: {len(chips)} entries for {players} seats")
    for seat, value in enumerate(chips):
        if type(value) is not int or value < 0:
            raise NewmarketError(
                f"chips: seat {seat} must start with a whole number >= 0 of chips, got {value!r}"
            )
    return tuple(chips)


class Match:
    """One match at one table. See the module docstring."""

    __slots__ = (
        "_after",
        "_bid_order",
        "_bids",
        "_boodle_at",
        "_chips",
        "_clubs",
        "_dead",
        "_dealer",
        "_deals",
        "_diamonds",
        "_due",
        "_elimination",
        "_end_reason",
        "_hand_log",
        "_hand_number",
        "_hands",
        "_hands_played",
        "_hearts",
        "_in_hand",
        "_kitty",
        "_known_dead",
        "_lead_any",
        "_legal",
        "_live",
        "_log",
        "_log_base",
        "_lows",
        "_most_due",
        "_next_order",
        "_no_known_dead",
        "_owner",
        "_owners",
        "_phase",
        "_places",
        "_plan",
        "_players",
        "_rules",
        "_seatings",
        "_seats",
        "_seed",
        "_spades",
        "_stacks",
        "_stake_order",
        "_stakes",
        "_start",
        "_table",
        "_to_act",
        "_to_card",
        "_to_pos",
        "is_over",
    )

    is_over: bool
    """True once the match is over.  A plain attribute, not a property: a playout
    reads it before every decision (read it, never set it)."""
    _rules: Rules
    _players: int
    _seed: int
    _seats: tuple[int, ...]  # 0..players-1
    _to_pos: tuple[int, ...]
    _to_card: tuple[Card, ...]
    _boodle_at: list[int]
    _after: tuple[int, ...]  # where a run looks for the next card's holder (see _Plan)
    _lows: tuple[tuple[Card, ...], ...]  # see _lowest_cards
    _clubs: tuple[Card, ...]  # _lows by suit, for apply's copy of _leads
    _diamonds: tuple[Card, ...]
    _hearts: tuple[Card, ...]
    _spades: tuple[Card, ...]
    _lead_any: bool  # rules.lead_suit is ANY: no pass, no steering away from a suit
    _deals: tuple[Deal, ...]
    _due: tuple[int, int]  # the stake required of (a non-dealer, the dealer)
    _most_due: int  # the larger of the two
    _start: tuple[int, ...]  # each seat's chips at the start of the match
    _chips: list[int]
    _live: list[bool]
    _seatings: dict[int, _Seating]  # by seat, for the live seats now (see _Seating)
    _table: _Table  # see _table_of
    _stacks: list[int]
    _kitty: int
    _dealer: int
    _hand_number: int
    _hands_played: int
    _next_order: tuple[int, list[int]]  # (hand number, its shuffled codes): prepare_next_deal
    _phase: int
    _to_act: int
    _owner: list[int]  # who was dealt each card (after any swap); static during play
    _in_hand: list[int]  # the play table: the owner while unplayed, else _PLAYED; then _PLAY_TAIL
    _hands: list[int]
    _dead: int
    _known_dead: list[int]  # replaced, never changed in place: clones share it
    _no_known_dead: list[int]  # all 0, shared by the match's hands and clones
    _plan: _Plan
    _legal: list[Any]  # legal_actions(), of every kind; Cards only in a lead decision
    _stake_order: Sequence[int]
    _stakes: list[tuple[int, ...]]
    _bid_order: Sequence[int]
    _bids: list[int]
    _elimination: list[tuple[int, int, int]]
    _places: tuple[int, ...]
    _end_reason: str
    _log: list[list[tuple[Any, ...]]]  # raw events, one list per hand; runs without the owner
    _owners: list[list[int]]  # the owner table of each finished hand of _log (not the last)
    _log_base: int  # raw events in every list but the last
    _hand_log: list[tuple[Any, ...]]  # the last list of _log: this hand's raw events

    def __init__(
        self,
        rules: Rules,
        players: int,
        seed: int,
        *,
        dealer: int | None = None,
        deals: Sequence[Deal] = (),
        chips: Sequence[int] | None = None,
    ) -> None:
        """Start a match; it runs until the first decision.

        ``dealer`` overrides the seeded first dealer and ``deals`` the seeded
        deals of the first hands (scripted tests); both default to the seed.
        ``chips`` gives each seat its own starting chips (a bankroll league
        carries each bot's chips from table to table); the default is
        ``rules.starting_chips`` for every seat.  A seat that starts with fewer
        chips than its first stake is eliminated before the first deal, as any
        seat that cannot pay is (its chips are divided among the others).
        """
        if not isinstance(players, int) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise NewmarketError(f"players: a table seats 3 to 8 players, got {players!r}")
        if rules.end_players >= players:
            raise RulesError(
                f"end_players: {rules.end_players} must be less than the number of players "
                f"({players})"
            )
        if dealer is not None and not 0 <= dealer < players:
            raise NewmarketError(f"dealer: seat {dealer} is not at a table of {players}")
        start = (
            (rules.starting_chips,) * players if chips is None else _checked_chips(chips, players)
        )
        self._rules = rules
        self._players = players
        self._seed = seed
        self._seats = tuple(range(players))
        self._to_pos, self._to_card = _TABLES[rules.rank_order]
        plan = _plan_of(rules)
        self._plan = plan
        self._boodle_at = plan.boodle_at
        self._after = plan.after
        self._lows = plan.lows
        self._clubs, self._diamonds, self._hearts, self._spades = plan.lows
        self._lead_any = plan.lead_any
        self._deals = tuple(deals)
        self._due = plan.due
        self._most_due = plan.most_due
        self._start = start
        self._chips = list(start)
        self._table = plan.table
        self._seat_live([True] * players)
        self._stacks = [0] * len(rules.boodle_cards)
        self._kitty = 0
        # The hand before the first is dealt by the seat to the first dealer's right,
        # so "the next live seat clockwise" gives the first dealer.
        first = first_dealer(seed, players) if dealer is None else dealer
        self._dealer = (first - 1) % players
        self._hand_number = 0
        self._hands_played = 0
        self._next_order = (0, [])
        self._phase = _PHASE_OVER
        self.is_over = False
        self._to_act = -1
        self._owner = _NO_OWNER
        self._in_hand = _NO_HOLDER
        self._hands = [0] * players
        self._dead = 0
        self._no_known_dead = [0] * players
        self._known_dead = self._no_known_dead
        self._legal = []
        self._stake_order = []
        self._stakes = []
        self._bid_order = []
        self._bids = []
        self._elimination = []
        self._places = ()
        self._end_reason = ""
        self._log = []
        self._owners = []
        self._log_base = 0
        self._hand_log = []
        self._begin_hand()

    # ------------------------------------------------------------------ queries

    @property
    def rules(self) -> Rules:
        return self._rules

    @property
    def players(self) -> int:
        return self._players

    @property
    def seed(self) -> int:
        return self._seed

    def current_seat(self) -> int | None:
        """The seat that must decide now, or None when the match is over."""
        return None if self._phase == _PHASE_OVER else self._to_act

    @property
    def decision(self) -> Decision | None:
        return _DECISION_OF_PHASE.get(self._phase)

    def legal_actions(self) -> list[Any]:
        """The choices of the seat to act, sorted; empty exactly when the match is over."""
        return self._legal.copy()  # kept up to date by every decision, whatever its kind

    @property
    def hand_number(self) -> int:
        """1 for the first hand; the hand being played (or the last one, when over)."""
        return self._hand_number

    @property
    def hands_played(self) -> int:
        return self._hands_played

    @property
    def dealer(self) -> int:
        return self._dealer

    @property
    def chips(self) -> tuple[int, ...]:
        return tuple(self._chips)

    @property
    def starting_chips(self) -> tuple[int, ...]:
        """Each seat's chips at the start of the match (``chips=`` or the rules' default)."""
        return self._start

    @property
    def live(self) -> tuple[bool, ...]:
        """True for seats still in the match (not eliminated)."""
        return tuple(self._live)

    @property
    def boodle_stacks(self) -> tuple[int, ...]:
        """Chips on each boodle card, in the order of ``rules.boodle_cards``."""
        return tuple(self._stacks)

    @property
    def kitty(self) -> int:
        return self._kitty

    def total_chips(self) -> int:
        """Players' chips + every boodle stack + the kitty: constant for the whole match."""
        return sum(self._chips) + sum(self._stacks) + self._kitty

    def hand_sizes(self) -> tuple[int, ...]:
        return tuple(map(int.bit_count, self._hands))  # no generator frame: every request

    def hand_of(self, seat: int) -> tuple[Card, ...]:
        """Omniscient: the cards a seat holds. Referees and tests only; bots use observation."""
        return self._cards_of_mask(self._hands[seat])

    def dead_hand(self) -> tuple[Card, ...]:
        """Omniscient: the dead hand."""
        return self._cards_of_mask(self._dead)

    def prepare_next_deal(self) -> None:
        """Shuffle the next hand's pack now, so that the hand's start only deals it.

        The pack's order depends on nothing but the seed and the hand's number
        (``engine.deal``): whoever deals, whoever is still in, the next hand
        gets exactly the cards it would have got.  A referee calls this while a
        bot thinks, which takes the shuffle off the path from the reply that
        ends a hand to the next request.  Nothing observable changes; calling
        it again, or for a scripted deal, does nothing.
        """
        number = self._hand_number + 1
        if self._next_order[0] != number and number > len(self._deals) and not self.is_over:
            self._next_order = (number, shuffled(self._seed, number, _CODES))

    @property
    def _played(self) -> int:
        """The mask of the cards played this hand: those in no hand and not in the dead hand.

        Worked out when asked rather than kept up by every lead (two big-int
        operations a lead, for a mask that only searches and tests read).
        """
        if self._phase == _PHASE_STAKE or self.is_over:  # between hands no card is out
            return 0
        return _ALL_CARDS ^ self._dead ^ sum(self._hands)  # the masks are disjoint

    def played_cards(self) -> tuple[Card, ...]:
        """Cards played so far in this hand, sorted."""
        played = self._played
        return tuple(sorted(self._to_card[code] for code in range(52) if played >> code & 1))

    def outcome(self) -> Outcome:
        if self._phase != _PHASE_OVER:
            raise NewmarketError("outcome: the match is not over")
        return Outcome(
            places=self._places,
            chips=tuple(self._chips),
            starting_chips=self._start,
            hands_played=self._hands_played,
            reason=self._end_reason,
            eliminated=tuple((seat, hand) for hand, seat, _chips in self._elimination),
        )

    # ------------------------------------------------------------------ actions

    def apply(self, action: Action) -> None:
        """Apply the decision of the seat to act. Bad actions raise and change nothing.

        A lead is played here, with its forced follows, rather than in a method
        of its own: random playouts make millions of leads, and a lead is the one
        decision of most hands, so it costs one Python frame, not two.  Only a
        lead puts ``Card``s in ``_legal``, so a legal card is a lead and needs no
        other check of the phase.

        A run is logged as one event (first card, last card, whether a lead)
        rather than one per card, made once for every run there can be:
        ``raw_events`` adds the hand's owner table, which says who played each
        card, and ``engine.events`` expands it later.  An owner table never
        changes its played cards' entries (a new hand gets a new list).

        Each card of a run asks the play table who holds the card after it
        (``_after``: the next code, or a code past the pack after a suit's top
        or a boodle card); the answer is a seat, who follows, or the run stops
        or may pay, which is rare.
        """
        if type(action) is not Card or action not in self._legal:
            self._apply_other(action)
            return
        code = self._to_pos[action]
        hands = self._hands
        in_hand = self._in_hand
        after = self._after
        seat = self._to_act
        log = self._hand_log
        bit = _BIT
        lead = first = code
        while True:
            hand = hands[seat] ^ bit[code]
            hands[seat] = hand
            in_hand[code] = 10  # _PLAYED (a constant: no global lookup per card)
            if not hand:
                break
            holder = in_hand[after[code]]
            if holder < 8:  # a seat (DEAD is 8)
                seat = holder
                code += 1
                continue
            if holder == _BOODLE:
                index = self._boodle_at[code]
                won = self._stacks[index]
                if won:
                    # "takes all the chips on that card" at once (every source)
                    log.append((_LEAD_RUNS if first == lead else _FOLLOW_RUNS)[first][code])
                    first = code + 1
                    self._stacks[index] = 0
                    self._chips[seat] += won
                    log.append((E_BOODLE, seat, index, won))
                holder = _TOP if code % 13 == 12 else in_hand[code + 1]
                if holder < DEAD:
                    seat = holder
                    code += 1
                    continue
            break
        if not hand:  # the seat played its last card
            index = self._boodle_at[code]
            if index >= 0 and self._stacks[index]:
                log.append((_LEAD_RUNS if first == lead else _FOLLOW_RUNS)[first][code])
                first = code + 1
                won = self._stacks[index]
                self._stacks[index] = 0
                self._chips[seat] += won
                log.append((E_BOODLE, seat, index, won))
            if first <= code:
                log.append((_LEAD_RUNS if first == lead else _FOLLOW_RUNS)[first][code])
            self._settle_out(seat)
            return
        if first == lead:
            log.append(_LEAD_RUNS[lead][code])
        elif first <= code:  # the run went on after a boodle card paid
            log.append(_FOLLOW_RUNS[first][code])
        log.append(_STOPS_BY[holder][code])  # the value that stopped the run says why
        # The last player to play leads again (seeds 000/002/003/004).
        if not self._lead_any:
            self._prepare_lead_for(seat, _SUIT_OF[code], pass_lead=True)
            return
        # _prepare_lead_for inlined for the common rule (any suit may be led): a copy
        # of _leads, as a call here costs a frame a lead.  tests/engine/test_simulation.py
        # checks the legal leads after every stop against its own model, so a copy that
        # drifts from _leads fails there.  ``hand`` is the leader's: it played the last card.
        low = hand & 0x3FFFFFF  # two suits in a one-digit int: cheaper to split
        high = hand >> 26
        legal = []
        if suit := low & 0x1FFF:
            legal.append(self._clubs[suit])
        if suit := low >> 13:
            legal.append(self._diamonds[suit])
        if suit := high & 0x1FFF:
            legal.append(self._hearts[suit])
        if suit := high >> 13:
            legal.append(self._spades[suit])
        self._legal = legal
        self._to_act = seat

    def _apply_other(self, action: object) -> None:
        """A decision that is not a legal lead (a stake, the dead hand, a bid), or an error."""
        phase = self._phase
        if phase == _PHASE_LEAD:
            if type(action) is not Card:
                raise MalformedActionError(f"a lead must be a Card, got {action!r}")
            raise IllegalActionError(self._illegal_lead_reason(action))
        if phase == _PHASE_STAKE:
            self._apply_stake(action)
        elif phase == _PHASE_DEAD_HAND:
            self._apply_dead_hand_choice(action)
        elif phase == _PHASE_BID:
            self._apply_bid(action)
        else:
            raise MatchOverError("the match is over")

    def clone(self) -> Match:
        """An independent copy; finished hands' event lists are shared (never mutated)."""
        other = Match.__new__(Match)
        other._rules = self._rules
        other._players = self._players
        other._seed = self._seed
        other._seats = self._seats
        other._to_pos = self._to_pos
        other._to_card = self._to_card
        other._boodle_at = self._boodle_at
        other._after = self._after
        other._lows = self._lows
        other._clubs = self._clubs
        other._diamonds = self._diamonds
        other._hearts = self._hearts
        other._spades = self._spades
        other._lead_any = self._lead_any
        other._deals = self._deals
        other._due = self._due
        other._most_due = self._most_due
        other._start = self._start
        other._chips = self._chips[:]
        other._live = self._live[:]
        other._seatings = self._seatings  # the same live seats; _eliminate takes another
        other._table = self._table
        other._stacks = self._stacks[:]
        other._kitty = self._kitty
        other._dealer = self._dealer
        other._hand_number = self._hand_number
        other._hands_played = self._hands_played
        other._next_order = self._next_order  # never changed in place
        other._phase = self._phase
        other.is_over = self.is_over
        other._to_act = self._to_act
        other._owner = self._owner  # never changed in place once made (see apply)
        other._in_hand = self._in_hand[:]
        other._hands = self._hands[:]
        other._dead = self._dead
        other._known_dead = self._known_dead
        other._no_known_dead = self._no_known_dead
        other._plan = self._plan
        other._legal = self._legal[:]
        other._stake_order = self._stake_order
        other._stakes = self._stakes[:]
        other._bid_order = self._bid_order
        other._bids = self._bids[:]
        other._elimination = self._elimination[:]
        other._places = self._places
        other._end_reason = self._end_reason
        log = self._log[:]
        if log:
            log[-1] = log[-1][:]
        other._log = log
        other._owners = self._owners[:]
        other._hand_log = log[-1] if log else []
        other._log_base = self._log_base
        return other

    def __copy__(self) -> Match:
        return self.clone()

    def redeal_hidden(self, seat: int, rng: random.Random) -> Match:
        """A clone in which every card ``seat`` cannot see is dealt again at random.

        Other hands and the dead hand keep their sizes; cards the seat knows to
        be dead stay dead: its own discards, and every card a stop showed to be
        in the dead hand.  The seat's observation of the clone is the same as of
        this state; this is the determinization step of Monte Carlo search.
        (Finer inferences, such as "a lead is the leader's lowest card of that
        suit", are left to the bot.)  The clone's event history keeps the
        original deal.
        """
        other = self.clone()
        other._owner = other._owner[:]
        fixed_dead = other._known_dead[seat] | self._dead_shown_by_stops()
        counts = [h.bit_count() for h in other._hands]
        holders = [s for s in range(self._players) if s != seat and counts[s]]
        pool = [c for s in holders for c in range(52) if other._hands[s] >> c & 1]
        pool += [c for c in range(52) if (other._dead & ~fixed_dead) >> c & 1]
        rng.shuffle(pool)
        at = 0
        for s in holders:
            mask = 0
            for code in pool[at : at + counts[s]]:
                mask |= 1 << code
                other._owner[code] = s
            other._hands[s] = mask
            at += counts[s]
        dead = other._dead & fixed_dead
        for code in pool[at:]:
            dead |= 1 << code
            other._owner[code] = DEAD
        other._dead = dead
        other._in_hand = _play_table(other._owner, other._played)
        if other._phase == _PHASE_LEAD:
            other._prepare_lead_for(other._to_act, self._stopped_suit(), pass_lead=False)
        return other

    def _stopped_suit(self) -> int:
        """The suit of this hand's last stop, which the change rules steer away from; -1 if none.

        Read from the hand's events, not kept up by every lead.
        """
        for raw in reversed(self._hand_log):
            if raw[0] == E_STOP:
                code: int = raw[1]
                return _SUIT_OF[code]
        return -1

    def _dead_shown_by_stops(self) -> int:
        """Cards of this hand that a stop proved to be in the dead hand (public knowledge)."""
        mask = 0
        for raw in self._log[-1] if self._log else ():
            if raw[0] == E_STOP and raw[2] == STOP_DEAD:
                mask |= 1 << raw[3]
        return mask

    # ------------------------------------------------------------------ events

    def event_count(self) -> int:
        """Raw events so far: a cursor for ``events(since=...)`` (a run is one raw event)."""
        return self._log_base + len(self._hand_log)

    def raw_events(self, since: int = 0) -> list[tuple[Any, ...]]:
        """Omniscient raw event tuples from index ``since`` on (see engine.events)."""
        start = self._log_base
        if since >= start:  # within the hand being played: a referee asks at every decision
            return _with_owner(self._hand_log[since - start :], self._owner)
        log = self._log
        owners = self._owners
        index = len(log) - 1
        while index > 0 and start > since:
            index -= 1
            start -= len(log[index])
        out: list[tuple[Any, ...]] = []
        for number in range(index, len(log)):
            segment = log[number]
            owner = owners[number] if number < len(owners) else self._owner
            out += _with_owner(segment[max(0, since - start) :], owner)
            start += len(segment)
        return out

    def events(self, viewer: int | None = None, since: int = 0) -> list[Event]:
        """Typed events from index ``since`` on, as ``viewer`` sees them (None: everything)."""
        return typed_events(self.raw_events(since), viewer, self._to_card, self._rules.boodle_cards)

    def event_views(self, since: int = 0, memo: RecurringMemo | None = None) -> list[EventViews]:
        """Typed events from index ``since`` on, as the referee and as every seat sees them.

        The same as ``events(viewer=None)`` and ``events(viewer=seat)`` for each
        seat, typed once (see ``engine.events.EventViews``): for a referee, which
        tells every seat and keeps a log.  ``memo``: an empty dict the caller
        keeps for this match, and passes every time, so that each recurring event
        is typed once (``engine.events.typed_views``).
        """
        return typed_views(
            self.raw_events(since), self._players, self._to_card, self._rules.boodle_cards, memo
        )

    def observation(self, seat: int) -> Observation:
        """What ``seat`` knows now: the only door, with ``events``, for hidden cards.

        Kept to what the seat has seen: its own cards, the cards played this hand and by whom,
        and the cards it itself put in the dead hand (see ``engine.observation``).
        """
        if not 0 <= seat < self._players:
            raise ValueError(f"seat {seat} is not at this table")
        played: list[tuple[int, Card]] = []
        last_card: Card | None = None
        for raw in self.raw_events(self._log_base):  # the hand being played
            for event in typed(raw, seat, self._to_card, self._rules.boodle_cards):
                if isinstance(event, CardPlayed):
                    played.append((event.seat, event.card))
                    last_card = event.card
        to_act = self.current_seat()
        legal = tuple(self.legal_actions()) if to_act == seat else ()
        last_suit = self._stopped_suit()
        return Observation(
            seat=seat,
            players=self._players,
            hand_number=self._hand_number,
            dealer=self._dealer,
            to_act=to_act,
            decision=self.decision,
            legal_actions=legal,
            chips=tuple(self._chips),
            live=tuple(self._live),
            boodle=tuple(zip(self._rules.boodle_cards, self._stacks, strict=True)),
            kitty=self._kitty,
            hand=self._cards_of_mask(self._hands[seat]),
            hand_sizes=self.hand_sizes(),
            dead_hand_size=int(self._dead).bit_count(),
            played=tuple(played),
            last_card=last_card,
            stopped_suit=Suit(last_suit) if last_suit >= 0 and not self.is_over else None,
            known_dead=self._cards_of_mask(self._known_dead[seat]),
        )

    # ------------------------------------------------------------------ the hand

    def _record(self, event: tuple[Any, ...]) -> None:
        self._hand_log.append(event)

    def _next_live(self, seat: int) -> int:
        live = self._live
        n = self._players
        for step in range(1, n + 1):
            s = (seat + step) % n
            if live[s]:
                return s
        raise NewmarketError("no live seat")

    def _live_seats_from(self, start: int) -> tuple[int, ...]:
        """Live seats clockwise, beginning with ``start`` if live."""
        return _clockwise(tuple(self._live), start % self._players)

    def _seating(self, seat: int) -> _Seating:
        """``seat``'s seating for the live seats now, kept until a seat goes out.

        The hot path reads ``self._seatings.get(seat) or self._seating(seat)``:
        a dict lookup, and this call only the first time.
        """
        seating = _Seating(tuple(self._live), seat, self._table)
        self._seatings[seat] = seating
        return seating

    def _begin_hand(self) -> None:
        """The next hand: eliminations, stakes and, with fixed antes, the deal.

        The last hand's cards stay where they lay until the deal replaces them;
        if no deal follows now (the match ends, or the stakes are a decision),
        ``_clear_table`` gathers them.
        """
        log: list[tuple[Any, ...]] = []
        self._log_base += len(self._hand_log)
        self._log.append(log)
        self._hand_log = log
        if self._hands_played >= self._plan.hand_limit:
            self._end_match(END_HAND_LIMIT)
            return
        seatings = self._seatings
        dealer = self._dealer
        dealer = self._dealer = (seatings.get(dealer) or self._seating(dealer)).order[0]
        seating = seatings.get(dealer) or self._seating(dealer)
        chips = self._chips
        # Nobody can be out while every live seat holds the larger stake (most hands).
        if min(map(chips.__getitem__, seating.order)) < self._most_due:
            if self._eliminations():
                return
            dealer = self._dealer
            seating = self._seatings.get(dealer) or self._seating(dealer)
        self._hand_number += 1
        log.append((E_HAND_START, self._hand_number, dealer))
        if self._plan.free_ante:
            self._clear_table()
            self._phase = _PHASE_STAKE
            self._stake_order = seating.order
            self._stakes = []
            self._to_act = seating.order[0]
            self._legal = self._stake_choices()
            return
        # Fixed antes, _pay_stake for every seat at once: each seat pays its due
        # (the ante plus any kitty ante) and each boodle card gets every seat's ante.
        dues = seating.dues
        for seat in seating.order:
            chips[seat] -= dues[seat]
        log += seating.stakes
        if seating.kitty:
            self._kitty += seating.kitty
        stacks = self._stacks
        stacks[:] = map(add, stacks, seating.pot)
        self._deal(seating)

    def _clear_table(self) -> None:
        """Between hands the cards are shown and gathered: nobody holds any."""
        self._legal = []
        self._hands = [0] * self._players
        self._dead = 0
        self._owner = _NO_OWNER
        self._in_hand = _NO_HOLDER
        self._known_dead = self._no_known_dead

    def _stake_choices(self) -> list[Stakes]:
        return list(stake_placements(self._rules.stake_total, len(self._stacks)))

    def _bid_choices(self) -> list[Bid]:
        return [Bid(chips) for chips in range(self._chips[self._to_act] + 1)]

    def _eliminations(self) -> bool:
        """Eliminate the seats that cannot pay the coming hand's stake; True if the match ended.

        A player who cannot pay the stake required of them for the coming hand
        is out before the deal (seed 000).  If the dealer is out, the deal
        passes on and the new dealer's larger stake is checked in turn.
        """
        due, dealer_due = self._due
        chips = self._chips
        live = self._live
        while True:
            dealer = self._dealer
            out = [
                s
                for s in range(self._players)
                if live[s] and chips[s] < (dealer_due if s == dealer else due)
            ]
            if not out:
                return False
            self._eliminate(out)
            if sum(self._live) <= self._rules.end_players:
                self._end_match(END_PLAYERS_LEFT)
                return True
            if not self._live[dealer]:
                self._dealer = self._next_live(dealer)

    def _seat_live(self, live: list[bool]) -> None:
        """Make ``live`` the live seats, and ``_seatings`` the seatings for them.

        The two change together, always here: a seating lists live seats, and one
        kept from other live seats charges or deals to a seat that is out.
        """
        self._live = live
        self._seatings = _seatings_at(tuple(live), self._table)

    def _eliminate(self, seats: list[int]) -> None:
        live = self._live  # the same list: _eliminations reads it between calls
        for seat in seats:
            live[seat] = False
        self._seat_live(live)
        survivors_exist = any(self._live)
        for seat in seats:
            chips = self._chips[seat]
            self._elimination.append((self._hand_number + 1, seat, chips))
            shares: list[tuple[int, int]] = []
            if survivors_exist:
                # seed 000: "his remaining chips are divided among the remaining players"
                recipients = self._live_seats_from(seat + 1)
                shares = [(s, c) for s, c in divide(chips, recipients) if c]
                for s, c in shares:
                    self._chips[s] += c
                self._chips[seat] = 0
            self._record((E_ELIMINATED, seat, chips, tuple(shares)))

    def _pay_stake(self, seat: int, amounts: tuple[int, ...]) -> None:
        stacks = self._stacks
        for index, amount in enumerate(amounts):
            stacks[index] += amount
        kitty = self._rules.kitty_ante
        self._kitty += kitty
        self._chips[seat] -= sum(amounts) + kitty
        self._hand_log.append((E_STAKE, seat, amounts, kitty))

    def _apply_stake(self, action: object) -> None:
        cards = len(self._stacks)
        if (
            not isinstance(action, Stakes)
            or not isinstance(action.amounts, tuple)
            or len(action.amounts) != cards
            or not all(type(a) is int and a >= 0 for a in action.amounts)
        ):
            raise MalformedActionError(
                f"a stake must be Stakes with {cards} whole numbers >= 0, got {action!r}"
            )
        total = self._rules.stake_total
        if sum(action.amounts) != total:
            raise IllegalActionError(
                f"stakes must total exactly {total} chips, got {sum(action.amounts)}"
            )
        self._stakes.append(action.amounts)
        if len(self._stakes) < len(self._stake_order):
            self._to_act = self._stake_order[len(self._stakes)]
            return
        # Stakes are sealed until everyone has placed, then revealed together.
        for seat, amounts in zip(self._stake_order, self._stakes, strict=True):
            self._pay_stake(seat, amounts)
        self._deal(self._seatings.get(self._dealer) or self._seating(self._dealer))

    def _deal(self, seating: _Seating) -> None:
        """Deal the hand (``seating``, the dealer's, says who is dealt to and who leads)."""
        number = self._hand_number
        if self._deals and number <= len(self._deals):
            n = self._players
            to_pos = self._to_pos
            owner = [DEAD] * 52
            hands = [0] * n
            deal = self._deals[number - 1]
            deal.check(n, self._live)
            for seat, cards in enumerate(deal.hands):
                for card in cards:
                    code = to_pos[card]
                    owner[code] = seat
                    hands[seat] |= 1 << code
            dead = _ALL_CARDS
            for mask in hands:
                dead ^= mask
        else:
            ahead, order = self._next_order
            if ahead == number:  # shuffled ahead (prepare_next_deal)
                owner = list(map(seating.holders.__getitem__, order))
            else:
                owner = shuffled(self._seed, number, seating.holders)
            # holder_masks over the live seats only: an eliminated seat holds nothing.
            text = bytes(owner)[::-1]
            live = self._live
            hands = [int(text.translate(ONE_SEAT[s]), 2) if live[s] else 0 for s in self._seats]
            dead = _ALL_CARDS ^ sum(hands)  # the masks are disjoint: their sum is their union
        self._owner = owner
        self._in_hand = owner + _PLAY_TAIL
        self._hands = hands
        self._dead = dead
        self._known_dead = self._no_known_dead
        self._hand_log.append((E_DEAL, tuple(hands), dead))
        if not self._plan.exchange:
            # _start_play and _prepare_lead_for, two calls fewer: the seat after the
            # dealer leads first, and a hand's first lead may be in any suit.
            self._phase = _PHASE_LEAD
            leader = seating.order[0]
            self._legal = _leads(hands[leader], self._lows)
            self._to_act = leader
            return
        self._phase = _PHASE_DEAD_HAND
        self._to_act = self._dealer
        self._legal = self._dead_hand_choices()

    # -- the dead hand -------------------------------------------------------------

    def _dead_hand_choices(self) -> list[DeadHandChoice]:
        mode = self._rules.dead_hand_exchange
        choices = [DeadHandChoice.KEEP]
        if mode in (DeadHandExchange.EXCHANGE, DeadHandExchange.EXCHANGE_OR_AUCTION):
            choices.append(DeadHandChoice.EXCHANGE)
        if mode is DeadHandExchange.EXCHANGE_OR_AUCTION and any(
            self._chips[s] > 0 for s in range(self._players) if self._live[s] and s != self._dealer
        ):
            choices.append(DeadHandChoice.AUCTION)
        if (
            mode is DeadHandExchange.PURCHASE
            and self._chips[self._dealer] >= self._rules.purchase_fee
        ):
            choices.append(DeadHandChoice.BUY)
        return sorted(choices)

    def _apply_dead_hand_choice(self, action: object) -> None:
        if not isinstance(action, DeadHandChoice):
            raise MalformedActionError(
                f"the dealer's choice must be a DeadHandChoice, got {action!r}"
            )
        if action not in self._legal:
            allowed = ", ".join(c.value for c in self._legal)
            raise IllegalActionError(f"{action.value} is not allowed here (allowed: {allowed})")
        dealer = self._dealer
        self._record((E_DEAD_HAND, dealer, action.value))
        if action is DeadHandChoice.EXCHANGE:
            self._swap_with_dead(dealer, 0, -1)
        elif action is DeadHandChoice.BUY:
            fee = self._rules.purchase_fee
            self._chips[dealer] -= fee
            self._kitty += fee  # seed 004 names no payee; the kitty keeps chips conserved
            self._swap_with_dead(dealer, fee, -1)
        elif action is DeadHandChoice.AUCTION:
            seating = self._seatings.get(dealer) or self._seating(dealer)
            self._bid_order = seating.others  # the live seats from the dealer's left
            self._bids = []
            self._phase = _PHASE_BID
            self._to_act = self._bid_order[0]
            self._legal = self._bid_choices()
            return
        self._start_play()

    def _apply_bid(self, action: object) -> None:
        if not isinstance(action, Bid) or type(action.chips) is not int or action.chips < 0:
            raise MalformedActionError(f"a bid must be Bid with whole chips >= 0, got {action!r}")
        if action.chips > self._chips[self._to_act]:
            raise IllegalActionError(
                f"a bid of {action.chips} is more than the {self._chips[self._to_act]} chips held"
            )
        self._bids.append(action.chips)
        if len(self._bids) < len(self._bid_order):
            self._to_act = self._bid_order[len(self._bids)]
            self._legal = self._bid_choices()
            return
        bids = tuple(zip(self._bid_order, self._bids, strict=True))
        self._record((E_BIDS, bids))
        best = max(self._bids)
        if best > 0:
            # Highest bid wins; equal bids go to the first bidder clockwise from the dealer.
            buyer = self._bid_order[self._bids.index(best)]
            self._chips[buyer] -= best
            self._chips[self._dealer] += best
            self._swap_with_dead(buyer, best, self._dealer)
        self._start_play()

    def _swap_with_dead(self, seat: int, price: int, paid_to: int) -> None:
        """The seat takes the dead hand unseen; its own hand becomes the dead hand."""
        old = self._hands[seat]
        new = self._dead
        owner = self._owner[:]  # a new table: clones may share the old one
        for code in range(52):
            bit = 1 << code
            if old & bit:
                owner[code] = DEAD
            elif new & bit:
                owner[code] = seat
        self._owner = owner
        self._in_hand = owner + _PLAY_TAIL  # before the first lead: nothing played
        self._hands[seat] = new
        self._dead = old
        known_dead = self._known_dead[:]  # a new list: clones may share the old one
        known_dead[seat] = old
        self._known_dead = known_dead
        self._record((E_SWAP, seat, price, paid_to, new))

    # -- play ------------------------------------------------------------------------

    def _start_play(self) -> None:
        self._phase = _PHASE_LEAD
        self._prepare_lead_for(self._next_live(self._dealer), -1, pass_lead=True)

    def _prepare_lead_for(self, seat: int, last: int, pass_lead: bool) -> None:
        """Make ``seat`` the leader (or pass the lead on) and list its legal leads.

        ``last`` is the suit of the run that stopped last (-1 at the hand's first
        lead), which the change rules steer away from.  A lead is the lowest card
        held in a suit (every source).  Legal leads come out sorted because a
        suit's codes and its cards both sit in one block of 13.
        """
        legal = _leads(self._hands[seat], self._lows)
        if last >= 0 and not self._lead_any:
            other = [card for card in legal if card // 13 != last]
            if other:
                legal = other
            elif self._rules.lead_suit is LeadSuit.CHANGE_OR_PASS and pass_lead:
                # seeds 002/003: with no other suit the lead passes to the left; if
                # nobody holds another suit the hand is blocked (seed 000).
                same_suit_only = _SUIT_MASK << (13 * last)
                for step in range(1, self._players):
                    nxt = (seat + step) % self._players
                    if self._live[nxt] and self._hands[nxt] & ~same_suit_only:
                        self._record((E_PASS, seat, nxt))
                        self._prepare_lead_for(nxt, last, pass_lead=False)
                        return
                self._settle_blocked()
                return
        self._legal = legal
        self._to_act = seat

    # -- settlement ------------------------------------------------------------------

    def _settle_out(self, winner: int) -> None:
        """The seat went out: the others pay it, the hand ends and the next one begins."""
        log = self._hand_log
        log.append(_OUTS[winner])
        chips = self._chips
        hands = self._hands
        others = (self._seatings.get(winner) or self._seating(winner)).others
        won = 0
        if self._plan.per_card:
            # A card a chip (most rule sets): owed_to_winner's pairs read where they are;
            # the zip, maps and list cost about 5 K instructions a hand here.
            for seat in others:
                owed = hands[seat].bit_count()
                held = chips[seat]
                paid = owed if owed <= held else held  # what they have; never below 0
                chips[seat] = held - paid
                won += paid
                log.append((E_PAY, seat, winner, paid, owed))
        else:
            held_cards = zip(others, map(_bit_count, map(hands.__getitem__, others)), strict=True)
            for seat, owed in owed_to_winner(held_cards, self._rules.payment):
                held = chips[seat]
                paid = owed if owed <= held else held  # what they have; never below 0
                chips[seat] = held - paid
                won += paid
                log.append((E_PAY, seat, winner, paid, owed))
        chips[winner] += won
        if self._kitty:
            chips[winner] += self._kitty
            log.append((E_KITTY, winner, self._kitty))
            self._kitty = 0
        # _end_hand, one frame fewer a hand
        log.append((E_HAND_END, tuple(hands), self._dead, _ALONE[winner]))
        self._owners.append(self._owner)
        self._hands_played += 1
        self._begin_hand()

    def _settle_blocked(self) -> None:
        self._record((E_BLOCKED,))
        held = [(s, self._hands[s].bit_count()) for s in self._live_seats_from(self._dealer + 1)]
        winners, owed = blocked_hand_owed(held, self._rules.blocked_hand)
        single = winners[0] if len(winners) == 1 else -1
        pot = 0
        for seat, amount in owed:
            paid = min(amount, self._chips[seat])
            self._chips[seat] -= paid
            pot += paid
            self._record((E_PAY, seat, single, paid, amount))
        if single >= 0:
            self._chips[single] += pot
        elif winners:
            # seed 002: "if two players are left with an equal number of fewest
            # cards they divide the winnings"; remainder clockwise from the dealer's left.
            for seat, share in divide(pot, list(winners)):
                self._chips[seat] += share
                self._record((E_SHARE, seat, share))
        self._end_hand(winners)

    def _end_hand(self, winners: tuple[int, ...]) -> None:
        self._hand_log.append((E_HAND_END, tuple(self._hands), self._dead, winners))
        self._owners.append(self._owner)
        self._hands_played += 1
        self._begin_hand()

    def _end_match(self, reason: str) -> None:
        self._clear_table()
        self._phase = _PHASE_OVER
        self.is_over = True
        self._to_act = -1
        self._legal = []
        self._end_reason = reason
        self._places = self._compute_places()
        self._record((E_MATCH_END, self._places, tuple(self._chips), reason))

    def _compute_places(self) -> tuple[int, ...]:
        """Survivors by chips, then the eliminated, later elimination first.

        Eliminated at the same time: more chips at elimination is better.
        Equal keys share a place (two seats both 2nd, none 3rd).
        """
        key: dict[int, tuple[int, int, int]] = {}
        for seat in range(self._players):
            if self._live[seat]:
                key[seat] = (1, 1 << 30, self._chips[seat])
        for hand, seat, chips in self._elimination:
            key[seat] = (0, hand, chips)
        places = []
        for seat in range(self._players):
            better = sum(1 for other in range(self._players) if key[other] > key[seat])
            places.append(better + 1)
        return tuple(places)

    # -- helpers ---------------------------------------------------------------------

    def _cards_of_mask(self, mask: int) -> tuple[Card, ...]:
        return cards_of_mask(mask, self._to_card)

    def _illegal_lead_reason(self, card: Card) -> str:
        seat = self._to_act
        code = self._to_pos[card]
        allowed = " ".join(str(c) for c in self._legal)
        if not self._hands[seat] >> code & 1:
            return f"seat {seat} does not hold {card} (legal leads: {allowed})"
        return (
            f"{card} may not be led: a lead is the lowest card held in a suit that may be "
            f"led now (legal leads: {allowed})"
        )
