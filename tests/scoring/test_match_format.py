"""``league.match``: the session the rules describe, or fixed-hands duplicate matches.

The ``newmarket`` preset (seed 003: 20 chips, a stake of 10) ends a session
after one hand in most matches; its leagues default to fixed hands.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from engine import preset
from referee.league.league_file import ConfigError, parse_config
from referee.scoring.duplicate import deep_chips
from referee.scoring.policies import POLICIES, play_match

BOTS = "".join(f'[[bots]]\nname = "b{i}"\ncommand = "lowest"\n' for i in range(4))


def config(league: str = "", rules: str = "") -> tuple[int, int]:
    text = f"[league]\nseed = 1\ntable_size = 4\n{league}\n[rules]\n{rules}\n{BOTS}"
    parsed = parse_config(text, Path("league.toml"))
    return parsed.rules.hand_limit, parsed.rules.starting_chips


def test_the_newmarket_preset_session_is_about_one_hand() -> None:
    hands = [
        play_match(preset("newmarket"), seed, [POLICIES["tracker"]] * 4).outcome().hands_played
        for seed in range(60)
    ]
    assert statistics.fmean(hands) < 2.0 and hands.count(1) > len(hands) // 2


def test_newmarket_leagues_default_to_fixed_hands_and_others_to_sessions() -> None:
    # one round of deals at a table of 4: 4 hands
    assert config(rules='preset = "newmarket"') == (4, deep_chips(preset("newmarket"), 4))
    assert config(league="hand_limit = 8", rules='preset = "newmarket"')[0] == 8
    assert config(league='match = "session"', rules='preset = "newmarket"') == (200, 20)
    assert config() == (200, 40)  # boodle: its own session
    assert config(league='match = "fixed_hands"')[1] == deep_chips(preset("boodle"), 4)


def test_fixed_hands_refuses_what_it_cannot_honour() -> None:
    with pytest.raises(ConfigError, match=r"league\.match"):
        config(league='match = "fixed_hands"', rules="options = { starting_chips = 30 }")
    with pytest.raises(ConfigError, match=r"league\.match"):
        config(league='match = "fixed_hands"\nformat = "bankroll"')
    with pytest.raises(ConfigError, match="'session'"):
        config(league='match = "duplicate"')
