"""A position: a whole engine ``Match`` rebuilt from what one seat knows, for search.

Why this module exists.  ``Match(rules, players, seed)`` can only start a match
at its first hand.  A search bot in the middle of hand 7 knows the chips, the
boodle stacks, the dealer, its own cards and every card played so far, and it
*guesses* the rest (the other hands and the dead hand: a determinization).  To
run the real engine forward from there it needs a ``Match`` in exactly that
state.  ``build_match(position)`` makes one.

Why it is shaped this way:

* ``Position`` is plain, public data (``Card``s, seat numbers, chips) and holds
  every card: a bot fills in the hidden hands with a sample, a test with the
  true cards (``from_observation``), and ``position_of`` reads a live match
  (the omniscient snapshot, for tests and referee tools).  Everything the
  engine keeps that a seat can work out from the cards played (who led, which
  runs stopped and why, the suit the change rules steer away from) is derived
  here from ``played``, so a caller cannot hand in a contradiction.
* This is the one module outside ``engine/state.py`` that *writes* a
  ``Match``'s private fields (``engine.observation`` only reads them).  It
  starts from a clone of a real match of the same rules and table, so a field
  the state machine gains later keeps a sensible value, and then sets every
  field that describes the current hand.  ``tests/search/test_position.py``
  holds it to the state machine: a position read from a live match and built
  again continues card for card and chip for chip like the original.
* Sealed choices the seat cannot see (stakes and bids placed before its own
  in this round) are part of the position; a bot guesses them, a test copies
  them from ``position_of``.
* The current hand's event log is rebuilt in short form (one run event per
  card played, and each stop), which is all that ``observation()`` and
  ``redeal_hidden()`` read.  It says the cards were dealt as they lie now:
  whether someone swapped hands with the dead hand is not kept.
* ``build_match(..., hand_limit=h)`` ends the rebuilt match after hand ``h``:
  a search that scores one hand does not pay for dealing the next.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Any

from engine.actions import Decision, Stakes
from engine.cards import CARDS, Card, Suit
from engine.errors import NewmarketError
from engine.events import (
    E_DEAL,
    E_HAND_START,
    E_RUN,
    E_STOP,
    STOP_DEAD,
    STOP_PLAYED,
    STOP_TOP,
)
from engine.observation import Observation
from engine.rules import Rules
from engine.state import (
    _PHASE_BID,
    _PHASE_DEAD_HAND,
    _PHASE_LEAD,
    _PHASE_STAKE,
    DEAD,
    Match,
    _play_table,
)

__all__ = ["Position", "PositionError", "build_match", "from_observation", "position_of"]

_PHASE_OF_DECISION = {
    Decision.STAKE: _PHASE_STAKE,
    Decision.DEAD_HAND: _PHASE_DEAD_HAND,
    Decision.BID: _PHASE_BID,
    Decision.LEAD: _PHASE_LEAD,
}


class PositionError(NewmarketError):
    """The position contradicts itself or the rules; the message says where."""


@dataclasses.dataclass(frozen=True, slots=True)
class Position:
    """Everything the engine needs to go on from a decision in the middle of a match.

    Per-seat tuples have one entry per seat, eliminated seats included.
    ``hands`` and ``dead_hand`` hold the cards not yet played (all empty in
    the stake phase, before the deal).  ``played`` is this hand's cards in the
    order they were played, each with the seat that played it; who led and
    why each run stopped follow from it.
    """

    rules: Rules
    players: int
    chips: tuple[int, ...]
    live: tuple[bool, ...]
    dealer: int
    hand_number: int  # 1 for the first hand
    boodle: tuple[int, ...]  # chips on each boodle card, in the order of rules.boodle_cards
    kitty: int
    hands: tuple[tuple[Card, ...], ...]
    dead_hand: tuple[Card, ...]
    played: tuple[tuple[int, Card], ...]
    to_act: int
    decision: Decision
    known_dead: tuple[tuple[Card, ...], ...] = ()
    """Per seat, the cards it put in the dead hand by a swap (empty: none)."""
    stakes: tuple[Stakes, ...] = ()
    """Stake phase: the sealed stakes already placed this hand, clockwise from the dealer's left."""
    bids: tuple[int, ...] = ()
    """Bid phase: the sealed bids already made, clockwise from the dealer's left."""
    eliminated: tuple[tuple[int, int, int], ...] = ()
    """(seat, hand before which it went out, its chips then), in order: for final places."""
    hands_played: int | None = None
    """Hands finished so far; None means ``hand_number - 1`` (every earlier hand was played)."""
    seed: int = 0
    """Deals every later hand (and this one, in the stake phase)."""
    starting_chips: tuple[int, ...] | None = None
    """Each seat's chips at the start of the match, for net chips in the outcome (None: the
    rules' ``starting_chips`` for every seat)."""

    @property
    def stopped_suit(self) -> Suit | None:
        """The suit of the last run: a lead decision always follows a stop (or opens the hand)."""
        if self.decision is not Decision.LEAD or not self.played:
            return None
        return self.played[-1][1].suit


