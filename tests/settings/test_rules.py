"""One rules builder: a preset, options over it and a hand limit over both."""

from __future__ import annotations

import pytest

from engine import preset
from referee.settings.rules import RulesChoiceError, build_rules


def test_options_and_the_hand_limit_go_over_the_preset() -> None:
    rules = build_rules("newmarket", {"end_players": "2"}, 7)
    assert rules.end_players == 2 and rules.hand_limit == 7
    assert build_rules("newmarket", {}) == preset("newmarket")


def test_the_hand_limit_wins_over_the_same_option() -> None:
    assert build_rules("newmarket", {"hand_limit": 3}, 9).hand_limit == 9


@pytest.mark.parametrize(
    ("name", "options", "hand_limit", "part", "words"),
    [
        ("nonsense", {}, None, "preset", "unknown preset 'nonsense'"),
        ("newmarket", {"lead_sut": "any"}, None, "options", "unknown rule option 'lead_sut'"),
        ("newmarket", {"lead_suit": "sideways"}, None, "options", "lead_suit: 'sideways'"),
        ("newmarket", {}, 0, "hand_limit", "must be at least 1, got 0"),
    ],
)
def test_each_refusal_says_which_part_it_is_about(
    name: str, options: dict[str, object], hand_limit: int | None, part: str, words: str
) -> None:
    with pytest.raises(RulesChoiceError) as caught:
        build_rules(name, options, hand_limit)
    assert caught.value.part == part
    assert words in str(caught.value)
