"""``newmarket demo``: a short match of the default rules, told hand by hand.

Four random players play a few hands in this process and the whole log is
printed through ``referee.text.render``, as a spectator would see it (every hand
face up), ending with the final places and chips.  The match is the default preset with a
hand limit, so it ends cleanly after the last hand with final places and chips
instead of stopping in the middle of the next hand's stakes.  The seed is
printed so that a demo worth a second look can be played again exactly.
``--league`` plays a short league of the bundled bots instead (``make demo``;
``referee.league.demo``).
"""

from __future__ import annotations

import random
import secrets
from typing import Annotated

import typer

from engine import DEFAULT_PRESET, Match, Rules, preset
from referee.commands.common import Seed, fail
from referee.text.render import cards, render

NAMES = ("Ann", "Bob", "Cat", "Dan")
DEFAULT_HANDS = 3


DemoHands = Annotated[
    int | None,
    typer.Option(
        "--hand-limit",
        "--hands",
        metavar="N",
        min=1,
        max=50,
        help=f"Hands to play (default: {DEFAULT_HANDS}).",
        show_default=False,
    ),
]
DemoLeague = Annotated[
    bool,
    typer.Option("--league", help="Run a short league of the bundled bots instead (make demo)."),
]


def demo_command(seed: Seed = None, hands: DemoHands = None, league: DemoLeague = False) -> None:
    """Play a few hands of the default rules with random players and print them."""
    if league:
        demo_league(seed, hands)
        return
    if seed is None:
        seed = secrets.randbelow(1_000_000)
    if hands is None:
        hands = DEFAULT_HANDS
    rules = preset(DEFAULT_PRESET).with_options({"hand_limit": hands})
    match = Match(rules, len(NAMES), seed)
    pick = random.Random(seed).random
    while not match.is_over:
        legal = match.legal_actions()
        match.apply(legal[int(pick() * len(legal))])
    tell(match, rules, seed, hands)


def demo_league(seed: int | None, hands: int | None) -> None:
    """The bundled bots' short league, whose seed and hands are its own."""
    from referee.league.demo import run_demo_league

    if seed is not None or hands is not None:
        # Silently ignored, they would read as the league's: it is a fixed one.
        flag = "--seed" if seed is not None else "--hand-limit"
        raise fail(
            f"{flag}: only for the hand-by-hand demo; --league plays a fixed league "
            "(its own seed, 4 hands a match)"
        )
    run_demo_league()


def tell(match: Match, rules: Rules, seed: int, hands: int) -> None:
    """The demo's heading (with the command that plays it again), its hands, what is left."""
    typer.echo(
        f"Newmarket demo: {DEFAULT_PRESET} rules, {len(NAMES)} random players, "
        f"{hands} hand{'' if hands == 1 else 's'}, seed {seed} "
        f"(again: newmarket demo --seed {seed} --hand-limit {hands})"
    )
    typer.echo(f"boodle cards: {cards(rules.boodle_cards)}; {rules.starting_chips} chips each\n")
    for line in render(match.events(), NAMES, rules.boodle_cards):
        typer.echo(line)
    left = [
        f"{card.pretty} {chips}"
        for card, chips in zip(rules.boodle_cards, match.boodle_stacks, strict=True)
        if chips
    ]
    if left:
        typer.echo(f"  left unclaimed on the boodle cards: {' · '.join(left)}")
