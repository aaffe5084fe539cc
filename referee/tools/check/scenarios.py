"""The scripted scenarios, and the random and secretly dealt ones built from them.

Each ``Scenario`` fixes the rules, the seat, the first dealer and (for the
awkward cases) the deal itself, so that what it promises (``Expect``) happens
whatever the bot chooses.  ``SCENARIOS`` is every scripted one, in the order
they run on the bot's one process; ``secret_scenarios`` deals them from a key
for a competition's admission, and ``random_scenarios`` adds matches under the
user's rules against random opponents.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence
from typing import Final

from engine import CARDS, Deal, Rules, preset
from referee.match.dealkey import DealKey
from referee.tools.check.expectations import (
    Expect,
    asked,
    every_lead_single,
    never_asked,
    passed_lead_changes_suit,
    stopped_at_top_by_king,
    told,
)
from referee.tools.check.opponents import Policy, auctioneer, by_default, hang_up, random_policy


@dataclasses.dataclass(frozen=True)
class Scenario:
    """One scripted match: the bot in ``seat``, scripted opponents everywhere else."""

    name: str
    about: str
    rules: Rules
    players: int
    seat: int
    dealer: int | None  # None: the seed chooses, as in a league
    expect: tuple[Expect, ...]
    deals: tuple[Deal, ...] = ()
    seed: int = 1
    opponents: Mapping[int, Policy] = dataclasses.field(default_factory=dict)

    def policy(self, seat: int) -> Policy:
        return self.opponents.get(seat, by_default)


def deal(hands: Mapping[int, str], dead: str, rest: Sequence[int] = (), players: int = 3) -> Deal:
    """Seats in ``hands`` get exactly those cards and the dead hand ``dead``; the cards left
    over are dealt one at a time to the seats in ``rest`` (to the dead hand if it is empty)."""
    given = {seat: cards.split() for seat, cards in hands.items()}
    dead_cards = dead.split()
    used = {card for cards in given.values() for card in cards} | set(dead_cards)
    left = [str(card) for card in CARDS if str(card) not in used]
    if not rest:
        dead_cards += left
        left = []
    for index, card in enumerate(left):
        given.setdefault(rest[index % len(rest)], []).append(card)
    return Deal.of([given.get(seat, []) for seat in range(players)], dead_cards)


def _rules(name: str, **options: object) -> Rules:
    return preset(name).with_options(options)


# Shared by several scenarios, as one object each (an ``Expect`` compares by identity).
LEAD: Final = asked("lead")
STAKE: Final = asked("stake")


def _scenarios() -> tuple[Scenario, ...]:
    return (
        *_preset_scenarios(),
        *_dead_hand_scenarios(),
        *_awkward_plays(),
        *_awkward_seats(),
    )


def _preset_scenarios() -> tuple[Scenario, ...]:
    """Every preset, played from a seeded deal for two hands."""
    return (
        Scenario(
            "boodle",
            "boodle preset, 8 seats, two hands: fixed antes",
            _rules("boodle", hand_limit=2),
            players=8,
            seat=3,
            dealer=2,
            seed=11,
            expect=(LEAD, told("hand_ended")),
        ),
        Scenario(
            "michigan",
            "michigan preset: no dead hand",
            _rules("michigan", hand_limit=2),
            players=4,
            seat=1,
            dealer=0,
            seed=12,
            expect=(LEAD, told("cards_dealt", dead_hand_size=0)),
        ),
        Scenario(
            "new-market",
            "new-market preset: stakes of 10, change_or_pass, flat payment",
            _rules("new-market", hand_limit=2),
            players=4,
            seat=0,
            dealer=3,
            seed=13,
            expect=(STAKE, LEAD),
        ),
        Scenario(
            "newmarket",
            "newmarket preset, 5 seats: stakes of 10 from 20 chips",
            _rules("newmarket", hand_limit=2),
            players=5,
            seat=4,
            dealer=3,
            seed=14,
            expect=(STAKE, LEAD),
        ),
        Scenario(
            "stops",
            "stops preset: aces low, stakes of 4, a kitty, change_or_same",
            _rules("stops", hand_limit=2),
            players=3,
            seat=2,
            dealer=1,
            seed=15,
            expect=(STAKE, LEAD),
        ),
    )


def _dead_hand_scenarios() -> tuple[Scenario, ...]:
    """The dealer's options on the dead hand."""
    return (
        Scenario(
            "exchange",
            "dead_hand_exchange=exchange: the bot deals, may swap for free",
            _rules("boodle", dead_hand_exchange="exchange", hand_limit=1),
            players=3,
            seat=0,
            dealer=0,
            seed=16,
            expect=(asked("dead_hand", ["exchange", "keep"]),),
        ),
        Scenario(
            "auction",
            "exchange_or_auction: the bot deals, then bids in an auction",
            _rules(
                "boodle",
                ante="free",
                stake_total=4,
                dead_hand_exchange="exchange_or_auction",
                hand_limit=2,
            ),
            players=3,
            seat=0,
            dealer=0,
            seed=17,
            opponents={1: auctioneer, 2: auctioneer},
            expect=(
                asked("dead_hand", ["auction", "exchange", "keep"]),
                asked("bid"),
                told("bids_revealed"),
                STAKE,
            ),
        ),
        Scenario(
            "purchase",
            "purchase: the bot deals and may buy the dead hand",
            _rules("stops", dead_hand_exchange="purchase", hand_limit=1),
            players=4,
            seat=1,
            dealer=1,
            seed=18,
            expect=(asked("dead_hand", ["buy", "keep"]), STAKE),
        ),
        Scenario(
            "purchase-broke",
            "purchase, but the bot cannot pay: a dead_hand with one choice",
            _rules("boodle", dead_hand_exchange="purchase", starting_chips=10, hand_limit=1),
            players=3,
            seat=2,
            dealer=2,
            seed=19,
            expect=(asked("dead_hand", ["keep"]),),
        ),
    )


