"""Rule options from text, their validation, and the five presets (one per source text)."""

from __future__ import annotations

import re

import pytest

from engine import (
    DEFAULT_PRESET,
    PRESET_SOURCES,
    PRESETS,
    Ante,
    BlockedHand,
    Card,
    DeadHandExchange,
    Dealing,
    LeadSuit,
    Match,
    NewmarketError,
    Payment,
    RankOrder,
    Rules,
    RulesError,
    preset,
)
from engine.presets import preset_summary
from engine.rules import OPTION_NAMES

from .scripted import cards

ALL_OPTIONS = {
    "rank_order",
    "boodle_cards",
    "ante",
    "ante_per_card",
    "dealer_ante_per_card",
    "stake_total",
    "kitty_ante",
    "starting_chips",
    "dealing",
    "dead_hand",
    "dead_hand_exchange",
    "purchase_fee",
    "lead_suit",
    "payment",
    "blocked_hand",
    "end_players",
    "hand_limit",
}


def test_every_rules_md_option_exists_and_is_documented() -> None:
    assert set(OPTION_NAMES) == ALL_OPTIONS
    docs = Rules.option_docs()
    assert set(docs) == ALL_OPTIONS
    assert all(docs[name].strip() for name in ALL_OPTIONS)
    assert [row[0] for row in Rules().describe()] == list(OPTION_NAMES)


# (option, text, the typed value it must become)
FROM_TEXT: list[tuple[str, str, object]] = [
    ("rank_order", "aces_low", RankOrder.ACES_LOW),
    ("rank_order", "aces_high", RankOrder.ACES_HIGH),
    ("boodle_cards", "AH,KH,QH,JH", cards("AH KH QH JH")),
    ("boodle_cards", "JS QD", cards("JS QD")),
    ("boodle_cards", "2C, 3D ,4H", cards("2C 3D 4H")),
    ("ante", "free", Ante.FREE),
    ("ante", "fixed", Ante.FIXED),
    ("ante_per_card", "2", 2),
    ("ante_per_card", "0", 0),
    ("dealer_ante_per_card", "3", 3),
    ("stake_total", "10", 10),
    ("kitty_ante", "1", 1),
    ("starting_chips", " 20 ", 20),
    ("dealing", "equal_hands", Dealing.EQUAL_HANDS),
    ("dealing", "round_robin", Dealing.ROUND_ROBIN),
    ("dead_hand", "false", False),
    ("dead_hand", "no", False),
    ("dead_hand", "off", False),
    ("dead_hand", "0", False),
    ("dead_hand", "FALSE", False),
    ("dead_hand", "true", True),
    ("dead_hand", "yes", True),
    ("dead_hand", "on", True),
    ("dead_hand", "1", True),
    ("dead_hand_exchange", "off", DeadHandExchange.OFF),
    ("dead_hand_exchange", "exchange", DeadHandExchange.EXCHANGE),
    ("dead_hand_exchange", "exchange_or_auction", DeadHandExchange.EXCHANGE_OR_AUCTION),
    ("dead_hand_exchange", "purchase", DeadHandExchange.PURCHASE),
    ("purchase_fee", "5", 5),
    ("lead_suit", "any", LeadSuit.ANY),
    ("lead_suit", "change_or_same", LeadSuit.CHANGE_OR_SAME),
    ("lead_suit", "change_or_pass", LeadSuit.CHANGE_OR_PASS),
    ("payment", "flat", Payment.FLAT),
    ("payment", "per_card", Payment.PER_CARD),
    ("blocked_hand", "nobody_pays", BlockedHand.NOBODY_PAYS),
    ("blocked_hand", "fewest_flat", BlockedHand.FEWEST_FLAT),
    ("blocked_hand", "fewest_difference", BlockedHand.FEWEST_DIFFERENCE),
    ("end_players", "3", 3),
    ("end_players", "1", 1),
    ("hand_limit", "10", 10),
]


@pytest.mark.parametrize(("option", "text", "value"), FROM_TEXT)
def test_every_option_is_settable_from_text(option: str, text: str, value: object) -> None:
    changed = Rules().with_options({option: text})
    assert getattr(changed, option) == value
    # every other option keeps its default
    for name in ALL_OPTIONS - {option}:
        assert getattr(changed, name) == getattr(Rules(), name)


def test_typed_values_are_accepted_too() -> None:
    changed = Rules().with_options(
        {
            "lead_suit": LeadSuit.CHANGE_OR_SAME,
            "dead_hand": False,
            "hand_limit": 7,
            "boodle_cards": ["AS", Card.parse("KS")],
        }
    )
    assert changed.lead_suit is LeadSuit.CHANGE_OR_SAME
    assert changed.dead_hand is False
    assert changed.hand_limit == 7
    assert changed.boodle_cards == cards("AS KS")


def test_with_options_leaves_the_original_alone() -> None:
    base = Rules()
    base.with_options({"payment": "flat"})
    assert base.payment is Payment.PER_CARD


