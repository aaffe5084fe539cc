"""The match log's record kinds: one msgspec struct each, one tagged union of them all.

Each line of a match log (``referee.match.log``; docs/match-log.md) is one of
these structs encoded as a JSON object whose ``type`` names the kind, first.
The referee builds them and the log encodes them; ``read_records`` decodes a
log into them; and the log's JSON schema (docs/match-log.schema.json) is
generated from them, so the format is declared in one place::

    python -m referee.match.records docs/match-log.schema.json

A header field an earlier log may lack is optional (``UNSET`` when absent),
and unknown keys are ignored, so logs already written keep decoding
(tests/referee/test_log_records.py holds lines of the referee's before these
structs).  ``newmarket replay`` reads the same lines as plain JSON values, so
that it can name exactly what a tampered line got wrong.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from protocol.messages import Request
from referee.match.result import MatchResult, SeatResult

__all__ = [
    "UNSET",
    "BotEntry",
    "Chance",
    "Decision",
    "EventRecord",
    "FaultLine",
    "Header",
    "Late",
    "LogRecord",
    "Lost",
    "LostInfo",
    "Received",
    "ReplyRecord",
    "RequestRecord",
    "ResultRecord",
    "Scripted",
    "ScriptedDeal",
    "Sent",
    "Stderr",
    "schema",
]


class _Record(msgspec.Struct, tag_field="type"):
    """A log line: its kind is the ``type`` field, written first."""


class LostInfo(msgspec.Struct):
    """Why a bot was lost before the match began (its ``BotLostError``)."""

    kind: str
    detail: str


class BotEntry(msgspec.Struct):
    """A seat's bot in the header: as configured, as it reported itself, and if it started."""

    seat: int
    name: str
    command: list[str]
    cwd: str | None
    transport: str
    reported_name: str | None
    reported_version: str | None
    alive: bool
    lost: LostInfo | None


class ScriptedDeal(msgspec.Struct):
    hands: list[list[str]]
    dead: list[str]


class Scripted(msgspec.Struct):
    """The first dealer or the deals a caller chose instead of the seed (``newmarket check``)."""

    first_dealer: int | None = None
    deals: list[ScriptedDeal] = []


class Header(_Record, tag="header", kw_only=True):
    """The first line: versions, the match's identity and seed, rules, time control, bots.

    Fields in the order the referee has always written them; those a log of an
    earlier format may lack are optional.
    """

    format: int
    referee: str | UnsetType = UNSET
    protocol: int | UnsetType = UNSET
    python: str | UnsetType = UNSET
    platform: str | UnsetType = UNSET
    started: str | UnsetType = UNSET
    match_id: str
    seed: int
    players: int
    chips: list[int] | UnsetType = UNSET  # each seat's starting chips
    first_dealer: int | UnsetType = UNSET  # the match's first chance outcome
    scripted: Scripted | UnsetType = UNSET  # only when the caller chose dealer or deals
    rules: dict[str, Any]
    time_control: dict[str, Any]
    sandbox: dict[str, Any] | UnsetType | None = UNSET
    bots: list[BotEntry]


class Chance(_Record, tag="chance"):
    """A hand's deal, written before the ``cards_dealt`` event it explains."""

    hand: int
    hands: list[list[str]]
    dead: list[str]


class EventRecord(_Record, tag="event"):
    """One omniscient engine event (``referee.match.convert.log_event``); ``n`` its index."""

    n: int
    event: dict[str, Any]


class RequestRecord(_Record, tag="request"):
    seat: int
    hand: int
    id: int
    decision: str
    legal: list[Any]
    default: Any
    time_left_ms: int

    @classmethod
    def of(cls, seat: int, hand: int, request: Request) -> RequestRecord:
        """The line of ``request`` to ``seat`` in ``hand``, as the referee logs it (and a
        compact record's model makes it again, ``referee.match.compact``)."""
        return cls(
            seat=seat,
            hand=hand,
            id=request.id,
            decision=request.decision,
            legal=request.legal,
            default=request.default,
            time_left_ms=request.time_left_ms,
        )


class ReplyRecord(_Record, tag="reply"):
    seat: int
    id: int
    choice: Any
    latency_ms: float


