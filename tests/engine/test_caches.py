"""The engine's shared caches and work done ahead never change a game.

Matches share what their rules and live seats decide (``_seatings_at``,
``_plan_of``): a league or a search bot plays many matches in one process,
some of them in threads (Dask workers).  Whatever ran before, or alongside,
the same seed and the same decisions must give the same game, card for card,
and the caches must stay bounded however many matches and rule sets pass.
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

from engine import Match, Outcome, Rules, preset
from engine import state as engine_state
from engine.cards import RankOrder
from engine.deal import Deal
from engine.events import CardsDealt, Event, cards_of_mask
from engine.playout import random_playout

# Each differs from the default in one value a table's seatings depend on
# (engine.state._table_of), so a seating kept under the wrong key shows.
# Few starting chips: seats are eliminated, and the seatings change mid-match.
_BASE = preset("boodle").with_options({"starting_chips": 14, "hand_limit": 40})
VARIANTS = [
    _BASE,
    _BASE.with_options({"ante_per_card": 2}),
    _BASE.with_options({"dealer_ante_per_card": 1}),
    _BASE.with_options({"kitty_ante": 1}),
    _BASE.with_options({"dead_hand": False}),
    _BASE.with_options({"dealing": "equal_hands"}),
    _BASE.with_options({"boodle_cards": "AS,KH"}),
]
# Every variant at the same table sizes, so that their seatings would meet under one key;
# five players, so that the match goes on after a seat is out.
GAMES = [
    (rules, players, 10 * number + players)
    for number, rules in enumerate(VARIANTS)
    for players in (4, 5)
]


# Four hands of 13 (no dead hand): a scripted deal.
HANDS = [[rank + suit for rank in "23456789TJQKA"] for suit in "CDHS"]


def forget_caches() -> None:
    engine_state._seatings_at.cache_clear()
    engine_state._clockwise.cache_clear()
    engine_state._holders_by_position.cache_clear()
    engine_state._PLANS.clear()


def random_game(game: tuple[Rules, int, int]) -> tuple[list[Event], Outcome]:
    rules, players, seed = game
    match = Match(rules, players, seed)
    random_playout(match, random.Random(seed).random)
    return match.events(), match.outcome()


def test_a_game_is_the_same_from_cold_caches_after_other_tables_and_in_threads() -> None:
    cold = []
    for game in GAMES:
        forget_caches()
        cold.append(random_game(game))
    reseated = [outcome for _events, outcome in cold if len(outcome.eliminated) >= 1]
    assert any(outcome.hands_played > outcome.eliminated[0][1] for outcome in reseated)
    # Warm: every table's seatings made by the others first, in reverse order.
    warm = [random_game(game) for game in reversed(GAMES)][::-1]
    assert warm == cold
    forget_caches()
    with ThreadPoolExecutor(max_workers=4) as pool:
        threaded = list(pool.map(random_game, GAMES * 3))
    assert threaded == cold * 3


def test_the_caches_stay_bounded_over_many_rule_sets_and_live_seats() -> None:
    """A long league or a search bot makes matches of ever new ``Rules`` objects."""
    forget_caches()
    for number in range(300):
        ante = 1 + number % 3
        # Each Rules is dropped after its match: a new one may take its id(), never its plan.
        rules = _BASE.with_options({"ante_per_card": ante, "starting_chips": 20 + number})
        match = Match(rules, 4, number)
        assert match.boodle_stacks == (3 * ante + 2,) * 4  # three antes and the dealer's
        assert match.chips[match.dealer] == 20 + number - 8
    assert 0 < len(engine_state._PLANS) <= 256
    for cache in (
        engine_state._seatings_at,
        engine_state._clockwise,
        engine_state._holders_by_position,
    ):
        info = cache.cache_info()
        assert info.maxsize is not None and info.currsize <= info.maxsize


def decisions_with_shuffles_ahead(game: tuple[Rules, int, int], every: int) -> Match:
    """The random game ``random_game`` plays, through the public API, with the next pack
    shuffled ahead (``prepare_next_deal``) at every ``every``-th decision."""
    rules, players, seed = game
    match = Match(rules, players, seed)
    draw = random.Random(seed).random
    decision = 0
    while not match.is_over:
        if decision % every == 0:
            match.prepare_next_deal()
        decision += 1
        legal = match.legal_actions()
        match.apply(legal[int(draw() * len(legal))])
    return match


def test_a_pack_shuffled_ahead_deals_the_same_game_card_for_card() -> None:
    # A referee shuffles the next pack while a bot thinks, whenever in the hand that is;
    # seats eliminated meanwhile (few chips) change who is dealt, never which pack.
    for game in [*GAMES, (_BASE.with_options({"rank_order": "aces_low"}), 4, 7)]:
        plain = decisions_with_shuffles_ahead(game, every=10**9)  # only at the first decision
        for every in (1, 3, 7):
            ahead = decisions_with_shuffles_ahead(game, every)
            assert ahead.events() == plain.events(), (game[1:], every)
            assert ahead.outcome() == plain.outcome()
    eliminated = [e for e in plain.events() if type(e).__name__ == "PlayerEliminated"]
    assert eliminated, "the last game should see seats eliminated"


def test_a_scripted_deal_is_dealt_as_scripted_after_a_shuffle_ahead() -> None:
    rules = preset("boodle")
    scripted = Match(rules, 4, 3, dealer=0, deals=[Deal.of(HANDS)])
    scripted.prepare_next_deal()  # hand 1 is scripted: nothing to shuffle
    dealt = [e for e in scripted.events() if isinstance(e, CardsDealt)]
    assert [list(map(str, hand or ())) for hand in dealt[0].hands] == HANDS


def test_cards_of_a_mask_are_those_of_a_card_by_card_decoding_under_both_rank_orders() -> None:
    draw = random.Random(5)
    for order in RankOrder:
        to_card = Match(preset("boodle").with_options({"rank_order": order}), 4, 1)._to_card
        masks = [0, (1 << 52) - 1] + [
            draw.getrandbits(52) & draw.getrandbits(52) for _ in range(2_000)
        ]
        for mask in masks:
            expected = tuple(sorted(to_card[code] for code in range(52) if mask >> code & 1))
            assert cards_of_mask(mask, to_card) == expected, (order, mask)
