"""The Newmarket rules engine: pure, standard library only.

Example::

    from engine import Match, preset
    match = Match(preset("boodle"), players=4, seed=7)
    while not match.is_over:
        match.apply(match.legal_actions()[0])
    print(match.outcome())
"""

from engine.actions import Action, Bid, DeadHandChoice, Decision, Stakes
from engine.cards import CARDS, Card, Rank, RankOrder, Suit, card_of, cards_text, parse_cards
from engine.deal import Deal
from engine.errors import (
    IllegalActionError,
    MalformedActionError,
    MalformedCardError,
    MatchOverError,
    NewmarketError,
    RulesError,
)
from engine.events import Event
from engine.observation import Observation
from engine.outcome import Outcome
from engine.presets import DEFAULT_PRESET, PRESET_SOURCES, PRESETS, preset
from engine.rules import (
    Ante,
    BlockedHand,
    DeadHandExchange,
    Dealing,
    LeadSuit,
    Payment,
    Rules,
)
from engine.state import MAX_PLAYERS, MIN_PLAYERS, Match

__all__ = [
    "CARDS",
    "DEFAULT_PRESET",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "PRESETS",
    "PRESET_SOURCES",
    "Action",
    "Ante",
    "Bid",
    "BlockedHand",
    "Card",
    "DeadHandChoice",
    "DeadHandExchange",
    "Deal",
    "Dealing",
    "Decision",
    "Event",
    "IllegalActionError",
    "LeadSuit",
    "MalformedActionError",
    "MalformedCardError",
    "Match",
    "MatchOverError",
    "NewmarketError",
    "Observation",
    "Outcome",
    "Payment",
    "Rank",
    "RankOrder",
    "Rules",
    "RulesError",
    "Stakes",
    "Suit",
    "card_of",
    "cards_text",
    "parse_cards",
    "preset",
]
