"""The search's playout policy: it reads the engine right, plays every preset, and leads well.

``bots.search.playout`` reads the engine's private bit masks for speed; the
first test holds that reading to the public API at every lead of many
matches, so a change of the engine's layout fails here and not in a league.
"""

from __future__ import annotations

import random

from bots.search.playout import (
    LeadCache,
    PolicyParams,
    boodle_limits,
    lead_value,
    lead_view,
    policy_lead,
    rollout,
    starter_lead,
)
from engine import Deal, Match, preset
from engine.actions import Decision, Stakes
from engine.cards import Card
from tests.bots.driver import rule_sets


def even(rules_cards: int, total: int) -> Stakes:
    base, extra = divmod(total, rules_cards)
    return Stakes(tuple(base + (1 if i < extra else 0) for i in range(rules_cards)))


def test_the_policys_view_of_the_engine_agrees_with_the_public_api() -> None:
    leads = 0
    for seed, (_label, rules) in enumerate(rule_sets()):
        match = Match(rules.with_options({"hand_limit": 3}), 4, seed)
        rng = random.Random(seed)
        while not match.is_over:
            if match.decision is Decision.LEAD:
                seat = match.current_seat()
                assert seat is not None
                hand, played, stacks, _boodle_at, to_pos, legal = lead_view(match)
                assert {to_pos[card] for card in match.hand_of(seat)} == {
                    code for code in range(52) if hand >> code & 1
                }
                assert {to_pos[card] for card in match.played_cards()} == {
                    code for code in range(52) if played >> code & 1
                }
                assert list(stacks) == list(match.boodle_stacks)
                assert list(legal) == match.legal_actions()
                match.apply(policy_lead(match, rng.random, PolicyParams()))
                leads += 1
            else:
                match.apply(match.legal_actions()[0])
    assert leads > 100


def test_policy_playouts_finish_every_rule_set_and_keep_every_chip() -> None:
    for seed, (_label, rules) in enumerate(rule_sets()):
        match = Match(rules.with_options({"hand_limit": 4}), 5, seed)
        total = match.total_chips()
        stake = even(len(rules.boodle_cards), rules.stake_total)
        rollout(match, random.Random(seed), stake, PolicyParams(epsilon=0.2))
        assert match.is_over
        assert match.total_chips() == total


def codes(*cards: str) -> int:
    return sum(1 << Card.parse(card) for card in cards)  # aces high: code = card


def test_the_policy_takes_a_stack_with_its_run_and_avoids_feeding_a_rival() -> None:
    rules = preset("boodle")  # boodle cards AS KH QC JD, aces high
    match = Match(rules, 3, 1)
    boodle_at = match._boodle_at
    stacks = [0, 0, 0, 5]  # 5 chips on JD

    def value(lead: str, hand: int, played: int = 0) -> float:
        return lead_value(Card.parse(lead), hand, played, stacks, boodle_at, 0.25, 2.0)

    hand = codes("2C", "3C", "4C", "9D", "TD", "JD")
    assert value("9D", hand) > value("2C", hand)  # same run length; the diamonds take JD
    # A diamond lead that climbs to a rival's JD is worse than a club lead like it.
    hand = codes("2C", "2D")
    assert value("2C", hand) > value("2D", hand)
    # Without boodle chips in play it is tracker's score: run length and the lead back.
    stacks[:] = [0, 0, 0, 0]
    hand = codes("5H", "6H", "7H", "2S")
    assert value("5H", hand) == 3 + 2.0 * 0.25
    assert value("5H", hand, played=codes("8H")) == 3 + 2.0


def test_the_policy_leads_only_legal_cards_of_a_scripted_deal() -> None:
    deal = Deal.of([["2H", "3H", "4H", "AS"], ["5H", "2C"], ["9H", "2D"]])
    match = Match(preset("boodle"), 3, 1, dealer=2, deals=[deal])
    assert match.decision is Decision.LEAD
    for draw in (0.0, 0.5, 0.99):
        assert policy_lead(match, lambda draw=draw: draw, PolicyParams()) in match.legal_actions()


def test_the_cached_lead_is_the_starters_lead_on_every_position_and_every_repeat() -> None:
    # Two boodle layouts: one card per suit (the default) and two in one suit, none in another.
    for cards in ((12, 24, 36, 48), (3, 12, 16, 40)):
        boodle_at = [-1] * 52
        for index, code in enumerate(cards):
            boodle_at[code] = index
        limits = boodle_limits(boodle_at)
        cache = LeadCache(boodle_at, 2.0, limits)
        rng = random.Random(len(cards) + cards[0])
        positions = []
        for _ in range(400):
            codes = rng.sample(range(52), 30)
            hand = sum(1 << code for code in codes[:10])
            gone = sum(1 << code for code in codes[10 : 10 + rng.randrange(20)])
            stacks = [rng.choice((0, 0, 3, 7, 25, 1 << 21)) for _ in cards]
            dead = rng.choice((0.0, 0.2, 0.25, 1 / 3))
            positions.append((hand, gone, stacks, dead))
        for hand, gone, stacks, dead in positions * 2:  # the second pass answers from the cache
            expected = starter_lead(hand, gone, stacks, boodle_at, dead, 2.0, limits)
            assert cache.lead(hand, gone, stacks, dead) == expected
        assert 0 < cache.size <= 4 * len(positions)  # a suit per entry; repeats add none
