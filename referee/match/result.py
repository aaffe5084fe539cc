"""A played match as plain data: each seat's place, chips and faults, and the match's own facts.

What ``play_match`` returns, what a league and the server store, and what
``newmarket match --json`` prints; kept apart from the match loop so the
readers of results (standings, the report, the server) need none of it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

Status = Literal["ok", "disqualified"]


@dataclasses.dataclass
class FaultRecord:
    """One fault: its kind (``protocol.faults.FaultKind``), the hand it happened in, and why."""

    kind: str
    hand: int
    detail: str

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "hand": self.hand, "detail": self.detail}


@dataclasses.dataclass
class SeatResult:
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

    def to_json(self) -> dict[str, object]:
        return {
            "seat": self.seat,
            "name": self.name,
            "place": self.place,
            "chips": self.chips,
            "status": self.status,
            "faults": [fault.to_json() for fault in self.faults],
            "net_chips": self.net_chips,
            "boodle_chips": self.boodle_chips,
            "hands_won": self.hands_won,
            "decisions": self.decisions,
            "defaults": self.defaults,
            "think_ms": self.think_ms,
            "cpu_ms": self.cpu_ms,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SeatResult:
        faults = [FaultRecord(f["kind"], f["hand"], f["detail"]) for f in data["faults"]]
        return cls(**{**data, "faults": faults})


@dataclasses.dataclass
class MatchResult:
    """A played match as plain data; ``to_json`` is what ``newmarket match --json`` prints."""

    match_id: str
    seed: int
    rules: dict[str, object]
    hands: int
    seats: list[SeatResult]
    log_path: Path | None
    reason: str = ""  # the engine's: "players_left" or "hand_limit"
    wall_ms: int = 0  # the match's wall time, next to each seat's ``cpu_ms``

    def to_json(self) -> dict[str, object]:
        return {
            "match_id": self.match_id,
            "seed": self.seed,
            "rules": self.rules,
            "hands": self.hands,
            "reason": self.reason,
            "seats": [seat.to_json() for seat in self.seats],
            "log_path": None if self.log_path is None else str(self.log_path),
            "wall_ms": self.wall_ms,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MatchResult:
        log_path = data.get("log_path")
        return cls(
            match_id=data["match_id"],
            seed=data["seed"],
            rules=data["rules"],
            hands=data["hands"],
            seats=[SeatResult.from_json(seat) for seat in data["seats"]],
            log_path=None if log_path is None else Path(log_path),
            reason=data.get("reason", ""),
            wall_ms=data.get("wall_ms", 0),
        )

    @property
    def places(self) -> list[int]:
        return [seat.place for seat in self.seats]


def final_places(engine_places: Sequence[int], disqualified: Sequence[bool]) -> list[int]:
    """The engine's places with every disqualified seat ranked below every other seat.

    Among themselves, both groups keep the engine's order; equal keys share a place.
    """
    keys = [(dq, place) for dq, place in zip(disqualified, engine_places, strict=True)]
    return [1 + sum(1 for other in keys if other < key) for key in keys]
