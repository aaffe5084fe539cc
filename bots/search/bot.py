"""The search bot: every decision by determinized Monte Carlo over the engine.

It is an ordinary SDK bot (``bots.sdk.Bot``): the SDK speaks the protocol and
hands it each request; ``Knowledge`` keeps what the events prove; for each
decision with more than one sensible choice the bot lists a few candidates,
scores them with ``bots.search.montecarlo.evaluate`` until its time is up and
answers the best (``choose``).  Deals are sampled consistently with what the
events prove, and weighted by how well they explain the other seats' leads
(``bots.search.inference``).

Candidates per decision kind:

* ``lead``: every legal lead (at most one per suit, so at most four), the
  ``boodle`` starter's lead first: the search answers another only when it
  beats that one by ``CONFIDENCE`` standard errors over the same samples;
* ``dead_hand``: every legal choice (keep, exchange, auction, buy);
* ``bid``: a handful of amounts from 0 up to what it can pay;
* ``stake``: a few placements out of the hundreds possible (even, all on one
  card, half on one card and the rest spread); the deal is unknown at that
  point, so each determinization is a fresh deal seed.

Time.  A request says ``time_left_ms``: this move's time plus the bank.  The
bot spends at most ``TIME_FRACTION`` of the move time plus a small slice of
the bank, never more than ``TIME_FRACTION`` of the time left, minus a fixed
allowance for reading and writing the lines; a search cannot overrun by more
than one determinization (well under a millisecond on this engine).
"""

from __future__ import annotations

import dataclasses
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence

from bots.sdk import Bot, TableState
from bots.search.inference import DealChain, LeadModel
from bots.search.knowledge import DEAD_SLOT, Knowledge
from bots.search.montecarlo import PRUNE_Z, Estimate, evaluate
from bots.search.playout import LEAD_AGAIN, PolicyParams
from bots.search.sampler import Dealer, DealError
from bots.starters.boodle import BoodleBot
from engine.actions import Action, Bid, DeadHandChoice, Decision, Stakes
from engine.cards import CARDS, Card
from engine.position import Position
from engine.rules import Rules
from protocol.events import Event, HandEnded
from protocol.messages import MatchEnd, MatchStart, Request

__all__ = ["TIME_FRACTION", "SearchBot", "think_time"]

TIME_FRACTION = 0.75
"""The share of the time allowed that the bot plans to use; the rest is its safety margin."""
OVERHEAD_MS = 25
"""Kept back from every decision for reading the request and writing the reply."""
BANK_SLICE = 1 / 40
"""Of the time bank, the share one decision may draw on."""
BID_STEPS = (0, 1, 2, 3, 4, 6, 8, 12)
CHAIN_STEPS = 12
"""Swaps tried by the deal chain between two determinizations (0: no reading of leads)."""
LEAD_NOISE = 0.3
"""The inference's prior share of random leads, before any hand is shown (``LeadModel``)."""
CONFIDENCE = 1.0
"""Standard errors by which a choice must beat the default one to be taken (``choose``)."""


def think_time(request: Request, move_time_ms: int, fraction: float = TIME_FRACTION) -> float:
    """Seconds to search for this request (0 when there is no time to spare)."""
    left = request.time_left_ms
    planned = min(fraction * left, fraction * move_time_ms + BANK_SLICE * request.time_bank_ms)
    return max(0.0, planned - OVERHEAD_MS) / 1000


