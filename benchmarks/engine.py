"""How fast the engine plays: hands per second and state copies per second, per preset.

    python benchmarks/engine.py [--seconds S] [--players N] [--seed N] [--check]
    python benchmarks/engine.py --kernel [--rounds R] [--seconds S] [--cpu]

``--kernel`` measures the default preset's public API against a bare kernel
of the same matches (``kernel_match``: the seeded deal with its dead hand,
antes, leads, forced runs and stops, boodle captures, going out, payments and
eliminations, in plain Python with no events, checks or API; a test holds it
to the engine chip for chip), and the engine's ``engine.playout`` path, in
rounds in which the three take turns match by match on the same matches; it
prints every round with the load average, and the median ratio and spread of
rounds (target: the API at 0.8x).  ``--plain api|playout|kernel|none`` plays
the same whole matches, about 3,000 hands, on one path and exits: a fixed
workload for an instruction count that no load can blur (``valgrind
--tool=callgrind``; subtract ``none``, the start-up).

Search bots play millions of random hands and copy states at every node, so
these two figures are the engine's budget.  Both loops do only what a random
playout does (list the legal actions, pick one with a seeded ``random.Random``
by one float multiply, apply it), so the figures are the engine's cost and not
the benchmark's.  Each figure is the best of a few timed rounds, which filters
out a noisy neighbour without hiding a slow engine.

The targets are for the default preset: ``--check`` exits with 1 if either is
missed, so CI can hold the line once the engine meets them.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from engine import (
    DEFAULT_PRESET,
    PRESETS,
    Ante,
    DeadHandExchange,
    Dealing,
    Decision,
    LeadSuit,
    Match,
    Payment,
    RankOrder,
    Rules,
    preset,
)
from engine.deal import first_dealer, shuffled
from engine.playout import random_playout

TARGET_HANDS_PER_SECOND = 20_000
TARGET_COPIES_PER_SECOND = 200_000
TARGET_KERNEL_RATIO = 0.8
ROUNDS = 3  # each figure is the best of this many rounds of seconds / ROUNDS


@dataclass(frozen=True)
class Figures:
    name: str
    hands_per_second: float
    matches: int
    hands: int
    copies_per_second: float


def play_random_match(rules: Rules, players: int, seed: int, pick: random.Random) -> int:
    """One whole match with uniform random decisions; returns the hands played."""
    match = Match(rules, players, seed)
    choose = pick.random
    while not match.is_over:
        legal = match.legal_actions()
        match.apply(legal[int(choose() * len(legal))])
    return match.hands_played


def hands_per_second(
    rules: Rules, players: int, seconds: float, seed: int
) -> tuple[float, int, int]:
    """(best hands/s over the rounds, matches played, hands played)."""
    pick = random.Random(seed)
    best = 0.0
    matches = hands = 0
    match_seed = seed
    for _ in range(ROUNDS):
        round_hands = 0
        start = time.perf_counter()
        deadline = start + seconds / ROUNDS
        while True:
            round_hands += play_random_match(rules, players, match_seed, pick)
            match_seed += 1
            matches += 1
            now = time.perf_counter()
            if now >= deadline:
                break
        hands += round_hands
        best = max(best, round_hands / (now - start))
    return best, matches, hands


# -- the bare kernel ----------------------------------------------------------------
#
# The same match as the engine's default preset with random leads, in plain Python and
# nothing else: the seeded shuffle and the first dealer are imported (they define the
# cards), everything else is written out here.  No events, no checks, no API; a card is
# its code ``suit * 13 + rank`` (aces high), a hand a 52-bit mask, and the owner table
# (who holds each card) also marks the cards played, so that a run asks one list per
# card.  tests/benchmarks/test_engine_kernel.py holds it to the engine chip for chip.

_DEAD = 8  # the owner of a card in the dead hand, or already played
_BIT = tuple(1 << code for code in range(52))
_NEXT = tuple(52 if code % 13 == 12 else code + 1 for code in range(52))  # owner[52]: dead
_LOWEST = (0, *(((m & -m).bit_length() - 1) for m in range(1, 1 << 13)))
_LEAD_OF = tuple(tuple(13 * suit + low for low in _LOWEST) for suit in range(4))
_ONE_SEAT = tuple(  # holder byte s to ASCII "1", any other to "0"
    bytes.maketrans(bytes(range(9)), bytes(49 if k == seat else 48 for k in range(9)))
    for seat in range(9)
)


def kernel_rules(rules: Rules) -> tuple[int, int, tuple[int, ...], int, int, int, bool]:
    """What ``kernel_match`` needs of ``rules``; a ValueError for rules it does not play."""
    kernel_plays = (
        rules.rank_order is RankOrder.ACES_HIGH
        and rules.ante is Ante.FIXED
        and rules.kitty_ante == 0
        and rules.dealing is Dealing.ROUND_ROBIN
        and rules.dead_hand_exchange is DeadHandExchange.OFF
        and rules.lead_suit is LeadSuit.ANY
        and rules.payment is Payment.PER_CARD
    )
    if not kernel_plays:
        raise ValueError(
            "the kernel plays aces high, fixed antes with no kitty, round-robin deals, "
            "no dead-hand exchange, any suit led and payment per card"
        )
    return (
        rules.ante_per_card,
        rules.dealer_ante_per_card,
        tuple(int(card) for card in rules.boodle_cards),
        rules.starting_chips,
        rules.end_players,
        rules.hand_limit,
        rules.dead_hand,
    )


def kernel_match(
    rules: Rules,
    players: int,
    seed: int,
    draw: Callable[[], float],
    trace: list[tuple[tuple[int, ...], tuple[int, ...]]] | None = None,
) -> tuple[int, list[int]]:
    """One whole match of random leads, bare: (hands played, each seat's chips at the end).

    Each lead is ``legal[int(draw() * len(legal))]`` with the legal leads sorted, as
    the API's random play picks.  ``trace`` gets (chips, boodle stacks) after each
    hand's antes and once at the end.
    """
    ante, dealer_ante, boodle, start, end_players, hand_limit, dead_hand = kernel_rules(rules)
    bit, follow = _BIT, _NEXT
    clubs, diamonds, hearts, spades = _LEAD_OF
    chips = [start] * players
    pot = [0] * 52  # chips on each card (only boodle cards ever hold any)
    due = ante * len(boodle)
    dealer_due = dealer_ante * len(boodle)
    live = [True] * players
    seats = list(range(players))  # the live ones
    left = [(seat + 1) % players for seat in range(players)]  # next live seat clockwise
    holders: dict[int, list[int]] = {}  # who gets the k-th card, by dealer
    others: dict[int, list[int]] = {}  # who pays the one who goes out, by that seat
    dealer = (first_dealer(seed, players) - 1) % players
    hands_played = 0
    while hands_played < hand_limit:
        dealer = left[dealer]
        # Nobody can be out while every live seat holds the dealer's larger stake.
        while min(map(chips.__getitem__, seats)) < dealer_due:
            out = [s for s in seats if chips[s] < (dealer_due if s == dealer else due)]
            if not out:
                break
            for seat in out:
                live[seat] = False
            seats = [s for s in seats if live[s]]
            if not seats:
                break
            left = [
                next(t % players for t in range(s + 1, s + players + 1) if live[t % players])
                for s in range(players)
            ]
            holders, others = {}, {}
            for seat in out:  # its chips are divided clockwise from its left
                share, extra = divmod(chips[seat], len(seats))
                chips[seat] = 0
                receiver = seat
                for k in range(len(seats)):
                    receiver = left[receiver]
                    chips[receiver] += share + (k < extra)
            if len(seats) <= end_players:
                break
            if not live[dealer]:
                dealer = left[dealer]
        if len(seats) <= end_players:
            break
        order = holders.get(dealer)
        if order is None:
            order = [left[dealer]]
            while order[-1] != dealer:
                order.append(left[order[-1]])
            if dead_hand:
                order.append(_DEAD)
            order = holders[dealer] = (order * (52 // len(order) + 1))[:52]
        for seat in seats:
            chips[seat] -= due
        chips[dealer] -= dealer_due - due
        gain = ante * (len(seats) - 1) + dealer_ante
        for card in boodle:
            pot[card] += gain
        if trace is not None:
            trace.append((tuple(chips), tuple([pot[card] for card in boodle])))
        owner = shuffled(seed, hands_played + 1, order)
        text = bytes(owner)[::-1]
        hands = [int(text.translate(_ONE_SEAT[s]), 2) if live[s] else 0 for s in range(players)]
        owner.append(_DEAD)
        seat = left[dealer]
        while True:
            hand = hands[seat]
            low = hand & 0x3FFFFFF
            high = hand >> 26
            legal = []
            if suit := low & 0x1FFF:
                legal.append(clubs[suit])
            if suit := low >> 13:
                legal.append(diamonds[suit])
            if suit := high & 0x1FFF:
                legal.append(hearts[suit])
            if suit := high >> 13:
                legal.append(spades[suit])
            code = legal[int(draw() * len(legal))]
            while True:  # the lead and its forced follows
                hand = hands[seat] ^ bit[code]
                hands[seat] = hand
                owner[code] = 8  # _DEAD, as a constant
                if pot[code]:  # a boodle card: its chips go to who plays it
                    chips[seat] += pot[code]
                    pot[code] = 0
                if not hand:
                    break
                code = follow[code]
                holder = owner[code]
                if holder == 8:  # _DEAD: the top played, or the next card dead or played
                    break
                seat = holder
            if not hand:
                break
        winner = seat
        payers = others.get(winner)
        if payers is None:
            payers = others[winner] = [s for s in seats if s != winner]
        for seat in payers:
            owed = hands[seat].bit_count()
            held = chips[seat]
            paid = owed if owed <= held else held
            chips[seat] = held - paid
            chips[winner] += paid
        hands_played += 1
    if trace is not None:
        trace.append((tuple(chips), tuple([pot[card] for card in boodle])))
    return hands_played, chips


def playout_match(rules: Rules, players: int, seed: int, pick: random.Random) -> int:
    """One whole match on ``engine.playout`` (random decisions); returns the hands played."""
    return random_playout(Match(rules, players, seed), pick.random)


def bare_match(rules: Rules, players: int, seed: int, pick: random.Random) -> int:
    """One whole match on the bare kernel (random leads); returns the hands played."""
    return kernel_match(rules, players, seed, pick.random)[0]


MatchPlayer = Callable[[Rules, int, int, random.Random], int]  # any of the three above


def kernel_report(
    players: int, seconds: float, rounds: int, seed: int, cpu: bool = False
) -> list[str]:
    """Rounds of the API, the playout path and the kernel on the same matches; every round.

    Within a round the three take turns match by match (the same seed and
    draws, whoever goes first rotating), each timed on its own, so that a
    neighbour's burst on this shared machine falls on all three alike rather
    than on whichever held the core for a whole second; a round gives each
    about ``seconds``.  ``cpu`` times by this thread's CPU time instead of the
    wall clock: it leaves out the time other work holds the core (not what
    sharing its caches costs).
    """
    clock = time.thread_time if cpu else time.perf_counter
    rules = preset(DEFAULT_PRESET)
    paths: list[tuple[str, MatchPlayer]] = [
        ("API", play_random_match),
        ("playout", playout_match),
        ("kernel", bare_match),
    ]
    rates: dict[str, list[float]] = {name: [] for name, _ in paths}
    lines = [
        f"{DEFAULT_PRESET}, {players} players, random decisions, {rounds} rounds of about "
        f"{seconds:g} s {'of CPU time ' if cpu else ''}a path (API, playout and kernel take "
        f"turns match by match), Python {sys.version.split()[0]}, load average {_load()}"
    ]
    for number in range(rounds):
        spent = dict.fromkeys(rates, 0.0)
        hands = 0
        match_seed = seed + 100_000 * number
        while sum(spent.values()) < 3 * seconds:
            for turn in range(3):
                name, play = paths[(match_seed + turn) % 3]
                pick = random.Random(match_seed)
                start = clock()
                played = play(rules, players, match_seed, pick)
                spent[name] += clock() - start
            hands += played
            match_seed += 1
        for name in rates:
            rates[name].append(hands / spent[name])
        api, fast, bare = (rates[name][-1] for name in ("API", "playout", "kernel"))
        lines.append(
            f"round {number + 1}: kernel {bare:9,.0f}  API {api:9,.0f} ({api / bare:.2f})  "
            f"playout {fast:9,.0f} ({fast / bare:.2f}) hands/s, {hands:,} hands; "
            f"load average {_load()}"
        )
    bare_rates = rates["kernel"]
    api_ratio = sorted(a / k for a, k in zip(rates["API"], bare_rates, strict=True))
    fast_ratio = sorted(f / k for f, k in zip(rates["playout"], bare_rates, strict=True))

    def spread(values: list[float]) -> str:
        return ", ".join(f"{v:.2f}" for v in values)

    return [
        *lines,
        f"kernel  : {statistics.median(bare_rates):9,.0f} hands/s (median of rounds)",
        f"API     : {statistics.median(rates['API']):9,.0f} hands/s; API / kernel median "
        f"{statistics.median(api_ratio):.2f} ({spread(api_ratio)}); target {TARGET_KERNEL_RATIO}",
        f"playout : {statistics.median(rates['playout']):9,.0f} hands/s; playout / kernel "
        f"median {statistics.median(fast_ratio):.2f} ({spread(fast_ratio)})",
    ]


def _load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def plain(path: str, players: int, seed: int, hands: int = 3000) -> int:
    """Whole matches of the default preset on one path (``--plain``), from ``seed`` on, until
    about ``hands`` hands are played; the hands played.  Every path plays the same matches."""
    rules = preset(DEFAULT_PRESET)
    pick = random.Random(seed)
    played = 0
    match_seed = seed
    play = {"api": play_random_match, "playout": playout_match, "kernel": bare_match}.get(path)
    while play is not None and played < hands:
        played += play(rules, players, match_seed, pick)
        match_seed += 1
    return played


def mid_hand_states(rules: Rules, players: int, seed: int, count: int = 200) -> list[Match]:
    """States in the middle of a hand (a lead to make, some cards played), from random play."""
    pick = random.Random(seed)
    states: list[Match] = []
    match_seed = seed
    while len(states) < count:
        match = Match(rules, players, match_seed)
        match_seed += 1
        while not match.is_over and len(states) < count:
            if match.decision is Decision.LEAD and match.played_cards() and pick.random() < 0.2:
                states.append(match.clone())
            legal = match.legal_actions()
            match.apply(legal[int(pick.random() * len(legal))])
    return states


def copies_per_second(rules: Rules, players: int, seconds: float, seed: int) -> float:
    states = mid_hand_states(rules, players, seed)
    best = 0.0
    for _ in range(ROUNDS):
        copies = 0
        start = time.perf_counter()
        deadline = start + seconds / ROUNDS
        while True:
            for state in states:  # one batch between clock reads keeps the timer out
                state.clone()
            copies += len(states)
            now = time.perf_counter()
            if now >= deadline:
                break
        best = max(best, copies / (now - start))
    return best


def measure(name: str, players: int, seconds: float, seed: int) -> Figures:
    rules = preset(name)
    rate, matches, hands = hands_per_second(rules, players, seconds, seed)
    copies = copies_per_second(rules, players, seconds, seed)
    return Figures(name, rate, matches, hands, copies)


def table(rows: list[Figures]) -> list[str]:
    header = f"{'preset':<12} {'hands/s':>10} {'matches':>8} {'hands':>8} {'copies/s':>11}"
    lines = [header, "-" * len(header)]
    for row in rows:
        mark = " (default)" if row.name == DEFAULT_PRESET else ""
        lines.append(
            f"{row.name:<12} {row.hands_per_second:>10,.0f} {row.matches:>8,} {row.hands:>8,} "
            f"{row.copies_per_second:>11,.0f}{mark}"
        )
    return lines


def verdict(default: Figures) -> tuple[list[str], bool]:
    hands_ok = default.hands_per_second >= TARGET_HANDS_PER_SECOND
    copies_ok = default.copies_per_second >= TARGET_COPIES_PER_SECOND
    lines = [
        f"target ({DEFAULT_PRESET}): >= {TARGET_HANDS_PER_SECOND:,} hands/s: "
        f"{default.hands_per_second:,.0f} {'met' if hands_ok else 'MISSED'}",
        f"target ({DEFAULT_PRESET}): >= {TARGET_COPIES_PER_SECOND:,} copies/s: "
        f"{default.copies_per_second:,.0f} {'met' if copies_ok else 'MISSED'}",
    ]
    return lines, hands_ok and copies_ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=1.0, help="time per figure (default 1)")
    parser.add_argument("--players", type=int, default=4, help="players at the table (3..8)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the matches and the picks")
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument(
        "--kernel", action="store_true", help="the API and playout against the bare kernel"
    )
    parser.add_argument("--rounds", type=int, default=7, help="--kernel: rounds (default 7)")
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="--kernel: time rounds by this thread's CPU time (for a host loaded by other work)",
    )
    parser.add_argument("--plain", choices=("api", "playout", "kernel", "none"))
    args = parser.parse_args(argv)
    if not 3 <= args.players <= 8:
        parser.error(f"--players: a table seats 3 to 8 players, got {args.players}")
    if args.seconds <= 0:
        parser.error(f"--seconds: must be more than 0, got {args.seconds}")

    if args.plain is not None:
        print(f"{args.plain}: {plain(args.plain, args.players, args.seed):,} hands")
        return 0
    if args.kernel:
        print(
            "\n".join(kernel_report(args.players, args.seconds, args.rounds, args.seed, args.cpu))
        )
        return 0
    print(
        f"{args.players} players, random decisions, {args.seconds:g} s per figure "
        f"(best of {ROUNDS}), seed {args.seed}, Python {sys.version.split()[0]}"
    )
    rows = []
    for name in PRESETS:
        rows.append(measure(name, args.players, args.seconds, args.seed))
    print("\n".join(table(rows)))
    default = next(row for row in rows if row.name == DEFAULT_PRESET)
    lines, met = verdict(default)
    print("\n".join(lines))
    return 0 if met or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
