"""Synthetic match results for the league's pure parts (no processes, no engine)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from referee.match.key import MatchKey
from referee.match.result import FaultRecord, MatchResult, SeatResult


def result(
    match_id: str,
    names: Sequence[str],
    places: Sequence[int],
    chips: Sequence[int] | None = None,
    *,
    start: int | Sequence[int] = 40,
    disqualified: Sequence[int] = (),
    seed: int = 1,
) -> MatchResult:
    starts = [start] * len(names) if isinstance(start, int) else list(start)
    final = list(chips) if chips is not None else starts
    seats = [
        SeatResult(
            seat=seat,
            name=name,
            place=place,
            chips=final[seat],
            status="disqualified" if seat in disqualified else "ok",
            faults=[FaultRecord("crash", 3, "exit code 1")] if seat in disqualified else [],
            net_chips=final[seat] - starts[seat],
            boodle_chips=seat,
            hands_won=2 if place == 1 else 0,
        )
        for seat, (name, place) in enumerate(zip(names, places, strict=True))
    ]
    return MatchResult(match_id, seed, {}, 10, seats, None, "hand_limit")


def key(
    match_id: str,
    bots: Sequence[int],
    *,
    ordinal: int = 0,
    round: int = 1,
    start: int = 40,
    seed: int = 1,
) -> MatchKey:
    return MatchKey(
        match_id=match_id,
        ordinal=ordinal,
        round=round,
        table=ordinal,
        rotation=0,
        seed=seed,
        bots=tuple(bots),
        start_chips=(start,) * len(bots),
        deal_seed=seed,  # as a league with public deals plays it
    )


def made_up(
    key: MatchKey, rng: random.Random, *, hands: int = 6, start: int = 100, troubled: bool = True
) -> MatchResult:
    """A random result for ``key``'s match: nets that sum to nothing, places by them.

    ``troubled``: about one seat in 20 disqualified, up to two faults a seat and some boodle,
    so that every sum of the standings has something to add.  ``benchmarks/fit.py`` writes
    its generated leagues with it too (untroubled).
    """
    nets = [rng.randint(-40, 40) for _ in key.bots[1:]]
    nets.insert(0, -sum(nets))
    order = sorted(range(len(nets)), key=lambda s: -nets[s])
    seats = [
        SeatResult(
            seat=s,
            name=f"b{bot}",
            place=order.index(s) + 1,
            chips=start + nets[s],
            status="disqualified" if troubled and rng.random() < 0.05 else "ok",
            faults=[FaultRecord("timeout", 1, "slow")] * (rng.randint(0, 2) if troubled else 0),
            net_chips=nets[s],
            boodle_chips=rng.randint(0, 5) if troubled else 0,
            hands_won=1 if troubled else 0,
        )
        for s, bot in enumerate(key.bots)
    ]
    return MatchResult(key.match_id, key.seed, {}, hands, seats, None, "limit")
