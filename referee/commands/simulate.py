"""``newmarket simulate``: random-decision matches in this process, and what they looked like.

    newmarket simulate --rules stops --players 5 --total-hands 2000 --seed 1 --option kitty_ante=2

It answers "what does this rule set play like?" before any bot exists: how
often each boodle card is won, how many cards the losers are left holding, why
runs stop, how often hands block, how long matches last.  The figures come
from the omniscient event log, not from the engine's internals, so they mean
the same as what a replay would show.

Matches are played one after another (seeds ``S``, ``S+1``, ...) until exactly
``--total-hands`` hands are done; the last match may be cut short, so the average
match length counts complete matches only.  Bad arguments are one line on
stderr and exit code 2.
"""

from __future__ import annotations

import dataclasses
import json
import random
import secrets
import time
from collections import Counter
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from rich.table import Table

from engine import (
    DEFAULT_PRESET,
    MAX_PLAYERS,
    MIN_PLAYERS,
    Card,
    Match,
    NewmarketError,
    Rules,
)
from engine.events import (
    E_BLOCKED,
    E_BOODLE,
    E_DEAL,
    E_HAND_END,
    E_RUN,
    E_STOP,
    STOP_DEAD,
    STOP_PLAYED,
    STOP_TOP,
    BoodleWon,
    CardsDealt,
    Event,
    HandBlocked,
    HandEnded,
    RunStopped,
)
from referee.commands.common import (
    DEFAULT_PLAYERS,
    AsJson,
    Players,
    RuleOptions,
    RulesName,
    Seed,
    UsageError,
    deprecated,
    fail,
    parse_options,
)
from referee.settings.rules import RulesChoiceError, build_rules
from referee.text.printing import print_whole

STOP_CAUSES = (STOP_TOP, STOP_DEAD, STOP_PLAYED)


@dataclasses.dataclass
class Tally:
    """What the simulation counts, hand by hand, from the events."""

    boodle_cards: tuple[Card, ...]
    hands: int = 0
    matches: int = 0
    complete_matches: int = 0
    complete_match_hands: int = 0
    blocked: int = 0
    loser_hands: int = 0  # (hand, seat) pairs of seats that did not win the hand
    loser_cards: int = 0  # cards those seats were left holding
    claims: Counter[Card] = dataclasses.field(default_factory=Counter)  # hands claimed in
    stops: Counter[str] = dataclasses.field(default_factory=Counter)
    seconds: float = 0.0

    def count(self, events: Sequence[Event]) -> None:
        dealt: tuple[int, ...] = ()
        for event in events:
            if isinstance(event, CardsDealt):
                dealt = event.hand_sizes
            elif isinstance(event, BoodleWon):
                self.claims[event.card] += 1  # each card is played once a hand
            elif isinstance(event, RunStopped):
                self.stops[event.cause] += 1
            elif isinstance(event, HandBlocked):
                self.blocked += 1
            elif isinstance(event, HandEnded):
                self.hands += 1
                for seat, hand in enumerate(event.hands):
                    if seat < len(dealt) and dealt[seat] and seat not in event.winners:
                        self.loser_hands += 1
                        self.loser_cards += len(hand)

    def count_raw(self, raws: Sequence[tuple[Any, ...]]) -> None:
        """``count`` on the engine's raw events (``Match.raw_events``): the same figures.

        The typed events cost more than playing the match (a ``CardPlayed`` per
        card, every hand's cards sorted at its end); these are the same events
        before typing, and only the few that are counted are read.
        """
        dealt: tuple[int, ...] = ()
        boodle = self.boodle_cards
        for raw in raws:
            kind = raw[0]
            if kind == E_RUN:
                continue
            if kind == E_STOP:
                self.stops[raw[2]] += 1
            elif kind == E_BOODLE:
                self.claims[boodle[raw[2]]] += 1
            elif kind == E_DEAL:
                dealt = raw[1]
            elif kind == E_BLOCKED:
                self.blocked += 1
            elif kind == E_HAND_END:
                self.hands += 1
                winners = raw[3]
                for seat, mask in enumerate(raw[1]):
                    if seat < len(dealt) and dealt[seat] and seat not in winners:
                        self.loser_hands += 1
                        self.loser_cards += mask.bit_count()

    def summary(self) -> dict[str, object]:
        hands = max(self.hands, 1)
        return {
            "hands": self.hands,
            "matches": self.matches,
            "complete_matches": self.complete_matches,
            "seconds": round(self.seconds, 3),
            "hands_per_second": round(self.hands / self.seconds, 1) if self.seconds else None,
            "boodle_claimed_per_hand": {
                str(card): round(self.claims[card] / hands, 4) for card in self.boodle_cards
            },
            "cards_left_per_loser": (
                round(self.loser_cards / self.loser_hands, 3) if self.loser_hands else None
            ),
            "stops_per_hand": {cause: round(self.stops[cause] / hands, 3) for cause in STOP_CAUSES},
            "hands_blocked": self.blocked,
            "average_match_length": (
                round(self.complete_match_hands / self.complete_matches, 2)
                if self.complete_matches
                else None
            ),
        }


