"""``engine.playout``: the search bots' fast path plays exactly the API's random match."""

from __future__ import annotations

import random

import pytest

from engine import PRESETS, Decision, Match, preset
from engine.playout import random_leads, random_playout


def api_random_match(match: Match, draw: random.Random) -> None:
    while not match.is_over:
        legal = match.legal_actions()
        match.apply(legal[int(draw.random() * len(legal))])


@pytest.mark.parametrize("name", PRESETS)
def test_a_random_playout_is_the_apis_random_match_card_for_card(name: str) -> None:
    rules = preset(name).with_options({"hand_limit": 12})
    for seed in range(6):
        players = 3 + seed % 4
        fast, slow = Match(rules, players, seed), Match(rules, players, seed)
        hands = random_playout(fast, random.Random(seed).random)
        api_random_match(slow, random.Random(seed))
        assert hands == slow.hands_played
        assert fast.events() == slow.events()
        assert fast.outcome() == slow.outcome()
        assert fast.total_chips() == slow.total_chips()


def test_random_leads_stop_at_other_decisions_and_after_the_hands_asked_for() -> None:
    rules = preset("boodle").with_options({"ante": "free", "hand_limit": 5})
    match = Match(rules, 4, 3)
    assert match.decision is Decision.STAKE
    assert random_leads(match, random.Random(0).random) == 0  # not a lead: nothing played
    while match.decision is Decision.STAKE:
        match.apply(match.legal_actions()[0])
    hand = match.hand_number
    assert random_leads(match, random.Random(0).random) > 0
    assert match.hands_played == hand and match.decision is Decision.STAKE
    # Fixed antes: no other decision comes, so ``hands`` is what stops it.
    fixed = Match(preset("boodle").with_options({"hand_limit": 9}), 4, 3)
    random_leads(fixed, random.Random(0).random, hands=2)
    assert fixed.hands_played == 2 and not fixed.is_over
    random_leads(fixed, random.Random(0).random)
    assert fixed.is_over
