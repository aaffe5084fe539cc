"""Sampling the unseen cards: never against what the seat has seen.

Two layers.  ``bots.search.sampler`` on hand-made problems: every deal fits
its constraints, a deal that needs cards moved along (an augmenting path)
is still found, and an impossible problem says so.  Then the whole chain on
real matches: a ``Knowledge`` fed the protocol events a seat receives must
admit the true deal (so every inference it draws is sound), and every
position the search bot samples must keep the facts: cards proven dead stay
dead, no seat holds a card lower than one it led in that suit, the passers
of a ``lead_passed`` hold only the stopped suit, and every hand has its size.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from bots.sdk import TableState
from bots.search.bot import SearchBot
from bots.search.knowledge import DEAD_SLOT, Knowledge, mask_of
from bots.search.sampler import DealError, DealProblem, fits, sample_deal
from engine import Card, Decision, Match, Rules, preset
from engine.events import CardPlayed, HandStarted, LeadPassed, RunStopped
from engine.position import build_match
from protocol.messages import MatchStart
from tests.bots.driver import build_request, rule_sets, to_protocol_event

# ---------------------------------------------------------------- the sampler alone


def test_an_unconstrained_deal_gives_each_slot_its_share() -> None:
    problem = DealProblem(tuple(range(30)), (10, 12, 8), (0, 0, 0))
    rng = random.Random(1)
    where: Counter[int] = Counter()
    for _ in range(600):
        dealt = sample_deal(problem, rng)
        assert fits(problem, dealt)
        where.update(slot for slot, cards in enumerate(dealt) if 0 in cards)
    # Card 0 goes to each slot in proportion to its size (10/30, 12/30, 8/30 of 600).
    assert 150 < where[0] < 250 and 190 < where[1] < 290 and 110 < where[2] < 210


def test_forbidden_cards_never_reach_their_slot() -> None:
    forbidden = (mask_of(range(0, 8)), mask_of(range(4, 12)), 0)
    problem = DealProblem(tuple(range(16)), (5, 5, 6), forbidden)
    rng = random.Random(2)
    for _ in range(300):
        assert fits(problem, sample_deal(problem, rng))


def test_a_deal_that_needs_cards_moved_along_is_found() -> None:
    # Slot 0 may hold cards 0 or 1, slot 1 cards 1 or 2, slot 2 cards 0 or 2: dealing
    # card 0 to slot 2 and card 1 to slot 1 leaves card 2 nowhere to go unless card 1
    # moves on to slot 0.  Exactly two deals fit; both must come up.
    everything = mask_of(range(3))
    problem = DealProblem(
        (0, 1, 2),
        (1, 1, 1),
        (everything ^ mask_of([0, 1]), everything ^ mask_of([1, 2]), everything ^ mask_of([0, 2])),
    )
    seen = set()
    rng = random.Random(3)
    for _ in range(200):
        dealt = sample_deal(problem, rng)
        assert fits(problem, dealt)
        seen.add(tuple(cards[0] for cards in dealt))
    assert seen == {(0, 1, 2), (1, 2, 0)}


def test_an_impossible_problem_says_so() -> None:
    with pytest.raises(DealError):
        DealProblem((0, 1, 2), (1, 1), (0, 0))  # three cards, room for two
    both = mask_of([0, 1])
    with pytest.raises(DealError):
        sample_deal(DealProblem((0, 1), (1, 1), (both, 0)), random.Random(0))


# ---------------------------------------------------------------- knowledge from real matches

CHANGE_RULES = [
    ("new-market", preset("new-market")),  # change_or_pass: lead_passed events
    ("stops", preset("stops")),  # change_or_same, aces low
    ("boodle+change_or_same", preset("boodle").with_options({"lead_suit": "change_or_same"})),
]
SETS = rule_sets() + CHANGE_RULES


def start_message(rules: Rules, players: int, seat: int) -> MatchStart:
    return MatchStart(
        match_id="sampling",
        seat=seat,
        players=players,
        names=["bot"] * players,
        rules=dict(rules.to_dict()),  # type: ignore[arg-type]
        chips=[rules.starting_chips] * players,
        move_time_ms=1000,
        time_bank_ms=0,
    )


def check_facts(match: Match, seat: int, sampled: Match, request_sizes: list[int]) -> None:
    """The sampled world keeps every public fact of the real one."""
    assert list(sampled.hand_sizes()) == request_sizes
    assert sampled.hand_of(seat) == match.hand_of(seat)
    leads: list[CardPlayed] = []
    passes: list[tuple[int, int, int]] = []
    proven_dead: list[Card] = []
    suit = -1
    for event in match.events(viewer=seat):  # the current hand's are kept
        if isinstance(event, HandStarted):
            leads, passes, proven_dead = [], [], []
        elif isinstance(event, RunStopped):
            suit = event.card.suit
            if event.cause == "dead" and event.missing is not None:
                proven_dead.append(event.missing)
        elif isinstance(event, CardPlayed) and event.lead:
            leads.append(event)
        elif isinstance(event, LeadPassed):
            passes.append((event.from_seat, event.to_seat, suit))
    dead = set(sampled.dead_hand())
    assert all(card in dead for card in proven_dead), "a card a stop proved dead is not dead"
    order = match.rules.rank_order
    for lead in leads:
        held = sampled.hand_of(lead.seat)
        lower = [
            c
            for c in held
            if c.suit == lead.card.suit and order.position(c.rank) < order.position(lead.card.rank)
        ]
        assert not lower, f"seat {lead.seat} led {lead.card} but holds {lower}"
    for start, end, stopped in passes:
        s = start
        while s != end:
            if s != seat and sampled.live[s]:
                assert all(c.suit == stopped for c in sampled.hand_of(s))
            s = (s + 1) % match.players


@pytest.mark.parametrize(("label", "rules"), SETS, ids=[label for label, _ in SETS])
def test_knowledge_admits_the_truth_and_samples_keep_the_facts(label: str, rules: Rules) -> None:
    checked = 0
    for players, seed in ((3, 1), (5, 2), (4, 3)):
        short = rules.with_options({"hand_limit": 5})
        match = Match(short, players, seed)
        bots = [SearchBot(seed=s, log=lambda _text: None) for s in range(players)]
        for index, bot in enumerate(bots):
            bot.on_match_start(start_message(short, players, index), TableState())
        cursors = [0] * players
        rng = random.Random(seed)
        request_id = 0
        while not match.is_over:
            for viewer, bot in enumerate(bots):
                events = match.events(viewer=viewer, since=cursors[viewer])
                cursors[viewer] = match.event_count()
                converted = [to_protocol_event(e, viewer) for e in events]
                bot.on_events([e for e in converted if e is not None], TableState())
            seat = match.current_seat()
            assert seat is not None
            if match.decision is not Decision.STAKE:
                request_id += 1
                request = build_request(match, seat, request_id)
                knowledge = bots[seat].knowledge
                assert isinstance(knowledge, Knowledge)
                problem, slots = knowledge.deal_problem(
                    [c for c in match.hand_of(seat)], request.hand_sizes
                )
                truth = [
                    [int(c) for c in match.dead_hand() if not knowledge.known_dead() >> c & 1]
                    if slot == DEAD_SLOT
                    else [int(c) for c in match.hand_of(slot)]
                    for slot in slots
                ]
                assert fits(problem, truth), "the true deal breaks a constraint"
                draw = bots[seat].sampler(request)
                for _ in range(2):
                    sampled = build_match(draw(rng))  # check=True: a whole, valid position
                    check_facts(match, seat, sampled, request.hand_sizes)
                    assert sampled.legal_actions() == match.legal_actions()
                checked += 1
            match.apply(rng.choice(match.legal_actions()))
    assert checked > 25  # decisions checked; how many depends on the random game path