def simulate(rules: Rules, players: int, hands: int, seed: int) -> Tally:
    """Play random-decision matches until ``hands`` hands are done."""
    tally = Tally(rules.boodle_cards)
    pick = random.Random(seed).random
    match_seed = seed
    played = 0
    while played < hands:
        start = time.perf_counter()
        match = Match(rules, players, match_seed)
        match_seed += 1
        while not match.is_over and match.hands_played < hands - played:
            legal = match.legal_actions()
            match.apply(legal[int(pick() * len(legal))])
        tally.seconds += time.perf_counter() - start
        tally.matches += 1
        if match.is_over:
            tally.complete_matches += 1
            tally.complete_match_hands += match.hands_played
        played += match.hands_played
        tally.count_raw(match.raw_events())
    return tally


def number(value: object, digits: int = 2) -> str:
    """A figure for the table; ``—`` when there is none (e.g. no complete match)."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def summary_table(summary: dict[str, object], title: str) -> Table:
    table = Table(title=title, title_justify="left", show_header=False)
    table.add_column("figure", style="bold")
    table.add_column("value", justify="right")

    table.add_row("hands", str(summary["hands"]))
    table.add_row("hands/s", number(summary["hands_per_second"], 0))
    table.add_row(
        "matches played",
        f"{summary['matches']} ({summary['complete_matches']} complete)",
    )
    table.add_row("average match length (hands)", number(summary["average_match_length"]))
    claimed = summary["boodle_claimed_per_hand"]
    assert isinstance(claimed, dict)
    for card_text, rate in claimed.items():
        card = Card.parse(card_text)
        table.add_row(f"boodle {card.pretty} claimed", f"{rate:.1%} of hands")
    table.add_row("cards left in a loser's hand", number(summary["cards_left_per_loser"]))
    stops = summary["stops_per_hand"]
    assert isinstance(stops, dict)
    for cause, rate in stops.items():
        table.add_row(f"stops per hand: {cause}", number(rate))
    table.add_row("hands blocked", str(summary["hands_blocked"]))
    return table


def simulate_command(
    rules_name: RulesName = DEFAULT_PRESET,
    players: Players = DEFAULT_PLAYERS,
    hands: Annotated[
        int,
        typer.Option(
            "--total-hands",
            metavar="N",
            help="Hands to play in total, over as many matches as that takes.",
        ),
    ] = 1000,
    old_hands: Annotated[
        int | None, typer.Option("--hands", hidden=True, help="The old name of --total-hands.")
    ] = None,
    seed: Seed = None,
    option: RuleOptions = None,
    as_json: AsJson = False,
) -> None:
    """Play random-decision matches in-process and summarise how the rules play.

    The hand limit of each match is the rules' (--option hand_limit=N).
    """
    if old_hands is not None:
        deprecated(f"--hands {old_hands}", f"--total-hands {old_hands}")
        hands = old_hands
    if seed is None:
        seed = secrets.randbelow(1 << 31)
    try:
        options = parse_options(option or [])
        rules = build_rules(rules_name, options)
    except (UsageError, RulesChoiceError) as error:
        raise fail(str(error)) from None
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise fail(
            f"--players: a table seats {MIN_PLAYERS} to {MAX_PLAYERS} players, got {players}"
        )
    if hands < 1:
        raise fail(f"--total-hands: must be at least 1, got {hands}")
    try:
        Match(rules, players, seed)  # table-level checks, e.g. end_players < players
    except NewmarketError as error:
        raise fail(str(error)) from None

    tally = simulate(rules, players, hands, seed)
    summary = tally.summary()
    if as_json:
        document = {
            "rules": rules_name,
            "options": options,
            "players": players,
            "seed": seed,
            **summary,
        }
        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    extra = "".join(f" {k}={v}" for k, v in options.items())
    title = f"{rules_name}{extra}: {players} players, seed {seed}, random decisions"
    print_whole(summary_table(summary, title))
