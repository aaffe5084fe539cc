"""The lean playout plays the rest of a hand exactly as the engine does, draw for draw."""

from __future__ import annotations

import random

from bots.search.kernel import HandKernel
from bots.search.montecarlo import evaluate, utility
from bots.search.playout import PolicyParams, rollout
from engine import Match, preset
from engine.actions import Decision, Stakes
from engine.cards import Card
from engine.position import build_match, position_of
from tests.bots.driver import rule_sets


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
                    epsilons=[epsilon, 0.0, 1.0, 0.1], dead_size=len(position.dead_hand)
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
