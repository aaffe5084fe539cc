"""Synthetic match results for the league's pure parts (no processes, no engine)."""

from __future__ import annotations

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
