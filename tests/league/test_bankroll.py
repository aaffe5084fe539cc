"""The bankroll format's arithmetic: carried chips, elimination, rebalanced tables."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from referee.league.bankroll import (
    BankrollParams,
    BankrollState,
    ranking,
    replay,
    table_sizes,
)
from referee.league.league_db import StoredMatch
from referee.league.league_file import LeagueConfig
from referee.league.runner import bankroll_params
from referee.match.dealkey import DealKey

from .results import result
from .test_config import GOOD
from .test_store import config_of


def params_of(config: LeagueConfig) -> BankrollParams:
    assert config.seed is not None
    return bankroll_params(config, config.seed, DealKey.generate())


def play_round(state: BankrollState, final: Mapping[int, int]) -> list[StoredMatch]:
    """Finish every table of the next round with the given final chips per bot."""
    out = []
    for table in state.next_round:
        chips = [final[bot] for bot in table.key.bots]
        places = [1 + sum(1 for other in chips if other > mine) for mine in chips]
        names = [f"bot{bot}" for bot in table.key.bots]
        start = table.key.start_chips
        out.append(
            StoredMatch(table.key, result(table.key.match_id, names, places, chips, start=start))
        )
    return out


@pytest.mark.parametrize(
    ("survivors", "size", "expected"),
    [
        (8, 4, [4, 4]),
        (9, 4, [3, 3, 3]),
        (10, 4, [4, 3, 3]),
        (5, 4, [5]),  # two tables would leave one of 2
        (7, 3, [4, 3]),
        (3, 4, [3]),
        (2, 4, []),
        (20, 8, [7, 7, 6]),
    ],
)
def test_tables_are_as_few_as_the_size_allows_and_within_one(
    survivors: int, size: int, expected: list[int]
) -> None:
    assert table_sizes(survivors, size, 3) == expected


def seven_bots(tmp_path: Path) -> BankrollParams:
    text = GOOD.replace("[league]", '[league]\nformat = "bankroll"').replace(
        "table_size = 3", "table_size = 4"
    )
    text += "".join(f'\n[[bots]]\nname = "x{i}"\ncommand = "lowest"\n' for i in range(3))
    text += "\n[rules.options]\nstarting_chips = 20\n"
    return params_of(config_of(tmp_path, text))


def test_chips_carry_and_bots_that_cannot_pay_the_stake_are_out(tmp_path: Path) -> None:
    params = seven_bots(tmp_path)
    assert params.largest_stake == 8  # the boodle dealer antes 2 on each of 4 cards
    state = replay(params, [])
    assert not state.finished and state.bankrolls == [20] * 7
    assert sorted(len(t.key.bots) for t in state.next_round) == [3, 4]
    assert all(t.key.start_chips == (20,) * len(t.key.bots) for t in state.next_round)
    # Round 1: bots 0 and 1 go broke or below the stake, the rest carry their chips.
    stored = play_round(state, {0: 0, 1: 7, 2: 30, 3: 25, 4: 20, 5: 33, 6: 20})
    state = replay(params, stored)
    assert state.bankrolls == [0, 7, 30, 25, 20, 33, 20]
    assert state.out_round[:2] == [1, 1] and state.survivors == [2, 3, 4, 5, 6]
    # Rebalanced: five survivors at tables of 4 play one table of 5, each seat starting
    # with its own bot's whole bankroll (not the poorest bot's).
    assert [len(t.key.bots) for t in state.next_round] == [5]
    table = state.next_round[0]
    assert table.key.round == 2
    assert table.key.start_chips == tuple(state.bankrolls[bot] for bot in table.key.bots)
    assert sorted(table.key.start_chips) == [20, 20, 25, 30, 33]
    assert table.rules == params.rules  # the chips travel per seat, not in the rules
    # Round 2: a bot's bankroll is what it ends the match with (3 chips left on the cards).
    stored += play_round(state, {2: 60, 3: 0, 4: 10, 5: 40, 6: 15})
    state = replay(params, stored)
    assert state.bankrolls[2:] == [60, 0, 10, 40, 15]
    assert state.out_round == [1, 1, None, 2, None, None, None]
    # Round 3: four survivors at one table; the rich bot 2 keeps its 60 chips at the table.
    assert [len(t.key.bots) for t in state.next_round] == [4]
    table = state.next_round[0]
    stacks = dict(zip(table.key.bots, table.key.start_chips, strict=True))
    assert stacks == {2: 60, 4: 10, 5: 40, 6: 15}
    stored += play_round(state, {2: 80, 4: 0, 5: 45, 6: 0})
    state = replay(params, stored)
    assert state.finished and state.reason == "survivors"
    assert state.survivors == [2, 5]
    assert state.bankrolls == [0, 7, 80, 0, 0, 45, 0]
    # Survivors by chips; then out in round 3 (a tie on chips: by bot), round 2, round 1.
    assert ranking(state) == [2, 5, 4, 6, 3, 1, 0]


def test_seating_is_deterministic_and_rotates_the_first_deal(tmp_path: Path) -> None:
    params = seven_bots(tmp_path)
    first = replay(params, [])
    again = replay(params, [])
    assert [t.key for t in first.next_round] == [t.key for t in again.next_round]
    # Everyone survives every round: over rounds, the first deal goes round the bots.
    stored: list[StoredMatch] = []
    state = first
    dealers = []
    from engine.deal import first_dealer

    for _ in range(7):
        for table in state.next_round:
            dealers.append(table.key.bots[first_dealer(table.key.deal_seed, len(table.key.bots))])
        stored += play_round(state, dict.fromkeys(range(7), 20))
        state = replay(params, stored)
    counts = [dealers.count(bot) for bot in range(7)]
    assert max(counts) - min(counts) <= 1


def test_a_round_limit_ends_a_league_of_bots_that_never_go_broke(tmp_path: Path) -> None:
    params = seven_bots(tmp_path)
    params = BankrollParams(
        params.bots, params.table_size, params.seed, params.rules, 3, params.deals
    )
    stored: list[StoredMatch] = []
    state = replay(params, stored)
    while not state.finished:
        stored += play_round(state, dict.fromkeys(range(7), 20))
        state = replay(params, stored)
    assert state.reason == "max_rounds" and state.rounds_played == 3
    assert len(state.survivors) == 7


@pytest.mark.trio
async def test_a_real_bankroll_league_seats_each_bot_with_its_own_bankroll(tmp_path: Path) -> None:
    """Round 2's tables start each seat with its bot's round-1 chips; the logs replay."""
    from referee.league.league_db import LeagueStore
    from referee.league.runner import SilentReporter, run_league
    from referee.tools.replay import verify_log

    text = """