def build_match(position: Position, *, check: bool = True, hand_limit: int | None = None) -> Match:
    """A ``Match`` in the position's state, to ``apply`` decisions to from here.

    ``check`` verifies that the position is whole (every card in one place,
    hand sizes, the seat to act, runs that really are runs); a search that
    builds thousands of positions from one checked pattern may turn it off.
    ``hand_limit`` replaces the rule option of that name in the built match.
    """
    if check:
        _check(position)
    rules = position.rules if hand_limit is None else _with_hand_limit(position.rules, hand_limit)
    match = _template(rules, position.players).clone()
    n = position.players
    to_pos = match._to_pos
    match._seed = position.seed
    match._deals = ()
    match._chips = list(position.chips)
    if position.starting_chips is not None:
        match._start = tuple(position.starting_chips)
    match._seat_live(list(position.live))  # and their seatings, not the template's
    match._stacks = list(position.boodle)
    match._kitty = position.kitty
    match._dealer = position.dealer
    match._hand_number = position.hand_number
    match._hands_played = (
        position.hand_number - 1 if position.hands_played is None else position.hands_played
    )
    # Final places need every seat out of the match in the elimination record; a seat
    # the position leaves out counts as out before the first hand, with no chips.
    eliminated = [(hand, seat, chips) for seat, hand, chips in position.eliminated]
    recorded = {seat for _hand, seat, _chips in eliminated}
    missing = [(0, seat, 0) for seat in range(n) if not position.live[seat]]
    match._elimination = [entry for entry in missing if entry[1] not in recorded] + eliminated
    match._places = ()
    match._end_reason = ""
    seating = match._seating(position.dealer)  # the order of stakes and bids
    match._stake_order = seating.order
    match._stakes = [stake.amounts for stake in position.stakes]
    match._bid_order = seating.others
    match._bids = list(position.bids)

    owner = [DEAD] * 52
    hands = [0] * n
    for seat, cards in enumerate(position.hands):
        mask = 0
        for card in cards:
            code = to_pos[card]
            mask |= 1 << code
            owner[code] = seat
        hands[seat] = mask
    dead = 0
    for card in position.dead_hand:
        dead |= 1 << to_pos[card]
    known_dead = [0] * n
    for seat, cards in enumerate(position.known_dead):
        for card in cards:
            known_dead[seat] |= 1 << to_pos[card]

    # The hand's log, short form: the start, the deal as the cards lie now, each card
    # played as its own run event, and every stop (derived from the order of play).
    dealt = hands[:]
    log: list[tuple[Any, ...]] = [(E_HAND_START, position.hand_number, position.dealer)]
    played = 0
    previous = -1
    runs: list[tuple[Any, ...]] = []
    for seat, card in position.played:
        code = to_pos[card]
        owner[code] = seat
        dealt[seat] |= 1 << code
        is_lead = previous < 0 or not _follows(previous, code)
        if is_lead and previous >= 0:
            runs.append(_stop(previous, played))
        runs.append((E_RUN, code, code, is_lead))  # raw_events adds the owner table
        played |= 1 << code
        previous = code
    if position.decision is Decision.LEAD and previous >= 0:
        runs.append(_stop(previous, played))
    if position.decision is not Decision.STAKE:
        log.append((E_DEAL, tuple(dealt), dead))
    log.extend(runs)
    match._log = [log]
    match._owners = []
    match._hand_log = log
    match._log_base = 0

    match._owner = owner
    match._in_hand = _play_table(owner, played)  # and _played follows from hands and dead
    match._hands = hands
    match._dead = dead
    match._known_dead = known_dead
    match._legal = []
    phase = _PHASE_OF_DECISION[position.decision]
    match._phase = phase
    match._to_act = position.to_act
    if phase == _PHASE_LEAD:
        stopped = position.stopped_suit
        # The seat to act already holds the lead (any pass already happened), so no pass now.
        match._prepare_lead_for(
            position.to_act, -1 if stopped is None else int(stopped), pass_lead=False
        )
    elif phase == _PHASE_DEAD_HAND:
        match._legal = list(match._dead_hand_choices())
    elif phase == _PHASE_STAKE:
        match._legal = match._stake_choices()
    else:
        match._legal = match._bid_choices()
    return match


