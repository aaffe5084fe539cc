"""Seeded random simulations of whole matches, checking RULES.md's invariants at every step.

OpenSpiel runs every game through thousands of random playthroughs that check
the state after each action; this file does the same for every preset and for
rule options no preset uses (dead-hand exchanges, auctions, purchases, blocked
hands, one-suit boodle cards...), so code paths that scripted tests never
reach are still walked many times.

The checks are shaped as an *independent shadow* of the match: ``Shadow``
starts from the empty table and follows only the omniscient event stream,
rebuilding every hand, the dead hand, the played cards, every chip, boodle
stack and the kitty.  After each action the shadow must agree with the
engine's omniscient helpers (``hand_of``, ``dead_hand``, ``played_cards``,
``chips``...).  While walking the events it predicts, from the rules alone,
the exact event that must come next (the forced follow, the stop and its
cause, the boodle capture, the payments when someone goes out) and the exact
legal leads.  So a run that skips a holder, a lead that is not the lowest
card of its suit, or a payment that goes missing from the log fails here.

Each match also replays its recorded decisions into a fresh ``Match`` and must
produce the same events; clones must be independent and faithful; a seat's
observation must not change when the cards hidden from it are dealt again;
and no seat's view of the events may show another seat's cards or the dead
hand before the hand ends.
"""

from __future__ import annotations

import dataclasses
import os
import random
from collections import Counter, deque
from typing import Any

import pytest

from engine import (
    CARDS,
    Ante,
    Bid,
    BlockedHand,
    Card,
    DeadHandChoice,
    DeadHandExchange,
    Dealing,
    Decision,
    LeadSuit,
    Match,
    Payment,
    RankOrder,
    Rules,
    Stakes,
    preset,
)
from engine.events import (
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
    MatchEnded,
    PlayerEliminated,
    PotShared,
    RecurringMemo,
    RunStopped,
    StakePlaced,
    WentOut,
)

ALL_CARDS: frozenset[Card] = frozenset(CARDS)


# Rank order tables, by card: the hot loop of the checks works on ints, as the engine does.
POSITION: dict[RankOrder, tuple[int, ...]] = {
    order: tuple(order.position(card.rank) for card in CARDS) for order in RankOrder
}


