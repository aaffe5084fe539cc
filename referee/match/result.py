"""A played match as plain data: each seat's place, chips and faults, and the match's own facts.

What ``play_match`` returns, what a league and the server store, and what
``newmarket match --json`` prints; kept apart from the match loop so the
readers of results (standings, the report, the server) need none of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

Status = Literal["ok", "disqualified"]


class FaultRecord(msgspec.Struct):
    """One fault: its kind (``protocol.faults.FaultKind``), the hand it happened in, and why."""

    kind: str
    hand: int
    detail: str


class SeatResult(msgspec.Struct):
    """One seat's result. ``place`` 1 is best; equal places are shared.

    ``net_chips`` is chips won or lost over the match; ``boodle_chips`` the
    chips taken from boodle cards; ``hands_won`` the hands the seat went out
    in or won (a share of) when blocked.  ``decisions`` counts the requests
    the seat was asked, ``defaults`` the decisions the default policy made
    for it, ``think_ms`` the total latency of its replies (wall time), and
    ``cpu_ms`` the CPU time the bot's whole process tree used during the
    match (None for a bot with no process of ours): a timeout with ``cpu_ms``
    near the wall time it waited is a slow bot; with little ``cpu_ms``, a
    bot that was not computing, or a host too loaded to run it.
    """

    seat: int
    name: str
    place: int
    chips: int
    status: Status
    faults: list[FaultRecord]
    net_chips: int
    boodle_chips: int
    hands_won: int
    decisions: int = 0
    defaults: int = 0
    think_ms: int = 0
    cpu_ms: int | None = None


class MatchResult(msgspec.Struct):
    """A played match as plain data; ``result_json`` is what ``newmarket match --json`` prints.

    Its JSON form is msgspec's of these fields (``result_json``, ``decode_result``):
    a result stored before ``reason``, ``wall_ms`` or a seat's later counters
    existed reads with their defaults, and unknown keys are ignored.
    """

    match_id: str
    seed: int
    rules: dict[str, Any]
    hands: int
    seats: list[SeatResult]
    log_path: Path | None = None
    reason: str = ""  # the engine's: "players_left" or "hand_limit"
    wall_ms: int = 0  # the match's wall time, next to each seat's ``cpu_ms``

    @property
    def places(self) -> list[int]:
        return [seat.place for seat in self.seats]


def enc_hook(value: object) -> object:
    """msgspec's hook for the one type of a result it does not encode itself: a path."""
    if isinstance(value, Path):
        return str(value)
    raise NotImplementedError(f"cannot encode {type(value).__name__}")


def dec_hook(kind: type, value: object) -> object:
    """msgspec's hook for decoding a path (``log_path``) from its string."""
    if kind is Path and isinstance(value, str):
        return Path(value)
    raise NotImplementedError(f"cannot decode {kind}")


def result_json(result: MatchResult) -> dict[str, Any]:
    """The result as JSON values (``newmarket match --json``, a league's store)."""
    data: dict[str, Any] = msgspec.to_builtins(result, enc_hook=enc_hook)
    return data


def decode_result(data: bytes | str) -> MatchResult:
    """A result from its JSON text; ``msgspec.ValidationError`` names a bad field."""
    return msgspec.json.decode(data, type=MatchResult, dec_hook=dec_hook)


def result_from_json(data: object) -> MatchResult:
    """A result from JSON values already decoded (a worker's message, a log's record)."""
    return msgspec.convert(data, MatchResult, dec_hook=dec_hook)


def final_places(engine_places: Sequence[int], disqualified: Sequence[bool]) -> list[int]:
    """The engine's places with every disqualified seat ranked below every other seat.

    Among themselves, both groups keep the engine's order; equal keys share a place.
    """
    keys = [(dq, place) for dq, place in zip(disqualified, engine_places, strict=True)]
    return [1 + sum(1 for other in keys if other < key) for key in keys]
