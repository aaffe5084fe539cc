"""The bankroll league: chips carry from round to round until the rules' survivors are left.

Every bot starts with one bankroll (the rules' ``starting_chips``).  Each
round seats the survivors at tables, as a multi-table poker tournament does:
as many tables as ``table_size`` needs, sizes within one of each other, so
the tables are rebalanced every round as bots drop out.  Seating rotates who
meets whom (of a few seeded seatings, the one whose tables repeat the fewest
earlier meetings) and who deals (the seat the engine's first dealer falls on,
``engine.deal.first_dealer``, goes to the bot that has dealt first least).

**Stacks.**  Every bot brings its whole bankroll to its table: each seat
starts the match with its own bot's chips (``MatchKey.start_chips``, passed
to ``play_match(chips=)``), so a rich bot can win or lose more than a poor
one.  After the match a bot's bankroll is what it ends the match with, so
the chips each bot ends a round with carry into the next.  Chips left on the
boodle cards or in the kitty when a match ends belong to nobody and leave
play, as at the end of any match.

**Elimination.**  A bot whose bankroll cannot pay the largest stake of a
hand (the dealer's) after a round is out of the league, in that round.  The
league ends when no more than the rules' ``end_players`` survive, when the
survivors cannot fill a table of at least ``end_players + 1`` (and 3), or
after ``max_rounds``.  Standings: survivors by chips, then the rest by the
round they went out in (later is better), then by their last bankroll.

Nothing here is stored on its own: ``replay`` rebuilds every bankroll and
the next round's seating from the stored matches, so a resumed league is the
uninterrupted one, round for round.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from collections.abc import Mapping, Sequence

from engine.deal import first_dealer
from engine.rules import Rules
from engine.state import MAX_PLAYERS, MIN_PLAYERS
from referee.league.league_db import StoredMatch
from referee.match.dealkey import DealKey
from referee.match.key import MatchKey, derive_seed
from referee.match.result import MatchResult

SEATINGS_TRIED = 24  # seeded seatings compared per round for the fewest repeated meetings


@dataclasses.dataclass(frozen=True)
class BankrollParams:
    """What the bankroll format needs from a league file (or a database's identity)."""

    bots: int
    table_size: int
    seed: int  # the league seed: seatings and each table's public identity
    rules: Rules
    max_rounds: int
    deals: DealKey  # each table's cards: ``deals.deal_seed(identity)`` (referee.match.dealkey)

    @property
    def survivors_wanted(self) -> int:
        return self.rules.end_players

    @property
    def smallest_table(self) -> int:
        return max(MIN_PLAYERS, self.rules.end_players + 1)

    @property
    def largest_stake(self) -> int:
        return max(self.rules.stake_required(True), self.rules.stake_required(False))


@dataclasses.dataclass(frozen=True)
class BankrollTable:
    """One table of a round: a match to play."""

    key: MatchKey
    rules: Rules


@dataclasses.dataclass
class BankrollState:
    """The league after the stored matches: bankrolls, who is out when, what is next."""

    bankrolls: list[int]
    out_round: list[int | None]
    rounds_played: int
    finished: bool
    next_round: list[BankrollTable]  # empty when finished
    reason: str = ""

    @property
    def survivors(self) -> list[int]:
        return [bot for bot, out in enumerate(self.out_round) if out is None]


def table_sizes(survivors: int, table_size: int, smallest: int) -> list[int]:
    """Sizes of a round's tables: as few tables as ``table_size`` allows, sizes within one.

    When the survivors cannot be split into tables of ``smallest`` to
    ``table_size``, tables take a player or two more than ``table_size``
    (never more than 8): five survivors at tables of 4 play one table of 5.
    Returns [] when no table can be formed.
    """
    if survivors < smallest:
        return []
    tables = math.ceil(survivors / table_size)
    while tables > 1 and survivors // tables < smallest:
        tables -= 1
    if math.ceil(survivors / tables) > MAX_PLAYERS:
        return []
    base, extra = divmod(survivors, tables)
    return [base + 1] * extra + [base] * (tables - extra)


def table_stacks(bankrolls: Sequence[int]) -> list[int]:
    """The chips each seat of a table starts with: its own bot's whole bankroll."""
    return list(bankrolls)


def replay(params: BankrollParams, stored: Sequence[StoredMatch]) -> BankrollState:
    """Rebuild the league from its finished matches and plan the next round's tables.

    A round whose tables are only partly stored is the round in progress:
    ``next_round`` lists all of its tables (the runner skips the stored ones).
    """
    by_id = {match.key.match_id: match.result for match in stored}
    start = params.rules.starting_chips
    bankrolls = [start] * params.bots
    out_round: list[int | None] = [None] * params.bots
    meetings = [[0] * params.bots for _ in range(params.bots)]
    first_deals = [0] * params.bots
    for number in range(1, params.max_rounds + 1):
        survivors = [bot for bot in range(params.bots) if out_round[bot] is None]
        if len(survivors) <= params.survivors_wanted:
            return BankrollState(bankrolls, out_round, number - 1, True, [], "survivors")
        sizes = table_sizes(len(survivors), params.table_size, params.smallest_table)
        if not sizes:
            return BankrollState(bankrolls, out_round, number - 1, True, [], "no_table")
        tables = plan_round(params, number, survivors, sizes, bankrolls, meetings, first_deals)
        results = [by_id.get(table.key.match_id) for table in tables]
        if any(result is None for result in results):
            return BankrollState(bankrolls, out_round, number - 1, False, tables)
        for table, result in zip(tables, results, strict=True):
            assert result is not None
            settle(table, result, bankrolls, meetings, first_deals)
        for bot in survivors:
            if bankrolls[bot] < params.largest_stake:
                out_round[bot] = number
    return BankrollState(bankrolls, out_round, params.max_rounds, True, [], "max_rounds")


def plan_round(
    params: BankrollParams,
    number: int,
    survivors: Sequence[int],
    sizes: Sequence[int],
    bankrolls: Sequence[int],
    meetings: Sequence[Sequence[int]],
    first_deals: Sequence[int],
) -> list[BankrollTable]:
    """Seat the survivors of round ``number``; deterministic from the league seed and history."""
    rng = random.Random(derive_seed(params.seed, "bankroll-seating", number))
    best: list[list[int]] | None = None
    best_cost = (0, 0)
    for _ in range(SEATINGS_TRIED):
        order = list(survivors)
        rng.shuffle(order)
        groups, at = [], 0
        for size in sizes:
            groups.append(order[at : at + size])
            at += size
        # First who deals (each table's least-dealt bot takes the deal), then who meets whom.
        deals = dict.fromkeys(survivors, 0)
        for bot in survivors:
            deals[bot] = first_deals[bot]
        for group in groups:
            deals[min(group, key=lambda bot: deals[bot])] += 1
        cost = (
            sum(count * count for count in deals.values()),
            sum(
                meetings[a][b] ** 2 for group in groups for a, b in itertools.combinations(group, 2)
            ),
        )
        if best is None or cost < best_cost:
            best, best_cost = groups, cost
    assert best is not None
    tables = []
    for number_at, group in enumerate(best):
        seed = derive_seed(params.seed, "bankroll-deal", number, number_at)
        deal_seed = params.deals.deal_seed(seed)
        dealer_seat = first_dealer(deal_seed, len(group))  # the engine's, from the deal's seed
        # The bot that has dealt first least often takes the first dealer's seat.
        dealer = min(group, key=lambda bot: (first_deals[bot], rng.random()))
        others = [bot for bot in group if bot != dealer]
        rng.shuffle(others)
        seats = [*others[:dealer_seat], dealer, *others[dealer_seat:]]
        stacks = table_stacks([bankrolls[bot] for bot in seats])
        key = MatchKey(
            match_id=f"r{number:03d}-t{number_at + 1:02d}",
            ordinal=number_at,
            round=number,
            table=number_at,
            rotation=0,
            seed=seed,
            bots=tuple(seats),
            start_chips=tuple(stacks),
            deal_seed=deal_seed,
        )
        # The rules stay the league's: each seat's chips travel in key.start_chips.
        tables.append(BankrollTable(key, params.rules))
    return tables


def settle(
    table: BankrollTable,
    result: MatchResult,
    bankrolls: list[int],
    meetings: list[list[int]],
    first_deals: list[int],
) -> None:
    """Carry a finished table's chips into the bankrolls and count its meetings and deal."""
    key = table.key
    for seat in result.seats:
        bot = key.bots[seat.seat]
        bankrolls[bot] += seat.chips - key.start_chips[seat.seat]
    for a, b in itertools.combinations(key.bots, 2):
        meetings[a][b] += 1
        meetings[b][a] += 1
    first_deals[key.bots[first_dealer(key.deal_seed, len(key.bots))]] += 1


def ranking(state: BankrollState) -> list[int]:
    """Bots best first: survivors by chips, then by the round they went out in, then chips."""

    def order(bot: int) -> tuple[int, int, int, int]:
        out = state.out_round[bot]
        if out is None:
            return (0, 0, -state.bankrolls[bot], bot)
        return (1, -out, -state.bankrolls[bot], bot)

    return sorted(range(len(state.bankrolls)), key=order)


def params_from_identity(
    identity: Mapping[str, object], bots: int, deals: DealKey
) -> BankrollParams:
    """The bankroll parameters of a stored league (``LeagueStore.resolved_identity()``)."""
    league = identity["league"]
    bankroll = identity["bankroll"]
    rules = identity["rules"]
    assert isinstance(league, dict) and isinstance(bankroll, dict) and isinstance(rules, dict)
    return BankrollParams(
        bots=bots,
        table_size=int(league["table_size"]),
        seed=int(league["seed"]),
        rules=Rules.from_dict(rules),
        max_rounds=int(bankroll["max_rounds"]),
        deals=deals,
    )