class SearchBot(Bot):
    name = "search"
    version = "1.0"

    def __init__(
        self,
        *,
        seed: int = 0,
        fraction: float = TIME_FRACTION,
        max_samples: int | None = None,
        clock: Callable[[], float] = time.perf_counter,
        log: Callable[[str], None] | None = None,
        epsilon: float = 0.1,
        lead_again: float = LEAD_AGAIN,
        random_playouts: bool = False,
        confidence: float = CONFIDENCE,
        chain_steps: int = CHAIN_STEPS,
        lead_noise: float = LEAD_NOISE,
        learned_noise: int = 1,
        pruning: float = PRUNE_Z,
        playout_stops: int = 1,
        later_sight: int = 0,
    ) -> None:
        self.later_sight = later_sight
        self.pruning = pruning
        self.playout_stops = playout_stops
        self.chain_steps = chain_steps
        self.lead_noise = lead_noise
        self.lead_model: LeadModel | None = None
        self.heuristic = BoodleBot()
        self.confidence = confidence
        self.rng = random.Random(seed)
        self.epsilon = epsilon
        self.lead_again = lead_again
        self.random_playouts = random_playouts
        self.dead_size = 10
        self.learned_noise = learned_noise
        self.fraction = fraction
        self.max_samples = max_samples
        self.clock = clock
        self.log = log if log is not None else _stderr
        self.rules: Rules | None = None
        self.knowledge: Knowledge | None = None
        self.move_time_ms = 1000
        self.decisions = 0
        self.samples = 0

    # -- the SDK's hooks ---------------------------------------------------------------------

    def on_match_start(self, start: MatchStart, state: TableState) -> None:
        self.rules = Rules().with_options(start.rules)
        self.knowledge = Knowledge(start.seat, start.players, self.rules)
        self.lead_model = LeadModel(self.rules, start.players, prior_epsilon=self.lead_noise)
        self.move_time_ms = start.move_time_ms
        self.decisions = self.samples = 0

    def on_events(self, events: list[Event], state: TableState) -> None:
        knowledge = self.knowledge
        if knowledge is not None:
            for event in events:
                if isinstance(event, HandEnded) and self.lead_model is not None:
                    # Every hand is shown: learn how well each seat's leads were predicted.
                    shown = [[Card.parse(text) for text in hand] for hand in event.hands]
                    self.lead_model.learn(knowledge.leads, knowledge.played, shown)
                knowledge.observe(event)

    def on_match_end(self, end: MatchEnd, state: TableState) -> None:
        self.log(
            f"search: {end.match_id}: {self.decisions} decisions searched, "
            f"{self.samples / max(1, self.decisions):.0f} determinizations each"
        )

    # -- decisions ---------------------------------------------------------------------------

    def lead(self, request: Request, state: TableState) -> str:
        # The boodle starter's lead goes first: the search leaves it only for a
        # lead that is better with confidence (see ``choose``).
        state.sync(request)  # as the SDK does; a caller may hand in a bare TableState
        prior = self.heuristic.lead(request, state)
        legal = [prior, *(text for text in request.legal if text != prior)]
        choice = self.decide(request, [Card.parse(text) for text in legal])
        return str(choice)

    def dead_hand(self, request: Request, state: TableState) -> str:
        choice = self.decide(request, [DeadHandChoice(word) for word in request.legal])
        assert isinstance(choice, DeadHandChoice)
        return choice.value

    def bid(self, request: Request, state: TableState) -> int:
        low, high = request.min_bid or 0, request.max_bid or 0
        amounts = sorted({min(high, max(low, step)) for step in BID_STEPS})
        choice = self.decide(request, [Bid(amount) for amount in amounts])
        assert isinstance(choice, Bid)
        return choice.chips

    def stake(self, request: Request, state: TableState) -> list[int]:
        total = request.stake_total or 0
        cards = len(request.boodle_cards or ())
        choice = self.decide(request, [Stakes(a) for a in stake_candidates(total, cards)])
        assert isinstance(choice, Stakes)
        return list(choice.amounts)

    # -- the search --------------------------------------------------------------------------

    def decide(self, request: Request, candidates: Sequence[Action]) -> Action:
        """The candidate with the best mean score; the first if there is no time to search."""
        started = self.clock()
        if len(candidates) == 1 or self.rules is None or self.knowledge is None:
            return candidates[0]
        thinking = think_time(request, self.move_time_ms, self.fraction)
        if thinking <= 0:
            return candidates[0]  # no time to spare: not even for building the sampler
        deadline = started + thinking
        sample = self.sampler(request)
        policy = None if self.random_playouts else self.policy_params()
        estimates, samples = evaluate(
            sample,
            candidates,
            self.knowledge.seat,
            self.rng,
            deadline=deadline,
            max_samples=self.max_samples,
            clock=self.clock,
            policy=policy,
            pruning=self.pruning,
        )
        self.decisions += 1
        self.samples += samples
        return choose(estimates, self.confidence).action

    def policy_params(self) -> PolicyParams:
        """The playout policy for this decision: each seat leads like the boodle starter.

        Our own seat with ``epsilon`` random leads; every other seat with the
        share its shown hands proved random (``LeadModel.epsilon``: near 0 for a
        seat that leads like the starter), or ``epsilon`` if ``learned_noise`` is off.
        With ``later_sight`` our own later leads in the playouts see the sampled deal's
        whole dead hand: not a bot to play (it trusts a guess as if it were seen) but a
        bound, for ``benchmarks/search.py``, on what our later leads could make of what
        the stops reveal.
        """
        knowledge, model = self.knowledge, self.lead_model
        assert knowledge is not None and model is not None
        epsilons = [
            self.epsilon
            if seat == knowledge.seat or not self.learned_noise
            else model.epsilon(seat)
            for seat in range(knowledge.players)
        ]
        return PolicyParams(
            epsilons=epsilons,
            dead_size=self.dead_size,
            known_dead=model.codes(knowledge.known_dead()),
            lead_again=self.lead_again,
            stops_shown=bool(self.playout_stops),
            sight=knowledge.seat if self.later_sight else -1,
        )

    def sampler(self, request: Request) -> Callable[[random.Random], Position]:
        """A function drawing one determinization of the position this request is about."""
        knowledge = self.knowledge
        rules = self.rules
        assert knowledge is not None and rules is not None
        seat = knowledge.seat
        players = knowledge.players
        decision = Decision(request.decision)
        hand = tuple(Card.parse(text) for text in request.hand)
        live = tuple(s not in knowledge.eliminated for s in range(players))
        order = [(knowledge.dealer + 1 + i) % players for i in range(players)]
        order = [s for s in order if live[s]]
        known_dead = tuple(_cards(knowledge.discarded) if s == seat else () for s in range(players))
        base = Position(
            rules=rules,
            players=players,
            chips=tuple(request.chips),
            live=live,
            dealer=knowledge.dealer,
            hand_number=knowledge.hand_number,
            boodle=tuple(request.boodle),
            kitty=request.kitty,
            hands=tuple(() for _ in range(players)),
            dead_hand=(),
            played=tuple(knowledge.played),
            to_act=seat,
            decision=decision,
            known_dead=known_dead,
            eliminated=tuple(knowledge.eliminations),
        )
        # The dead hand's size, for the playout policy's chance that a card is dead.
        self.dead_size = knowledge.dead_hand_size or 52 // (sum(live) + 1)
        if decision is Decision.STAKE:
            # Before the deal: others' sealed stakes are guessed even; the deal is the seed's.
            even = Stakes(tuple(stake_candidates(rules.stake_total, len(rules.boodle_cards))[0]))
            stakes = tuple(even for _ in order[: order.index(seat)])

            def draw_stake(rng: random.Random) -> Position:
                return dataclasses.replace(base, stakes=stakes, seed=rng.getrandbits(48))

            return draw_stake
        problem, slots = knowledge.deal_problem(hand, list(request.hand_sizes))
        dealer = Dealer(problem)
        try:
            dealer.deal(random.Random(0))
        except DealError as error:
            # Only a bug in what we inferred (or events we never got) can cause this;
            # a search over unconstrained deals still beats no search.
            self.log(f"search: {error}; sampling without the inferred constraints")
            problem = dataclasses.replace(problem, forbidden=(0,) * len(problem.room))
            dealer = Dealer(problem)
        dead_known = _cards(knowledge.known_dead())
        bidders = [s for s in order if s != knowledge.dealer]
        earlier = bidders[: bidders.index(seat)] if decision is Decision.BID else []

        leads, played = knowledge.leads, knowledge.played
        chain: DealChain | None = None
        if leads and self.chain_steps > 0 and self.lead_model is not None:
            # Deals weighted by how well they explain the other seats' leads (inference.py).
            likelihood = self.lead_model.likelihood(leads, played)
            if any(likelihood.informative(s) for s in slots if s >= 0):
                chain = DealChain(
                    dealer,
                    slots,
                    likelihood,
                    random.Random(self.rng.getrandbits(32)),
                    steps=self.chain_steps,
                )
        deal: Callable[[random.Random], list[list[int]]] = (
            dealer.deal if chain is None else chain.draw
        )

        def draw(rng: random.Random) -> Position:
            hands, dead = sample_cards(deal(rng), slots, seat, hand, dead_known, players)
            return dataclasses.replace(
                base,
                hands=hands,
                dead_hand=dead,
                bids=tuple(rng.randrange(3) for _ in earlier),
                seed=rng.getrandbits(48),
            )

        return draw


