"""The lean playout plays the rest of a hand exactly as the engine does, draw for draw."""

from __future__ import annotations

import random

from bots.sdk import BotSession
from bots.search.kernel import HandKernel
from bots.search.montecarlo import evaluate, utility
from bots.search.playout import PolicyParams, dead_chance, rollout, starter_lead
from bots.starters.boodle import BoodleBot
from engine import Match, preset
from engine.actions import Decision, Stakes
from engine.cards import Card
from engine.position import build_match, position_of
from tests.bots.driver import BotEndpoint, InProcessBot, Tally, handshake, play_match, rule_sets


def test_the_kernel_ends_every_hand_as_the_engine_rollout_does() -> None:
    compared = 0
    rule_list = [rules for _label, rules in rule_sets() if HandKernel.applies(rules)]
    rule_list.append(preset("boodle").with_options({"rank_order": "aces_low", "payment": "flat"}))
    for number, rules in enumerate(rule_list):
        match = Match(rules.with_options({"hand_limit": 3}), 4, number)
        rng = random.Random(number)
        while not match.is_over:
            if match.decision is not Decision.LEAD:
                match.apply(match.legal_actions()[0])
                continue
            position = position_of(match)
            seat = position.to_act
            kernel = HandKernel(rules, position.players, position.live)
            root = kernel.load(position)
            for epsilon in (0.0, 0.3):
                params = PolicyParams(
                    epsilons=[epsilon, 0.0, 1.0, 0.1],
                    dead_size=len(position.dead_hand),
                    # What the search knows at a lead: the dead cards the stops have shown.
                    known_dead=match._dead_shown_by_stops(),
                    # With noise, the leader's later leads also see the whole dead hand
                    # (the search's later_sight): both paths must play it alike.
                    sight=seat if epsilon else -1,
                )
                for card in match.legal_actions():
                    draws = random.Random(compared)
                    lean = kernel.play(
                        root, seat, kernel.card_code(card), seat, draws.random, params
                    )
                    played = position.hand_number - 1
                    engine = build_match(position, check=False, hand_limit=played + 1)
                    engine.apply(card)
                    draws = random.Random(compared)
                    rollout(engine, draws, Stakes(()), params)
                    assert lean == utility(engine, seat), (rules, card)
                    compared += 1
            match.apply(match.legal_actions()[int(rng.random() * len(match.legal_actions()))])
    assert compared > 200


def test_the_search_scores_the_same_with_and_without_the_kernel() -> None:
    match = Match(preset("boodle"), 4, 11)
    while match.decision is not Decision.LEAD or len(match.legal_actions()) < 2:
        match.apply(match.legal_actions()[0])
    truth = position_of(match)
    leads: list[Card] = match.legal_actions()
    results = []
    for lean in (True, False):
        estimates, samples = evaluate(
            lambda _rng: truth,
            leads,
            truth.to_act,
            random.Random(3),
            deadline=float("inf"),
            max_samples=30,
            policy=PolicyParams(epsilon=0.2),
            lean=lean,
        )
        assert samples == 30
        results.append([estimate.values for estimate in estimates])
    assert results[0] == results[1]


def test_a_noiseless_playout_plays_a_hand_exactly_as_four_boodle_starters_do() -> None:
    # The playouts model every seat as the starter.  The starter counts a card gone
    # once a stop has shown it dead, so the playout must too: without that, one hand
    # in eleven of these went another way from its first lead.
    rules = preset("boodle").with_options({"hand_limit": 1})
    bots = [InProcessBot(BotSession(BoodleBot())) for _ in range(4)]
    for bot in bots:
        handshake(bot)
    seats: list[tuple[str, BotEndpoint]] = [(f"boodle{seat}", bot) for seat, bot in enumerate(bots)]
    for seed in range(60):
        root = Match(rules, 4, seed)
        assert root.decision is Decision.LEAD  # fixed antes: the hand starts with a lead
        position = position_of(root)
        kernel = HandKernel(rules, 4, position.live)
        start = kernel.load(position)
        seat = position.to_act
        hand = start.hands[seat]
        dead = dead_chance(len(position.dead_hand), 0, hand.bit_count(), 0)
        lead, _ = starter_lead(hand, 0, start.stacks, kernel.boodle_at, dead, 2.0, kernel.limits)
        params = PolicyParams(epsilon=0.0, dead_size=len(position.dead_hand))
        scores = [kernel.play(start, seat, lead, v, lambda: 1.0, params) for v in range(4)]
        end = play_match(seats, rules, seed, Tally())
        # Each score is the seat's chips plus an equal share of the stacks left over.
        left = {round(score - chips, 9) for score, chips in zip(scores, end.chips, strict=True)}
        assert len(left) == 1, (seed, scores, end.chips)