def test_to_dict_and_from_dict_round_trip() -> None:
    for name in PRESETS:
        rule_set = preset(name)
        data = rule_set.to_dict()
        assert Rules.from_dict(data) == rule_set
    assert Rules().to_dict()["boodle_cards"] == ["AS", "KH", "QC", "JD"]
    assert Rules().to_dict()["lead_suit"] == "any"


# (option, bad text): each must raise RulesError naming the option.
INVALID: list[tuple[str, object]] = [
    ("rank_order", "aces"),
    ("rank_order", "ACES_LOW"),
    ("boodle_cards", "10H,KH"),
    ("boodle_cards", "AS,as"),
    ("boodle_cards", ""),
    ("boodle_cards", "AS,KH,AS"),
    ("boodle_cards", 5),
    ("ante", "fix"),
    ("ante_per_card", "one"),
    ("ante_per_card", "-1"),
    ("ante_per_card", "1.5"),
    ("ante_per_card", True),
    ("dealer_ante_per_card", "-2"),
    ("dealer_ante_per_card", "x"),
    ("stake_total", "0"),
    ("stake_total", "ten"),
    ("kitty_ante", "-1"),
    ("kitty_ante", ""),
    ("starting_chips", "0"),
    ("starting_chips", "lots"),
    ("dealing", "round-robin"),
    ("dead_hand", "maybe"),
    ("dead_hand", "2"),
    ("dead_hand_exchange", "auction"),
    ("dead_hand_exchange", "buy"),
    ("purchase_fee", "0"),
    ("purchase_fee", "-4"),
    ("lead_suit", "change"),
    ("lead_suit", "same"),
    ("payment", "per card"),
    ("blocked_hand", "fewest"),
    ("end_players", "0"),
    ("end_players", "8"),
    ("hand_limit", "0"),
    ("hand_limit", "-1"),
]


@pytest.mark.parametrize(("option", "value"), INVALID)
def test_invalid_values_name_the_option(option: str, value: object) -> None:
    with pytest.raises(RulesError, match=re.escape(option)):
        Rules().with_options({option: value})


def test_unknown_option_is_named() -> None:
    with pytest.raises(RulesError, match="aces_high_please"):
        Rules().with_options({"aces_high_please": "true"})


@pytest.mark.parametrize(
    "kwargs",
    [
        {"lead_suit": "any"},
        {"rank_order": "aces_low"},
        {"dead_hand": "yes"},
        {"boodle_cards": ()},
        {"kitty_ante": -1},
        {"hand_limit": 0},
    ],
)
def test_direct_construction_is_validated(kwargs: dict[str, object]) -> None:
    option = next(iter(kwargs))
    with pytest.raises(RulesError, match=re.escape(option)):
        Rules(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("base", "options", "named"),
    [
        # equal hands put the over-cards in the dead hand, so there must be one
        ("boodle", {"dealing": "equal_hands", "dead_hand": "false"}, "dealing"),
        ("new-market", {"dead_hand": "false"}, "dealing"),
        # swapping with the dead hand needs a dead hand
        ("boodle", {"dead_hand_exchange": "exchange", "dead_hand": "false"}, "dead_hand_exchange"),
        ("michigan", {"dead_hand_exchange": "exchange_or_auction"}, "dead_hand_exchange"),
        ("michigan", {"dead_hand_exchange": "purchase"}, "dead_hand_exchange"),
        # fixed ante: the dealer's 2 per card on 4 cards is 8 chips; 7 cannot pay it
        ("boodle", {"starting_chips": "7"}, "starting_chips"),
        ("boodle", {"starting_chips": "3"}, "starting_chips"),
        ("boodle", {"dealer_ante_per_card": "5", "starting_chips": "19"}, "starting_chips"),
        # free placement of 10: 9 chips cannot pay it
        ("newmarket", {"starting_chips": "9"}, "starting_chips"),
        # 4 spread + 1 kitty = 5
        ("stops", {"starting_chips": "4"}, "starting_chips"),
    ],
)
def test_invalid_combinations_name_the_option(
    base: str, options: dict[str, object], named: str
) -> None:
    with pytest.raises(RulesError, match=re.escape(named)):
        preset(base).with_options(options)


def test_starting_chips_just_enough_for_the_largest_stake_is_accepted() -> None:
    assert Rules().with_options({"starting_chips": "8"}).starting_chips == 8
    assert (
        Rules().with_options({"dealer_ante_per_card": "5", "starting_chips": "20"}).starting_chips
        == 20
    )
    assert preset("stops").with_options({"starting_chips": "5"}).starting_chips == 5
    assert preset("newmarket").with_options({"starting_chips": "10"}).starting_chips == 10


def test_stake_required() -> None:
    boodle = Rules()
    assert boodle.stake_required(is_dealer=False) == 4
    assert boodle.stake_required(is_dealer=True) == 8
    stops = preset("stops")
    assert stops.stake_required(is_dealer=False) == 5
    assert stops.stake_required(is_dealer=True) == 5
    two_cards = Rules().with_options({"boodle_cards": "AS,KH", "kitty_ante": "2"})
    assert two_cards.stake_required(is_dealer=False) == 1 * 2 + 2
    assert two_cards.stake_required(is_dealer=True) == 2 * 2 + 2


