"""The engine's shared caches (seatings by table, a plan per ``Rules``) never change a game.

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
from engine.events import Event
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