[league]
format = "bankroll"
seed = 11
table_size = 3
hand_limit = 4

[time_control]
move_time = 30.0
startup_time = 60.0

[rules.options]
starting_chips = 30
"""
    text += "".join(
        f'\n[[bots]]\nname = "{name}-{i}"\ncommand = "{name}"\n'
        for i, name in enumerate(("lowest", "longest", "boodle", "tracker", "lowest", "boodle"))
    )
    config = config_of(tmp_path, text)
    db = tmp_path / "bankroll.db"
    logs = config.log_dir(db)
    assert logs is not None
    with LeagueStore.for_league(db, config) as store:
        await run_league(
            config,
            store,
            jobs=2,
            reporter=SilentReporter(),
            handle_signals=False,
            logs=logs,
        )
        stored = store.matches()
    bankrolls = [30] * 6
    uneven = False
    for round_number in sorted({match.key.round for match in stored}):
        matches = [match for match in stored if match.key.round == round_number]
        for match in matches:
            starts = [bankrolls[bot] for bot in match.key.bots]
            assert list(match.key.start_chips) == starts
            uneven = uneven or len(set(starts)) > 1
            replayed = verify_log(
                logs / f"{match.key.match_id}.nmr"
            )  # the header's chips re-run the match, line by line
            assert replayed.header["chips"] == starts
            for seat in match.result.seats:
                assert seat.net_chips == seat.chips - starts[seat.seat]
        for match in matches:
            for seat in match.result.seats:
                bankrolls[match.key.bots[seat.seat]] = seat.chips
    assert uneven, "no table had bots with different bankrolls: the test proved nothing"