@pytest.mark.parametrize("players", [0, 1, 2, 9, 12])
def test_players_outside_3_to_8_are_rejected(players: int) -> None:
    with pytest.raises(NewmarketError, match="players"):
        Match(Rules(), players, seed=1)


@pytest.mark.parametrize("players", [3, 4, 5, 6, 7, 8])
def test_players_3_to_8_are_accepted(players: int) -> None:
    match = Match(Rules(), players, seed=1)
    assert match.players == players
    assert not match.is_over


def test_end_players_must_be_fewer_than_players() -> None:
    with pytest.raises(NewmarketError, match="end_players"):
        Match(Rules().with_options({"end_players": "3"}), 3, seed=1)
    assert Match(Rules().with_options({"end_players": "3"}), 4, seed=1).players == 4


def test_dealer_must_be_at_the_table() -> None:
    with pytest.raises(NewmarketError, match="dealer"):
        Match(Rules(), 3, seed=1, dealer=3)


# -- presets -------------------------------------------------------------------------

DEFAULTS: dict[str, object] = {
    "rank_order": "aces_high",
    "boodle_cards": ["AS", "KH", "QC", "JD"],
    "ante": "fixed",
    "ante_per_card": 1,
    "dealer_ante_per_card": 2,
    "stake_total": 6,
    "kitty_ante": 0,
    "starting_chips": 40,
    "dealing": "round_robin",
    "dead_hand": True,
    "dead_hand_exchange": "off",
    "purchase_fee": 4,
    "lead_suit": "any",
    "payment": "per_card",
    "blocked_hand": "nobody_pays",
    "end_players": 2,
    "hand_limit": 200,
}

# What each source text says, as options (RULES.md and the preset docstrings).
EXPECTED_PRESETS: dict[str, dict[str, object]] = {
    "boodle": {},
    "michigan": {"boodle_cards": ["AH", "KH", "QH", "JH"], "dead_hand": False},
    "new-market": {
        "ante": "free",
        "stake_total": 10,
        "dealing": "equal_hands",
        "lead_suit": "change_or_pass",
        "payment": "flat",
        "blocked_hand": "fewest_flat",
    },
    "newmarket": {
        "boodle_cards": ["AC", "KH", "QD", "JS"],
        "ante": "free",
        "stake_total": 10,
        "starting_chips": 20,
        "dealing": "equal_hands",
        "lead_suit": "change_or_pass",
        "blocked_hand": "fewest_difference",
    },
    "stops": {
        "rank_order": "aces_low",
        "ante": "free",
        "stake_total": 4,
        "kitty_ante": 1,
        "lead_suit": "change_or_same",
        "end_players": 1,
        "hand_limit": 10,
    },
}

SEED_OF_PRESET = {
    "boodle": "seed 000",
    "michigan": "seed 001",
    "new-market": "seed 002",
    "newmarket": "seed 003",
    "stops": "seed 004",
}


def test_there_is_one_preset_per_source_text() -> None:
    assert set(PRESETS) == set(EXPECTED_PRESETS)
    assert set(PRESET_SOURCES) == set(PRESETS)
    assert DEFAULT_PRESET == "boodle"
    assert preset(DEFAULT_PRESET) == Rules()


@pytest.mark.parametrize("name", sorted(EXPECTED_PRESETS))
def test_each_preset_builds_the_options_of_its_source(name: str) -> None:
    expected = {**DEFAULTS, **EXPECTED_PRESETS[name]}
    assert preset(name).to_dict() == expected


@pytest.mark.parametrize("name", sorted(SEED_OF_PRESET))
def test_each_preset_docstring_cites_its_seed(name: str) -> None:
    doc = PRESETS[name].__doc__ or ""
    assert SEED_OF_PRESET[name] in doc
    assert SEED_OF_PRESET[name] in PRESET_SOURCES[name]
    assert preset_summary(name) == doc.strip().splitlines()[0]
    assert preset_summary(name)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_each_preset_starts_a_match(name: str) -> None:
    match = Match(preset(name), 4, seed=3)
    assert not match.is_over
    assert match.legal_actions()


def test_unknown_preset_is_an_error_naming_it_and_the_presets() -> None:
    with pytest.raises(RulesError, match="chicago") as error:
        preset("chicago")
    for name in PRESETS:
        assert name in str(error.value)


def test_free_stakes_with_too_many_placements_are_refused_naming_stake_total() -> None:
    from engine import RulesError, preset

    many_cards = "AS,KH,QC,JD,AH,KS,QD,JC"
    with pytest.raises(RulesError, match=r"^stake_total: 20 chips over 8 boodle cards"):
        preset("new-market").with_options({"stake_total": 20, "boodle_cards": many_cards})
    # 40 over the usual four cards is 12,341 placements: allowed.
    assert preset("new-market").with_options({"stake_total": 40}).stake_total == 40
