"""Pruning in the search: a clearly trailing choice stops being played, and nothing else changes.

``evaluate`` drops a candidate once it trails the leader by ``PRUNE_Z``
standard errors of their sample-by-sample difference, so the time goes to
the close ones.  Because every candidate is played with the same random
numbers, the candidates still played score exactly what they would have
scored without pruning: the tests hold it to that, and to never dropping the
default choice (the starter's lead) or the leader.
"""

from __future__ import annotations

import random

from bots.search.bot import best, choose
from bots.search.montecarlo import Estimate, evaluate, prune
from bots.search.playout import PolicyParams
from engine import Match, preset
from engine.actions import Decision
from engine.cards import Card
from engine.position import Position, position_of


def estimate(name: str, values: list[float]) -> Estimate:
    return Estimate(Card.parse(name), total=sum(values), count=len(values), values=list(values))


def test_only_a_clearly_trailing_candidate_is_dropped_and_never_the_default() -> None:
    rng = random.Random(1)
    noise = [rng.gauss(0, 3) for _ in range(64)]
    default = estimate("2H", [n - 4 for n in noise])  # trails clearly, but is the default
    leader = estimate("2S", [n + rng.gauss(0, 0.5) for n in noise])
    close = estimate("2D", [n + rng.gauss(-0.1, 2) for n in noise])  # within its noise
    poor = estimate("2C", [n - 3 + rng.gauss(0, 0.5) for n in noise])
    kept = prune([default, leader, close, poor], 3.0)
    assert kept == [default, leader, close]
    assert poor.dropped and not any(e.dropped for e in kept)
    poor.total = 1e9  # a dropped candidate's mean (over fewer samples) is never the answer
    assert best([default, leader, close, poor]) is not poor


def test_the_candidates_still_played_score_exactly_as_without_pruning() -> None:
    compared = dropped = 0
    for seed in range(6):
        match = Match(preset("boodle"), 4, seed)
        while match.decision is not Decision.LEAD or len(match.legal_actions()) < 3:
            match.apply(match.legal_actions()[0])
        truth = position_of(match)

        def sample(_rng: random.Random, truth: Position = truth) -> Position:
            return truth

        runs = []
        for pruning in (0.0, 3.0):
            estimates, _samples = evaluate(
                sample,
                match.legal_actions(),
                truth.to_act,
                random.Random(seed),
                deadline=float("inf"),
                max_samples=160,
                policy=PolicyParams(epsilon=0.3),
                pruning=pruning,
            )
            runs.append(estimates)
        full, pruned = runs
        for whole, part in zip(full, pruned, strict=True):
            assert part.values == whole.values[: part.count]
            dropped += part.dropped
        assert not pruned[0].dropped
        assert choose(pruned, 1.0).action == choose(full, 1.0).action
        compared += 1
    assert compared == 6 and dropped > 0