def successor(card: Card, order: RankOrder) -> Card | None:
    """The next higher card of the same suit, or None after the top card."""
    pos = POSITION[order][card]
    if pos == 12:
        return None
    return CARDS[card // 13 * 13 + int(order.rank_at(pos + 1))]


def lowest(hand: set[Card], suit: int, order: RankOrder) -> Card | None:
    """The lowest card of ``suit`` (0..3) in ``hand`` under ``order``."""
    cards = [c for c in hand if c // 13 == suit]
    return min(cards, key=POSITION[order].__getitem__) if cards else None


def suits_of(hand: set[Card]) -> set[int]:
    return {c // 13 for c in hand}


def clockwise(start: int, live: list[bool]) -> list[int]:
    """Live seats clockwise, beginning with ``start`` if live."""
    n = len(live)
    return [(start + i) % n for i in range(n) if live[(start + i) % n]]


class Shadow:
    """The match rebuilt from the omniscient event stream alone, with predictions."""

    def __init__(self, rules: Rules, players: int) -> None:
        self.rules = rules
        self.order = rules.rank_order
        self.n = players
        self.hands: list[set[Card]] = [set() for _ in range(players)]
        self.dead: set[Card] = set()  # the pack is not dealt yet: every place is empty
        self.played: set[Card] = set()
        self.chips = [rules.starting_chips] * players
        self.stacks = [0] * len(rules.boodle_cards)
        self.kitty = 0
        self.live = [True] * players
        self.hand_number = 0
        self.dealer = -1
        self.leader: int | None = None  # who must lead next, when known
        self.stopped_suit: int | None = None  # 0..3, the suit of the last run
        self.pending: deque[Event] = deque()  # exact events the rules force next
        self.last_player = -1
        self.blocked_pot: int | None = None
        self.over = False
        self.hands_seen = 0
        self.out_order: list[int] = []
        self.seen: Counter[type] = Counter()  # events by kind: what the match exercised
        self.shown_dead: set[Card] = set()  # cards a stop showed to be dead, this hand
        self.discarded: list[set[Card]] = [set() for _ in range(players)]  # swapped away

    # -- events ---------------------------------------------------------------------

    def feed(self, events: list[Event]) -> None:
        for event in events:
            self.seen[type(event)] += 1
            if self.pending:
                expected = self.pending.popleft()
                assert event == expected, f"expected {expected}, the engine logged {event}"
                self._apply(event)
                continue
            assert not isinstance(event, BoodleWon | WentOut), f"unforced {event}"
            self._apply(event)

    def _apply(self, event: Event) -> None:
        assert not self.over, f"{event} after the match ended"
        rules = self.rules
        match event:
            case HandStarted(hand, dealer):
                assert hand == self.hand_number + 1
                assert self.live[dealer], f"dealer {dealer} is out of the match"
                self.hand_number = hand
                self.dealer = dealer
                self.stopped_suit = None
                self.leader = None
                self.hands_seen += 1
            case PlayerEliminated(seat, chips, shares):
                assert self.live[seat]
                assert chips == self.chips[seat]
                self.live[seat] = False
                self.out_order.append(seat)
                if shares or not chips:
                    # seed 000: the chips are divided among the remaining players
                    assert sum(share for _, share in shares) == chips
                    self.chips[seat] = 0
                for other, share in shares:
                    assert self.live[other], f"a share went to seat {other}, who is out"
                    self.chips[other] += share
            case StakePlaced(seat, amounts, kitty):
                assert self.live[seat], f"seat {seat} staked after being eliminated"
                assert len(amounts) == len(self.stacks)
                assert all(a >= 0 for a in amounts)
                if rules.ante is Ante.FREE:
                    assert sum(amounts) == rules.stake_total
                else:
                    each = (
                        rules.dealer_ante_per_card if seat == self.dealer else rules.ante_per_card
                    )
                    assert amounts == (each,) * len(self.stacks)
                assert kitty == rules.kitty_ante
                for index, amount in enumerate(amounts):
                    self.stacks[index] += amount
                self.kitty += kitty
                self.chips[seat] -= sum(amounts) + kitty
            case CardsDealt(sizes, dead_size, hands, dead):
                assert dead is not None and all(h is not None for h in hands)
                self.hands = [set(h or ()) for h in hands]
                self.dead = set(dead)
                self.played = set()
                self.shown_dead = set()
                self.discarded = [set() for _ in range(self.n)]
                live_sizes = [sizes[s] for s in range(self.n) if self.live[s]]
                for seat in range(self.n):
                    assert sizes[seat] == len(self.hands[seat])
                    assert (sizes[seat] > 0) == self.live[seat]
                assert dead_size == len(self.dead)
                if rules.dealing is Dealing.EQUAL_HANDS:
                    assert len(set(live_sizes)) == 1, f"unequal hands {sizes}"
                else:
                    assert max(live_sizes) - min(live_sizes) <= 1, f"hands {sizes}"
                if not rules.dead_hand:
                    assert dead_size == 0
                self.leader = self._next_live(self.dealer)
            case DeadHandDecided(dealer, choice):
                assert dealer == self.dealer
                assert rules.dead_hand_exchange is not DeadHandExchange.OFF
                if choice == DeadHandChoice.BUY:
                    assert rules.dead_hand_exchange is DeadHandExchange.PURCHASE
                if choice == DeadHandChoice.AUCTION:
                    assert rules.dead_hand_exchange is DeadHandExchange.EXCHANGE_OR_AUCTION
            case BidsRevealed(bids):
                bidders = [seat for seat, _ in bids]
                order = clockwise(self.dealer + 1, self.live)
                assert bidders == [s for s in order if s != self.dealer], "bids out of turn"
                for seat, chips in bids:
                    assert 0 <= chips <= self.chips[seat]
            case HandSwapped(seat, price, paid_to, hand, size):
                assert hand is not None and tuple(sorted(self.dead)) == hand
                assert size == len(hand)
                self.hands[seat], self.dead = set(hand), self.hands[seat]
                self.discarded[seat] = set(self.dead)
                self.chips[seat] -= price
                if paid_to is None:
                    self.kitty += price
                else:
                    self.chips[paid_to] += price
            case CardPlayed(seat, card, lead):
                self._play(seat, card, lead)
            case BoodleWon(seat, card, chips):
                index = rules.boodle_cards.index(card)
                assert chips == self.stacks[index] > 0
                self.stacks[index] = 0
                self.chips[seat] += chips
            case RunStopped(card, cause, missing):
                if cause == "dead" and missing is not None:
                    self.shown_dead.add(missing)
                self.stopped_suit = card // 13
                self.leader = self.last_player
            case LeadPassed(from_seat, to_seat):
                assert rules.lead_suit is LeadSuit.CHANGE_OR_PASS
                assert from_seat == self.leader
                suit = self.stopped_suit
                assert suit is not None
                for seat in clockwise(from_seat, self.live):
                    if seat == to_seat:
                        break
                    assert suits_of(self.hands[seat]) <= {suit}, f"seat {seat} passed the lead"
                assert suits_of(self.hands[to_seat]) - {suit}, "the lead passed to a void seat"
                self.leader = to_seat
            case HandBlocked():
                assert rules.lead_suit is LeadSuit.CHANGE_OR_PASS
                suit = self.stopped_suit
                for seat in range(self.n):
                    assert suits_of(self.hands[seat]) <= {suit}, "blocked, yet a suit could be led"
                self.leader = None
                self.blocked_pot = 0
            case WentOut(seat):
                assert not self.hands[seat]
                for payer in clockwise(seat + 1, self.live):
                    if payer == seat:
                        continue
                    owed = 1 if rules.payment is Payment.FLAT else len(self.hands[payer])
                    self.pending.append(ChipsPaid(payer, seat, min(owed, self.chips[payer]), owed))
                if self.kitty:
                    self.pending.append(KittyWon(seat, self.kitty))
            case ChipsPaid(payer, payee, chips, owed):
                assert 0 <= chips <= owed and chips <= self.chips[payer]
                if self.blocked_pot is not None:
                    cards = len(self.hands[payer])
                    fewest = min(len(self.hands[s]) for s in range(self.n) if self.live[s])
                    assert rules.blocked_hand is not BlockedHand.NOBODY_PAYS, (
                        "paid when nobody pays"
                    )
                    if rules.blocked_hand is BlockedHand.FEWEST_FLAT:
                        assert owed == 1
                    else:
                        assert owed == cards - fewest
                    assert chips == min(owed, self.chips[payer])
                self.chips[payer] -= chips
                if payee is None:
                    assert self.blocked_pot is not None
                    self.blocked_pot += chips
                else:
                    self.chips[payee] += chips
            case PotShared(seat, chips):
                assert self.blocked_pot is not None and chips <= self.blocked_pot
                self.blocked_pot -= chips
                self.chips[seat] += chips
            case KittyWon(seat, chips):
                assert chips == self.kitty
                self.kitty = 0
                self.chips[seat] += chips
            case HandEnded(hands, dead, winners):
                assert hands == tuple(tuple(sorted(h)) for h in self.hands)
                assert dead == tuple(sorted(self.dead))
                assert not self.blocked_pot, "a blocked-hand pot was not divided"
                if self.blocked_pot is not None:
                    live = [s for s in range(self.n) if self.live[s]]
                    if rules.blocked_hand is BlockedHand.NOBODY_PAYS:
                        assert winners == ()
                    else:
                        fewest = min(len(self.hands[s]) for s in live)
                        assert set(winners) == {s for s in live if len(self.hands[s]) == fewest}
                else:
                    assert len(winners) == 1 and not self.hands[winners[0]]
                self.blocked_pot = None
                self.leader = None
                # Between hands every card has been shown; what is known dead is for play.
                self.shown_dead = set()
                self.discarded = [set() for _ in range(self.n)]
            case MatchEnded(places, chips, reason):
                assert chips == tuple(self.chips)
                left = sum(self.live)
                if reason == "players_left":
                    assert left <= rules.end_players
                else:
                    assert reason == "hand_limit" and self.hands_seen == rules.hand_limit
                assert sorted(places)[0] == 1 and all(1 <= p <= self.n for p in places)
                survivors = [s for s in range(self.n) if self.live[s]]
                for s in survivors:
                    for t in survivors:
                        if chips[s] > chips[t]:
                            assert places[s] < places[t], "richer survivor placed lower"
                    for t in range(self.n):
                        if not self.live[t]:
                            assert places[s] < places[t], "eliminated seat above a survivor"
                self.over = True

    def _play(self, seat: int, card: Card, lead: bool) -> None:
        assert self.live[seat], f"seat {seat} played after being eliminated"
        assert card in self.hands[seat], f"seat {seat} played {card} without holding it"
        order = self.order
        if lead:
            assert seat == self.leader, f"seat {seat} led, but seat {self.leader} had the lead"
            assert card == lowest(self.hands[seat], card // 13, order), (
                f"lead {card} is not the lowest of its suit in {sorted(self.hands[seat])}"
            )
            stopped = self.stopped_suit
            steered = stopped is not None and self.rules.lead_suit is not LeadSuit.ANY
            if steered and suits_of(self.hands[seat]) - {stopped}:
                assert card // 13 != stopped, "led the stopped suit needlessly"
        self.hands[seat].discard(card)
        self.played.add(card)
        self.last_player = seat
        if card in self.rules.boodle_cards:
            index = self.rules.boodle_cards.index(card)
            if self.stacks[index]:
                self.pending.append(BoodleWon(seat, card, self.stacks[index]))
        if not self.hands[seat]:
            self.pending.append(WentOut(seat))
            return
        nxt = successor(card, order)
        if nxt is None:
            self.pending.append(RunStopped(card, "top", None))
        elif nxt in self.dead:
            self.pending.append(RunStopped(card, "dead", nxt))
        elif nxt in self.played:
            self.pending.append(RunStopped(card, "played", nxt))
        else:
            holder = next(s for s in range(self.n) if nxt in self.hands[s])
            self.pending.append(CardPlayed(holder, nxt, False))

    def _next_live(self, seat: int) -> int:
        return clockwise(seat + 1, self.live)[0]

    # -- predictions for the decision to come ---------------------------------------

    def expected_leads(self, seat: int) -> list[Card]:
        hand = self.hands[seat]
        suits = suits_of(hand)
        stopped = self.stopped_suit
        if stopped is not None and self.rules.lead_suit is not LeadSuit.ANY:
            other = suits - {stopped}
            if other:
                suits = other
            else:
                assert self.rules.lead_suit is LeadSuit.CHANGE_OR_SAME, (
                    f"seat {seat} must lead with only {stopped} left; the lead should pass"
                )
        leads = [lowest(hand, suit, self.order) for suit in suits]
        return sorted(c for c in leads if c is not None)


def check_state(match: Match) -> list[tuple[Card, ...]]:
    """The invariants of RULES.md that must hold between any two decisions; returns the hands."""
    n = match.players
    rules = match.rules
    hands = [match.hand_of(seat) for seat in range(n)]
    places = [*(c for hand in hands for c in hand), *match.dead_hand(), *match.played_cards()]
    if between_hands(match) and not places:
        pass  # no deal in force (stakes before a deal, or the match over): every place empty
    else:
        assert sorted(places) == list(CARDS), "a card is missing or in two places"
    assert match.hand_sizes() == tuple(len(h) for h in hands)

    chips = match.chips
    assert match.total_chips() == n * rules.starting_chips, "chips were created or destroyed"
    assert sum(chips) + sum(match.boodle_stacks) + match.kitty == match.total_chips()
    assert min(chips) >= 0 and min(match.boodle_stacks) >= 0 and match.kitty >= 0
    if not between_hands(match):  # (between hands the last hand's cards may linger)
        for out in range(n):
            if not match.live[out]:
                assert not hands[out], f"seat {out} is out of the match but was dealt cards"

    legal = match.legal_actions()
    seat = match.current_seat()
    if match.is_over:
        assert seat is None and match.decision is None and legal == []
        return hands
    assert seat is not None and match.live[seat], f"seat {seat} is out but must act"
    assert legal, "no legal action while the match goes on"
    assert legal == sorted(legal) and len(set(legal)) == len(legal), "legal actions unsorted"
    if match.decision is Decision.STAKE:
        assert all(isinstance(a, Stakes) and sum(a.amounts) == rules.stake_total for a in legal)
    elif match.decision is Decision.DEAD_HAND:
        assert seat == match.dealer and DeadHandChoice.KEEP in legal
    elif match.decision is Decision.BID:
        assert seat != match.dealer
        assert legal == [Bid(c) for c in range(chips[seat] + 1)]
    return hands


def between_hands(match: Match) -> bool:
    """Stakes before a deal, or the match over: the cards are not in play."""
    return match.is_over or match.decision is Decision.STAKE


def check_shadow(match: Match, shadow: Shadow, hands: list[tuple[Card, ...]]) -> None:
    """The engine's state is the one its events describe, and its legal leads follow the rules.

    Between hands the engine may keep or clear the last hand's cards; the shadow
    already compared them with ``HandEnded``, so cards are compared during play only.
    """
    if not between_hands(match):
        assert [set(h) for h in hands] == shadow.hands, "hands differ from what the events say"
        assert set(match.dead_hand()) == shadow.dead, "the dead hand differs from the events"
        assert set(match.played_cards()) == shadow.played
    assert list(match.chips) == shadow.chips, "chips differ from what the events say"
    assert list(match.boodle_stacks) == shadow.stacks
    assert match.kitty == shadow.kitty
    assert list(match.live) == shadow.live
    assert match.is_over == shadow.over
    assert not shadow.pending, f"the engine stopped before {shadow.pending[0]}"
    seat = match.current_seat()
    if seat is not None and match.decision is Decision.LEAD:
        assert seat == shadow.leader
        assert match.legal_actions() == shadow.expected_leads(seat)


# -- one checked match -------------------------------------------------------------------


@dataclasses.dataclass
class Played:
    match: Match
    decisions: list[Any]
    redeals: int  # redeal_hidden checks made
    redeals_moved: int  # of which the redeal put some hidden card elsewhere
    seen: Counter[type]  # events by kind


def snapshot(match: Match) -> tuple[Any, ...]:
    n = match.players
    return (
        match.raw_events(),
        match.chips,
        match.boodle_stacks,
        match.kitty,
        match.current_seat(),
        match.legal_actions(),
        tuple(match.hand_of(s) for s in range(n)),
        match.dead_hand(),
        match.played_cards(),
        tuple(match.observation(s) for s in range(n)),
    )


def placed(match: Match) -> list[Card]:
    """Every card in a hand, the dead hand or played, sorted: all 52 once the pack is dealt."""
    hands = [c for seat in range(match.players) for c in match.hand_of(seat)]
    return sorted([*hands, *match.dead_hand(), *match.played_cards()])


def check_redeal(match: Match, shadow: Shadow, hand_start: int, rng: random.Random) -> bool:
    """A seat's view is the same after its hidden cards are dealt again; True if any moved.

    The redeal must also agree with what the seat knows: the cards a stop showed
    dead and the seat's own discards stay in the dead hand.
    """
    seat = rng.randrange(match.players)
    redealt = match.redeal_hidden(seat, rng)
    known_dead = shadow.shown_dead | shadow.discarded[seat]
    assert known_dead <= set(redealt.dead_hand()), "a card known to be dead was dealt"
    assert redealt.observation(seat) == match.observation(seat)
    assert redealt.events(seat, hand_start) == match.events(seat, hand_start)
    assert redealt.hand_of(seat) == match.hand_of(seat)
    assert redealt.hand_sizes() == match.hand_sizes()
    assert len(redealt.dead_hand()) == len(match.dead_hand())
    assert redealt.played_cards() == match.played_cards()
    assert placed(redealt) == placed(match), "the redeal lost or doubled a card"
    return any(redealt.hand_of(s) != match.hand_of(s) for s in range(match.players))


def check_clone(match: Match, action: Any, rng: random.Random) -> list[tuple[Any, ...]]:
    """Play on a clone: the original must not change; returns the clone's events for ``action``."""
    before = snapshot(match)
    clone = match.clone()
    assert snapshot(clone) == before, "a clone differs from its original"
    since = clone.event_count()
    clone.apply(action)
    tail = clone.raw_events(since)
    for _ in range(rng.randrange(1, 30)):
        if clone.is_over:
            break
        legal = clone.legal_actions()
        clone.apply(legal[rng.randrange(len(legal))])
    assert snapshot(match) == before, "playing on a clone changed the original"
    return tail


def play_checked(rules: Rules, players: int, seed: int, *, deep: bool) -> Played:
    """One whole match with random decisions, checking every state on the way.

    ``check_state`` runs after every action.  The shadow follows the events after
    every action when ``deep`` (which also adds clone and redeal checks at random
    points), else at every hand's end and at random points: typed events cost
    more than the engine's own moves, and the shadow checks the whole story of a
    hand whenever it catches up.
    """
    rng = random.Random(seed)
    match = Match(rules, players, seed)
    shadow = Shadow(rules, players)
    shadow.feed(match.events())
    fed = match.event_count()
    hands = check_state(match)
    check_shadow(match, shadow, hands)
    decisions: list[Any] = []
    redeals = moved = 0
    hand_start = 0  # an event index at or before the current hand's first event
    while not match.is_over:
        legal = match.legal_actions()
        action = legal[rng.randrange(len(legal))]
        seat = match.current_seat()
        since = match.event_count()
        hand_number = match.hand_number
        hands_played = match.hands_played
        clone_tail = None
        if deep and rng.random() < 0.05:
            clone_tail = check_clone(match, action, random.Random(rng.random()))
        if deep and rng.random() < 0.05:
            redeals += 1
            moved += check_redeal(match, shadow, hand_start, random.Random(rng.random()))
        if isinstance(action, Card):
            assert seat is not None
            order = POSITION[rules.rank_order]
            same_suit = [c for c in hands[seat] if c // 13 == action // 13]
            assert order[action] == min(order[c] for c in same_suit), "a lead is not the lowest"
        match.apply(action)
        decisions.append(action)
        if match.hand_number != hand_number:
            hand_start = since
        if clone_tail is not None:
            assert match.raw_events(since) == clone_tail, "a clone played on differently"
        hands = check_state(match)
        if deep or match.hands_played != hands_played or match.is_over or rng.random() < 0.2:
            shadow.feed(match.events(since=fed))
            fed = match.event_count()
            check_shadow(match, shadow, hands)
    outcome = match.outcome()
    assert outcome.hands_played == shadow.hands_seen
    assert outcome.chips == tuple(shadow.chips)
    assert [seat for seat, _ in outcome.eliminated] == shadow.out_order
    for seat, hand in outcome.eliminated:
        for other, later in outcome.eliminated:
            if later > hand:
                assert outcome.places[other] < outcome.places[seat], "later out, placed lower"
    return Played(match, decisions, redeals, moved, shadow.seen)


def check_views(match: Match) -> None:
    """No seat's events show another seat's cards or the dead hand before the hand ends.

    ``event_views`` (every viewer typed at once, for the referee) gives exactly
    ``events(viewer=None)`` and each seat's ``events(viewer=seat)``, from any cursor,
    with or without a memo of recurring events (kept across calls, as a referee does).
    """
    rules = match.rules
    memo: RecurringMemo = {}
    for since in (0, match.event_count() // 2, 0):
        for views in (match.event_views(since), match.event_views(since, memo)):
            assert [omniscient for omniscient, _ in views] == match.events(since=since)
            for viewer in range(match.players):
                seen = [omniscient if each is None else each[viewer] for omniscient, each in views]
                assert seen == match.events(viewer=viewer, since=since)
    # The memo's point: an event that recurs with the same fields is one object.
    memoized = {id(event) for event in memo.values()}
    by_value: dict[object, object] = {}
    for event, _ in match.event_views(0, memo):
        if id(event) in memoized:
            assert by_value.setdefault(event, event) is event, f"{event} typed twice"
    for viewer in range(match.players):
        own: set[Card] = set()  # every card the viewer has held this hand
        public: set[Card] = set(rules.boodle_cards)  # cards everyone has seen this hand
        for event in match.events(viewer=viewer):
            if isinstance(event, HandEnded):
                own, public = set(), set(rules.boodle_cards)
                continue
            if isinstance(event, CardsDealt):
                assert event.dead_hand is None, "the dead hand was shown at the deal"
                for seat, hand in enumerate(event.hands):
                    assert (hand is not None) == (seat == viewer), f"seat {seat}'s cards shown"
                own |= set(event.hands[viewer] or ())
            elif isinstance(event, HandSwapped):
                assert (event.hand is not None) == (event.seat == viewer)
                own |= set(event.hand or ())
            elif isinstance(event, CardPlayed):
                public.add(event.card)
            elif isinstance(event, RunStopped) and event.missing is not None:
                public.add(event.missing)  # nobody played it: everyone sees that
            shown = cards_in(event)
            assert shown <= own | public, f"{event} shows hidden cards to seat {viewer}"


def cards_in(value: object) -> set[Card]:
    if isinstance(value, Card):
        return {value}
    if isinstance(value, tuple | list):
        return {c for item in value for c in cards_in(item)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {c for f in dataclasses.fields(value) for c in cards_in(getattr(value, f.name))}
    return set()


def check_replay(played: Played) -> None:
    """The same seed and the same decisions give the same match, card for card."""
    original = played.match
    again = Match(original.rules, original.players, original.seed)
    for action in played.decisions:
        again.apply(action)
    assert again.events() == original.events()
    assert again.outcome() == original.outcome()


# -- the rule sets under test ----------------------------------------------------------


def variant(name: str, **options: object) -> Rules:
    return preset(name).with_options(options)


# NEWMARKET_SIM_SCALE=10 plays ten times as many matches (a soak run); the default keeps
# this file near a minute on one core.
SCALE = float(os.environ.get("NEWMARKET_SIM_SCALE", "1"))

# (id, rules, matches at scale 1, events the matches must include).  Matches cycle
# through 3..8 players, so counts are multiples of 6.  Newmarket's matches are short
# (20 chips against a stake of 10).  The events listed prove that the option under
# test was exercised, not merely allowed; each occurs dozens of times at scale 1.
CONFIGS: list[tuple[str, Rules, int, tuple[type, ...]]] = [
    ("boodle", preset("boodle"), 54, (BoodleWon, PlayerEliminated)),
    ("michigan", preset("michigan"), 30, (BoodleWon, PlayerEliminated)),
    ("new-market", preset("new-market"), 54, (LeadPassed, StakePlaced)),
    ("newmarket", preset("newmarket"), 240, (LeadPassed, PlayerEliminated)),
    ("stops", preset("stops"), 72, (KittyWon,)),
    ("exchange", variant("boodle", dead_hand_exchange="exchange"), 18, (HandSwapped,)),
    (
        "auction-aces-low",
        variant("new-market", dead_hand_exchange="exchange_or_auction", rank_order="aces_low"),
        30,
        (BidsRevealed, HandSwapped),
    ),
    (
        "auction-fixed",
        variant("boodle", dead_hand_exchange="exchange_or_auction"),
        24,
        (BidsRevealed, HandSwapped),
    ),
    (
        "purchase-kitty",
        variant("stops", dead_hand_exchange="purchase", purchase_fee=2),
        36,
        (HandSwapped, KittyWon),
    ),
    (
        "purchase-equal",
        variant("newmarket", dead_hand_exchange="purchase", starting_chips=40),
        24,
        (HandSwapped, KittyWon, LeadPassed),
    ),
    (
        "no-dead-hand-pass",
        variant("michigan", lead_suit="change_or_pass", hand_limit=40),
        24,
        (LeadPassed,),
    ),
    (
        "fewest-flat-round-robin",
        variant("newmarket", blocked_hand="fewest_flat", dealing="round_robin", starting_chips=50),
        18,
        (LeadPassed,),
    ),
    (
        "change-or-same-flat-kitty",
        variant("boodle", lead_suit="change_or_same", payment="flat", kitty_ante=2),
        12,
        (KittyWon,),
    ),
    (
        "one-suit-aces-low",
        variant(
            "boodle",
            boodle_cards="AH,KH,QH,JH",
            rank_order="aces_low",
            end_players=1,
            hand_limit=30,
        ),
        24,
        (BoodleWon,),
    ),
    (
        "one-card-free",
        variant("boodle", boodle_cards="TD", ante="free", stake_total=3, dealing="equal_hands"),
        12,
        (BoodleWon,),
    ),
]


@pytest.mark.parametrize(
    ("rules", "matches", "must_see"),
    [pytest.param(rules, matches, must, id=name) for name, rules, matches, must in CONFIGS],
)
def test_random_matches_keep_the_invariants(
    rules: Rules, matches: int, must_see: tuple[type, ...]
) -> None:
    redeals = moved = 0
    seen: Counter[type] = Counter()
    for index in range(round(matches * SCALE)):
        players = 3 + index % 6
        # 5 and 7 are prime to 6, so the costlier checks meet every table size.
        played = play_checked(rules, players, seed=1000 * players + index, deep=index % 5 == 0)
        redeals += played.redeals
        moved += played.redeals_moved
        seen += played.seen
        if index % 7 == 0:
            check_views(played.match)
            check_replay(played)
    # The redeal checks were not vacuous: most redeals moved some hidden card.
    assert redeals > 10 and moved > redeals // 2
    for kind in must_see:
        assert seen[kind] >= 10, f"only {seen[kind]} {kind.__name__} events: option not exercised"


@pytest.mark.parametrize("blocked_hand", ["nobody_pays", "fewest_flat", "fewest_difference"])
def test_blocked_hands_keep_the_invariants(blocked_hand: str) -> None:
    """Blocked hands are rare (about 1 in 100 hands, newmarket at 3 players): seek them out."""
    rules = variant("newmarket", blocked_hand=blocked_hand, starting_chips=60)
    blocked = 0
    for seed in range(400):
        played = play_checked(rules, 3, seed, deep=seed % 5 == 0)
        blocked += played.seen[HandBlocked]
        if blocked >= 2:
            break
    assert blocked >= 2, "random play hardly ever blocked a hand"


def test_redeal_before_the_first_deal_keeps_the_observation() -> None:
    match = Match(preset("new-market"), 4, seed=1)
    seat = match.current_seat()
    assert match.decision is Decision.STAKE and seat is not None
    redealt = match.redeal_hidden(seat, random.Random(0))
    assert redealt.observation(seat) == match.observation(seat)


def test_redeal_keeps_cards_a_stop_showed_dead_in_the_dead_hand() -> None:
    rng = random.Random(5)
    checked = 0
    for seed in range(40):
        match = Match(preset("boodle"), 4, seed)
        while not match.is_over and match.hands_played < 2:
            legal = match.legal_actions()
            match.apply(legal[rng.randrange(len(legal))])
            seat = match.current_seat()
            if seat is None or match.decision is not Decision.LEAD:
                continue
            shown_dead = {
                event.missing
                for event in current_hand(match.events(viewer=seat))
                if isinstance(event, RunStopped) and event.cause == "dead"
            }
            if shown_dead:
                checked += 1
                redealt = match.redeal_hidden(seat, rng)
                assert shown_dead <= set(redealt.dead_hand()), "a card shown dead was dealt"
    assert checked > 100


def current_hand(events: list[Event]) -> list[Event]:
    """The events from the last HandStarted on."""
    start = max(i for i, event in enumerate(events) if isinstance(event, HandStarted))
    return events[start:]


# -- the checker itself can fail ---------------------------------------------------------


def recorded_match(seed: int) -> tuple[Rules, list[Event]]:
    rules = preset("boodle")
    rng = random.Random(seed)
    match = Match(rules, 4, seed)
    while not match.is_over:
        legal = match.legal_actions()
        match.apply(legal[rng.randrange(len(legal))])
    return rules, match.events()


def first(events: list[Event], kind: type, **where: object) -> int:
    return next(
        i
        for i, event in enumerate(events)
        if isinstance(event, kind) and all(getattr(event, k) == v for k, v in where.items())
    )


def follow_by_the_wrong_seat(events: list[Event]) -> None:
    i = first(events, CardPlayed, lead=False)
    play = events[i]
    assert isinstance(play, CardPlayed)
    events[i] = dataclasses.replace(play, seat=(play.seat + 1) % 4)


def lead_a_higher_card(events: list[Event]) -> None:
    deal = events[first(events, CardsDealt)]
    i = first(events, CardPlayed, lead=True)
    lead = events[i]
    assert isinstance(deal, CardsDealt) and isinstance(lead, CardPlayed)
    higher = max(c for c in deal.hands[lead.seat] or () if c // 13 == lead.card // 13)
    assert higher != lead.card, "pick a seed whose first lead is not a singleton"
    events[i] = dataclasses.replace(lead, card=higher)


def pay_one_chip_short(events: list[Event]) -> None:
    i = next(i for i, e in enumerate(events) if isinstance(e, ChipsPaid) and e.chips > 0)
    pay = events[i]
    assert isinstance(pay, ChipsPaid)
    events[i] = dataclasses.replace(pay, chips=pay.chips - 1)


def drop_a_stop(events: list[Event]) -> None:
    del events[first(events, RunStopped)]


def drop_a_boodle_capture(events: list[Event]) -> None:
    del events[first(events, BoodleWon)]


@pytest.mark.parametrize(
    "doctor",
    [
        follow_by_the_wrong_seat,
        lead_a_higher_card,
        pay_one_chip_short,
        drop_a_stop,
        drop_a_boodle_capture,
    ],
)
def test_the_checks_notice_a_doctored_event_log(doctor: Any) -> None:
    rules, events = recorded_match(seed=4)
    Shadow(rules, 4).feed(list(events))  # the true log passes
    doctor(events)
    with pytest.raises(AssertionError):
        Shadow(rules, 4).feed(events)