def _awkward_plays() -> tuple[Scenario, ...]:
    """Awkward moments of play, from scripted deals: each happens whatever the bot chooses."""
    return (
        Scenario(
            "single-lead",
            "one suit: single legal leads, each stops at once, the last goes out",
            _rules("boodle", hand_limit=1),
            players=3,
            seat=0,
            dealer=2,
            deals=(deal({0: "2H 5H 9H KH"}, "3H 6H TH", rest=(1, 2)),),
            expect=(
                every_lead_single(),
                told("run_stopped", card="2H", cause="dead", missing="3H"),
                told("went_out", seat=0),
            ),
        ),
        Scenario(
            "lead-passed",
            "change_or_pass: the lead passes to the bot, which must change suit",
            _rules("new-market", hand_limit=1),
            players=3,
            seat=1,
            dealer=2,
            deals=(deal({0: "2C 3C 5C", 1: "6C 2H 4H 7S 8S"}, "4C 9D", rest=(2,)),),
            expect=(
                told("lead_passed", from_seat=0, to_seat=1),
                passed_lead_changes_suit("C"),
                STAKE,
            ),
        ),
        Scenario(
            "blocked",
            "change_or_pass: nobody can change suit, the hand is blocked",
            _rules("newmarket", hand_limit=1),
            players=3,
            seat=0,
            dealer=2,
            deals=(deal({0: "2C 5C 8C", 1: "3C 7C", 2: "4C 9C TC"}, dead=""),),
            expect=(told("hand_blocked"), told("pot_shared"), asked("lead", ["2C"])),
        ),
        Scenario(
            "aces-low",
            "stops, aces low: an ace is the lowest lead, runs stop at kings",
            _rules("stops", hand_limit=1),
            players=3,
            seat=0,
            dealer=2,
            deals=(deal({0: "QC KC QD KD AS 3S"}, "2S 4S", rest=(1, 2)),),
            expect=(
                asked("lead", ["QC", "QD", "AS"]),
                stopped_at_top_by_king(),
                told("kitty_won", seat=0),
            ),
        ),
    )


def _awkward_seats() -> tuple[Scenario, ...]:
    """A seat knocked out, a seat disqualified: the bot watches and is told."""
    return (
        Scenario(
            "eliminated",
            "never asked: the bot is knocked out and watches a hand",
            _rules("boodle", starting_chips=12, hand_limit=2),
            players=4,
            seat=0,
            dealer=0,
            seed=20,
            deals=(
                deal(
                    {1: "2C", 2: "5H 9S", 3: "6H TS", 0: "4D 5D 6D 7D 8D 9D TD JD QD KD"},
                    dead="3C",
                    players=4,
                ),
            ),
            expect=(
                told("went_out", seat=1),
                told("player_eliminated", seat=0),
                told("hand_started", hand_number=2),
                never_asked(),
            ),
        ),
        Scenario(
            "opponent-lost",
            "an opponent hangs up: the bot is told seat_disqualified",
            _rules("stops", hand_limit=1),
            players=3,
            seat=0,
            dealer=2,
            seed=21,
            opponents={1: hang_up},
            expect=(told("seat_disqualified", seat=1), STAKE, LEAD),
        ),
    )


SCENARIOS: Final = _scenarios()
"""Every scenario, in the order they run on the bot's one process."""


def secret_scenarios(
    key: DealKey | None = None, scenarios: Sequence[Scenario] = SCENARIOS
) -> tuple[Scenario, ...]:
    """``scenarios`` dealt from ``key`` (default: a fresh one) instead of their fixed seeds.

    For a competition's admission: the fixed seeds are in this open-source file,
    so a bot could tell the check's cards from a real table's and behave well only
    here.  Each scenario's seed becomes ``key.deal_seed(seed)``; what it promises
    holds whatever the cards (``tests/check/test_scenarios.py``).  Its scripted deals
    stay as written: they are the scenario.
    """
    deals = DealKey.generate() if key is None else key
    return tuple(
        dataclasses.replace(scenario, seed=deals.deal_seed(scenario.seed)) for scenario in scenarios
    )


def random_scenarios(
    rules: Rules, players: int, seed: int, count: int, label: str
) -> tuple[Scenario, ...]:
    """``count`` matches under ``rules``: the bot in seat 0, 1, ... in turn, random opponents.

    Every match seed and every opponent's choices derive from ``seed``, so the
    same arguments replay the same matches against the same bot replies.
    """
    draw = random.Random(seed)
    scenarios = []
    for number in range(1, count + 1):
        match_seed = draw.randrange(1 << 31)
        seat = (number - 1) % players
        opponents: dict[int, Policy] = {
            other: random_policy(random.Random(f"{match_seed}/{other}"))
            for other in range(players)
            if other != seat
        }
        scenarios.append(
            Scenario(
                f"random-{number}",
                f"{label}, {players} seats, seat {seat}, match seed {match_seed}",
                rules,
                players=players,
                seat=seat,
                dealer=None,
                expect=(),
                seed=match_seed,
                opponents=opponents,
            )
        )
    return tuple(scenarios)