def sample_cards(
    dealt: Sequence[Sequence[int]],
    slots: Sequence[int],
    seat: int,
    hand: tuple[Card, ...],
    dead_known: tuple[Card, ...],
    players: int,
) -> tuple[tuple[tuple[Card, ...], ...], tuple[Card, ...]]:
    """Every seat's hand and the dead hand, from one deal of the unseen cards."""
    hands: list[tuple[Card, ...]] = [() for _ in range(players)]
    hands[seat] = hand
    dead = dead_known
    for slot, cards in zip(slots, dealt, strict=True):
        if slot == DEAD_SLOT:
            dead = dead + tuple(CARDS[card] for card in cards)
        else:
            hands[slot] = tuple(CARDS[card] for card in cards)
    return tuple(hands), dead


def choose(estimates: Sequence[Estimate], confidence: float) -> Estimate:
    """The best mean if it beats the first candidate (the default) with confidence, else the first.

    Every candidate is scored on the same samples, so the test is on the
    sample-by-sample differences: the best mean is taken only when its mean
    gain over the first candidate is at least ``confidence`` standard errors.
    With a strong default (the boodle starter's lead) a noisy search with few
    samples then costs nothing, and a clear finding is still used.
    """
    top = best(estimates)
    default = estimates[0]
    if top is default or confidence <= 0:
        return top
    gains = [a - b for a, b in zip(top.values, default.values, strict=True)]
    if len(gains) < 2:
        return default
    error = statistics.stdev(gains) / math.sqrt(len(gains))
    return top if statistics.fmean(gains) > confidence * error else default


