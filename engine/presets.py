"""One named rule set per source text, plus the default.

The five source texts are cited by title, and by their number 000 to 004
(docs/rules.md lists them, with the rule digest):
000 "Boodle", 001 "Michigan (Boodle, Stops)" (translated from Russian),
002 "New Market", 003 "Newmarket", 004 "How to Play Newmarket" (a modern web
page).  Each preset is a function whose docstring cites its source and says
how each silent or unclear point was read.  ``PRESETS`` maps the name used on the
command line to the function; ``preset(name)`` builds the ``Rules``.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.cards import Card, RankOrder
from engine.errors import RulesError
from engine.rules import (
    Ante,
    BlockedHand,
    Dealing,
    LeadSuit,
    Payment,
    Rules,
)

DEFAULT_PRESET = "boodle"


def _cards(*texts: str) -> tuple[Card, ...]:
    return tuple(Card.parse(t) for t in texts)


def boodle() -> Rules:
    """Boodle: the main rules of "Boodle", seed 000 (the default).

    Aces high; every player antes 1 chip on each boodle card and the dealer 2;
    the whole pack is dealt to the players and one spare hand; any suit may be
    led after a stop; the one who goes out collects 1 chip per card held from
    each other player; a player who cannot pay the ante is out and their chips
    are divided among the rest; play continues until only 2 players are left.
    The boodle layout's picture is missing from seed 000, so the classic 1885
    set of seed 004 (A♠ K♥ Q♣ J♦) is used.  Seed 000 names no starting chips:
    40, the figure of seed 004.
    """
    return Rules()


def michigan() -> Rules:
    """Michigan: "Michigan (Boodle, Stops)", seed 001 (translated from Russian).

    Pay cards "T♥, K, A, B": the Ace, King, Queen and Jack of hearts, read as
    one suit as in seed 004's note on Michigan.  Each player bets on each card
    and the dealer doubles (fixed ante 1/2).  The pack is "equally distributed
    among all players", with no extra hand named: no dead hand, so runs stop
    only at the Ace or at a card already played.  Any suit after a stop.
    """
    return Rules(
        boodle_cards=_cards("AH", "KH", "QH", "JH"),
        ante=Ante.FIXED,
        dead_hand=False,
        dealing=Dealing.ROUND_ROBIN,
        lead_suit=LeadSuit.ANY,
        payment=Payment.PER_CARD,
    )


def new_market() -> Rules:
    """New Market: "New Market", seed 002.

    Each player stakes exactly 10 chips (free placement) on an Ace, King, Queen
    and Jack of different suits (A♠ K♥ Q♣ J♦ here); players get equal hands
    and the over-cards go to the dummy; after a stop the last player leads
    another suit, else the lead passes left (change_or_pass); the one who goes
    out receives 1 chip from each other player (flat); if no one goes out, the
    fewest cards wins 1 chip from each and equal fewest divide (fewest_flat).
    Starting chips are not given: 40.
    """
    return Rules(
        ante=Ante.FREE,
        stake_total=10,
        dealing=Dealing.EQUAL_HANDS,
        lead_suit=LeadSuit.CHANGE_OR_PASS,
        payment=Payment.FLAT,
        blocked_hand=BlockedHand.FEWEST_FLAT,
    )


def newmarket() -> Rules:
    """Newmarket: "Newmarket", seed 003.

    Boodle cards from its example: J♠ Q♦ K♥ A♣.  Each player has 10 counters to
    stake (free placement of 10) and 10 in reserve: 20 starting chips.  Cards
    "as evenly as possible" plus a dummy and spare cards: equal hands, the
    spare cards out of play with the dummy.  Another suit after a stop, else the
    lead passes left; going out collects 1 per card held; a blocked hand is won
    by the fewest cards and each rival pays the difference (David holds 3,
    Stewart and Sharon 5: each pays David 2).
    """
    return Rules(
        boodle_cards=_cards("AC", "KH", "QD", "JS"),
        ante=Ante.FREE,
        stake_total=10,
        starting_chips=20,
        dealing=Dealing.EQUAL_HANDS,
        lead_suit=LeadSuit.CHANGE_OR_PASS,
        payment=Payment.PER_CARD,
        blocked_hand=BlockedHand.FEWEST_DIFFERENCE,
    )


def stops() -> Rules:
    """Newmarket as played today: "How to Play Newmarket", seed 004 (a modern web page).

    Aces low (runs go A..K and stop at the King); the classic 1885 boodle set
    A♠ K♥ Q♣ J♦; each player antes 1 chip to a kitty and spreads 4 over the
    boodle cards; the whole pack is dealt with one dead hand; after a stop a
    different suit if possible, else the same (change_or_same); the one who
    goes out takes the kitty and 1 chip per card held from each opponent.
    About 40 chips each; a session of a set number of deals (10 here) or until
    all but one are out, the richest winning.
    """
    return Rules(
        rank_order=RankOrder.ACES_LOW,
        ante=Ante.FREE,
        stake_total=4,
        kitty_ante=1,
        starting_chips=40,
        dealing=Dealing.ROUND_ROBIN,
        lead_suit=LeadSuit.CHANGE_OR_SAME,
        payment=Payment.PER_CARD,
        end_players=1,
        hand_limit=10,
    )


PRESETS: dict[str, Callable[[], Rules]] = {
    "boodle": boodle,
    "michigan": michigan,
    "new-market": new_market,
    "newmarket": newmarket,
    "stops": stops,
}

PRESET_SOURCES: dict[str, str] = {
    "boodle": "seed 000 (Boodle), main rules; the default",
    "michigan": 'seed 001 ("Michigan (Boodle, Stops)", translated from Russian)',
    "new-market": "seed 002 (New Market)",
    "newmarket": "seed 003 (Newmarket)",
    "stops": 'seed 004 ("How to Play Newmarket", a modern web page)',
}


def preset(name: str) -> Rules:
    try:
        return PRESETS[name]()
    except KeyError:
        raise RulesError(f"unknown preset {name!r}; presets: {', '.join(PRESETS)}") from None


def preset_summary(name: str) -> str:
    """The first line of the preset's docstring."""
    doc = PRESETS[name].__doc__ or ""
    return doc.strip().splitlines()[0]