def position_of(match: Match) -> Position:
    """The omniscient snapshot of a match waiting for a decision (every card, every sealed choice).

    ``build_match(position_of(m))`` continues exactly as ``m`` does.
    """
    if match.is_over:
        raise PositionError("position_of: the match is over")
    decision = match.decision
    to_act = match.current_seat()
    assert decision is not None and to_act is not None
    played: list[tuple[int, Card]] = []
    to_card = match._to_card
    owner = match._owner
    for raw in match._log[-1]:
        if raw[0] == E_RUN:
            played.extend((owner[code], to_card[code]) for code in range(raw[1], raw[2] + 1))
    n = match.players
    return Position(
        rules=match.rules,
        players=n,
        chips=match.chips,
        live=match.live,
        dealer=match.dealer,
        hand_number=match.hand_number,
        boodle=match.boodle_stacks,
        kitty=match.kitty,
        hands=tuple(match.hand_of(seat) for seat in range(n)),
        dead_hand=match.dead_hand(),
        played=tuple(played),
        to_act=to_act,
        decision=decision,
        known_dead=tuple(match._cards_of_mask(match._known_dead[seat]) for seat in range(n)),
        stakes=tuple(Stakes(amounts) for amounts in match._stakes)
        if decision is Decision.STAKE
        else (),
        bids=tuple(match._bids) if decision is Decision.BID else (),
        eliminated=tuple((seat, hand, chips) for hand, seat, chips in match._elimination),
        hands_played=match.hands_played,
        seed=match.seed,
        starting_chips=match.starting_chips,
    )


def from_observation(
    observation: Observation,
    rules: Rules,
    hands: dict[int, tuple[Card, ...]],
    dead_hand: tuple[Card, ...],
    *,
    stakes: tuple[Stakes, ...] = (),
    bids: tuple[int, ...] = (),
    eliminated: tuple[tuple[int, int, int], ...] = (),
    seed: int = 0,
) -> Position:
    """A position from one seat's observation plus the cards it cannot see.

    ``hands`` gives every *other* seat's cards (a sample, or the truth in a
    test); the observing seat's own cards and its known dead cards come from
    the observation.  ``dead_hand`` is the whole dead hand.  The sealed
    ``stakes`` and ``bids`` of this round and the elimination record (for
    final places) are not in an observation; they default to none.
    """
    if observation.to_act is None or observation.decision is None:
        raise PositionError("from_observation: the match is over")
    seat = observation.seat
    all_hands = tuple(
        observation.hand if s == seat else tuple(hands.get(s, ()))
        for s in range(observation.players)
    )
    known = tuple(observation.known_dead if s == seat else () for s in range(observation.players))
    return Position(
        rules=rules,
        players=observation.players,
        chips=observation.chips,
        live=observation.live,
        dealer=observation.dealer,
        hand_number=observation.hand_number,
        boodle=tuple(chips for _card, chips in observation.boodle),
        kitty=observation.kitty,
        hands=all_hands,
        dead_hand=tuple(dead_hand),
        played=observation.played,
        to_act=observation.to_act,
        decision=observation.decision,
        known_dead=known,
        stakes=stakes,
        bids=bids,
        eliminated=eliminated,
        seed=seed,
    )


# ---------------------------------------------------------------------- helpers


@lru_cache(maxsize=32)
def _template(rules: Rules, players: int) -> Match:
    """A real match of these rules and table, cloned for every build (never changed itself)."""
    return Match(rules, players, 0)


@lru_cache(maxsize=32)
def _with_hand_limit(rules: Rules, hand_limit: int) -> Rules:
    return dataclasses.replace(rules, hand_limit=hand_limit)


def _follows(previous: int, code: int) -> bool:
    """True if ``code`` is the next higher card of ``previous``'s suit (position codes)."""
    return code == previous + 1 and previous % 13 != 12


def _stop(last: int, played: int) -> tuple[Any, ...]:
    """The stop after a run ending at ``last``, with ``played`` the cards played before it."""
    if last % 13 == 12:
        return (E_STOP, last, STOP_TOP, -1)
    if played >> (last + 1) & 1:
        return (E_STOP, last, STOP_PLAYED, last + 1)
    return (E_STOP, last, STOP_DEAD, last + 1)