class Late(_Record, tag="late"):
    """A reply to a request that had timed out: discarded, never applied."""

    seat: int
    id: int
    choice: Any


class FaultLine(_Record, tag="fault"):
    """A fault as it happened (the result's ``FaultRecord`` with the log's context)."""

    seat: int
    hand: int
    kind: str
    detail: str
    id: int | None
    applied: Any
    count: int
    disqualified: bool


class Decision(_Record, tag="decision"):
    seat: int
    hand: int
    decision: str
    choice: Any
    by: Literal["bot", "default"]


class Sent(_Record, tag="sent"):
    """One write to a seat: each line a message as sent, or an ``events`` line's event numbers.

    Each line is kept as its JSON text (``msgspec.Raw``): a message's are the very bytes
    the seat was sent (``referee.tools.transcript``).
    """

    seat: int
    t: float
    lines: list[msgspec.Raw]


class Received(_Record, tag="received"):
    """A line a seat sent: ``line`` its text, or ``line_base64`` when it is not UTF-8.

    ``spaces``: the bytes of JSON whitespace (outside strings) left out of ``line``, when
    the line had more than ``referee.match.referee.SPACES_KEPT`` of them.  ``unread``: the
    other bytes left out of a reply's line (a repeated key's value, which the last one
    overrides), when more than ``SPACES_KEPT``: ``line`` is then the reply re-encoded.
    """

    seat: int
    t: float
    line: str | UnsetType = UNSET
    line_base64: str | UnsetType = UNSET
    spaces: int | UnsetType = UNSET
    unread: int | UnsetType = UNSET


class Lost(_Record, tag="lost"):
    """A bot lost after the result was decided (while told the end)."""

    seat: int
    kind: str
    detail: str


class Stderr(_Record, tag="stderr"):
    """What a bot wrote to stderr during the match: head and tail, ``dropped`` bytes between."""

    seat: int
    text: str
    bytes: int
    dropped: int


class ResultRecord(_Record, tag="result", kw_only=True):
    """The last line of a finished match: its ``MatchResult``, keys in the order logs have
    always had them (``of`` and ``result`` convert)."""

    match_id: str
    seed: int
    rules: dict[str, Any]
    hands: int
    reason: str = ""
    seats: list[SeatResult]
    log_path: str | None = None
    wall_ms: int = 0

    @classmethod
    def of(cls, result: MatchResult) -> ResultRecord:
        return cls(
            match_id=result.match_id,
            seed=result.seed,
            rules=result.rules,
            hands=result.hands,
            reason=result.reason,
            seats=result.seats,
            log_path=None if result.log_path is None else str(result.log_path),
            wall_ms=result.wall_ms,
        )

    def result(self) -> MatchResult:
        return MatchResult(
            match_id=self.match_id,
            seed=self.seed,
            rules=self.rules,
            hands=self.hands,
            seats=self.seats,
            log_path=None if self.log_path is None else Path(self.log_path),
            reason=self.reason,
            wall_ms=self.wall_ms,
        )


LogRecord = (
    Header
    | Chance
    | EventRecord
    | RequestRecord
    | ReplyRecord
    | Late
    | FaultLine
    | Decision
    | Sent
    | Received
    | Lost
    | Stderr
    | ResultRecord
)
"""Any line of a match log."""


def _schema_hook(kind: type) -> dict[str, Any]:
    if kind is Path:
        return {"type": "string"}
    raise NotImplementedError


def schema() -> dict[str, Any]:
    """The JSON schema of a match log's line, as docs/match-log.schema.json holds it."""
    document: dict[str, Any] = msgspec.json.schema(LogRecord, schema_hook=_schema_hook)
    document["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    document["title"] = "A line of a newmarket match log"
    document["$comment"] = (
        "One line of a newmarket match log (docs/match-log.md). Generated from "
        "referee/match/records.py by: python -m referee.match.records docs/match-log.schema.json"
    )
    return document


def schema_text() -> str:
    return json.dumps(schema(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m referee.match.records FILE", file=sys.stderr)
        return 2
    Path(argv[0]).write_text(schema_text(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
