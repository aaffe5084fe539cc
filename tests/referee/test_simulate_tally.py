"""``newmarket simulate`` counts the raw events to the same figures as the typed events."""

from __future__ import annotations

import random

import pytest

from engine import Match, Rules, preset
from referee.commands.simulate import Tally


@pytest.mark.parametrize(
    "rules",
    [
        preset("boodle").with_options({"hand_limit": 30}),
        preset("newmarket").with_options(
            {
                "lead_suit": "change_or_pass",
                "blocked_hand": "fewest_flat",
                "hand_limit": 40,
                "starting_chips": 500,
            }
        ),
        preset("stops").with_options({"dead_hand_exchange": "purchase", "hand_limit": 30}),
    ],
)
def test_the_raw_count_gives_the_typed_counts_figures(rules: Rules) -> None:
    typed, raw = Tally(rules.boodle_cards), Tally(rules.boodle_cards)
    pick = random.Random(4).random
    for seed in range(6):
        match = Match(rules, 3 + seed % 3, seed)
        while not match.is_over:
            legal = match.legal_actions()
            match.apply(legal[int(pick() * len(legal))])
        typed.count(match.events())
        raw.count_raw(match.raw_events())
    assert raw.summary() == typed.summary()
    assert raw.hands > 50 and sum(raw.stops.values()) > 0 and raw.loser_hands > 0