def best(estimates: Sequence[Estimate]) -> Estimate:
    """The highest mean of those played to the end (not ``dropped``); ties (and no samples at
    all) go to the earliest candidate."""
    top = estimates[0]
    for estimate in estimates[1:]:
        if not estimate.dropped and estimate.mean > top.mean:
            top = estimate
    return top


def stake_candidates(total: int, cards: int) -> list[tuple[int, ...]]:
    """A few placements of ``total`` chips over ``cards`` boodle cards; the even spread first."""
    if cards < 1:
        return [()]
    out: list[tuple[int, ...]] = [_spread(total, cards)]
    for card in range(cards):
        out.append(tuple(total if i == card else 0 for i in range(cards)))
        if cards > 1:
            half = (total + 1) // 2
            rest = _spread(total - half, cards - 1)
            others = iter(rest)
            out.append(tuple(half if i == card else next(others) for i in range(cards)))
    unique: list[tuple[int, ...]] = []
    for amounts in out:
        if amounts not in unique:
            unique.append(amounts)
    return unique


def _spread(total: int, cards: int) -> tuple[int, ...]:
    base, extra = divmod(total, cards)
    return tuple(base + (1 if i < extra else 0) for i in range(cards))


def _cards(mask: int) -> tuple[Card, ...]:
    return tuple(CARDS[card] for card in range(52) if mask >> card & 1)


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