def _check(p: Position) -> None:
    n = p.players
    rules = p.rules
    for name in ("chips", "live", "hands"):
        if len(getattr(p, name)) != n:
            raise PositionError(f"{name}: {len(getattr(p, name))} entries for {n} seats")
    if p.starting_chips is not None and len(p.starting_chips) != n:
        raise PositionError(f"starting_chips: {len(p.starting_chips)} entries for {n} seats")
    if p.known_dead and len(p.known_dead) != n:
        raise PositionError(f"known_dead: {len(p.known_dead)} entries for {n} seats")
    if len(p.boodle) != len(rules.boodle_cards):
        raise PositionError(
            f"boodle: {len(p.boodle)} stacks for {len(rules.boodle_cards)} boodle cards"
        )
    if any(chips < 0 for chips in (*p.chips, *p.boodle, p.kitty)):
        raise PositionError("chips, boodle and kitty must not be negative")
    for seat in (p.dealer, p.to_act):
        if not 0 <= seat < n or not p.live[seat]:
            raise PositionError(f"seat {seat} is not a live seat at this table")
    if p.hand_number < 1:
        raise PositionError(f"hand_number: must be at least 1, got {p.hand_number}")
    # Every card in exactly one place.
    seen: dict[Card, str] = {}
    places = [(f"seat {s}", cards) for s, cards in enumerate(p.hands)]
    places += [("the dead hand", p.dead_hand), ("played", tuple(c for _s, c in p.played))]
    for where, cards in places:
        for card in cards:
            if card in seen:
                raise PositionError(f"{card} is both in {seen[card]} and in {where}")
            seen[card] = where
    for seat, cards in enumerate(p.hands):
        if cards and not p.live[seat]:
            raise PositionError(f"seat {seat} is out of the match but holds cards")
    for seat, cards in enumerate(p.known_dead):
        for card in cards:
            if card not in p.dead_hand and seen.get(card) != "played":
                raise PositionError(f"seat {seat}'s known dead card {card} is not dead")
    if p.decision is Decision.STAKE:
        if seen:
            raise PositionError("stake phase: no cards are dealt before the stakes")
        order = _clockwise(p, p.dealer + 1)
        if len(p.stakes) >= len(order) or order[len(p.stakes)] != p.to_act:
            raise PositionError(
                f"stake phase: after {len(p.stakes)} stakes it is not seat {p.to_act}'s turn"
            )
        return
    if len(seen) != 52:
        missing = [str(c) for c in CARDS if c not in seen]
        raise PositionError(f"cards missing from the position: {' '.join(missing)}")
    for seat in range(n):
        if p.live[seat] and not p.hands[seat]:
            raise PositionError(f"seat {seat} is live but holds no cards (the hand would be over)")
    if p.decision is Decision.DEAD_HAND and (p.to_act != p.dealer or p.played):
        raise PositionError("dead_hand: only the dealer decides, before any card is played")
    if p.decision is Decision.BID:
        order = [s for s in _clockwise(p, p.dealer + 1) if s != p.dealer]
        if p.played or len(p.bids) >= len(order) or order[len(p.bids)] != p.to_act:
            raise PositionError(
                f"bid phase: after {len(p.bids)} bids it is not seat {p.to_act}'s turn"
            )
    to_pos = _template(rules, n)._to_pos
    dead_codes = {to_pos[card] for card in p.dead_hand}
    played_codes: set[int] = set()
    previous = -1
    for index, (seat, card) in enumerate(p.played):
        code = to_pos[card]
        if not 0 <= seat < n or not p.live[seat]:
            raise PositionError(f"played[{index}]: seat {seat} is not a live seat")
        if previous >= 0 and not _follows(previous, code):
            _check_stopped(previous, dead_codes, played_codes, f"played[{index}] ({card})")
        played_codes.add(code)
        previous = code
    if p.decision is Decision.LEAD and previous >= 0:
        _check_stopped(previous, dead_codes, played_codes, "the lead now")


def _check_stopped(last: int, dead: set[int], played: set[int], where: str) -> None:
    """A lead follows a stop: the card after the run's last one is dead, played or missing."""
    if last % 13 != 12 and last + 1 not in dead and last + 1 not in played:
        raise PositionError(f"{where}: a new lead, but the run before it could have gone on")


def _clockwise(p: Position, start: int) -> list[int]:
    n = p.players
    return [(start + i) % n for i in range(n) if p.live[(start + i) % n]]
