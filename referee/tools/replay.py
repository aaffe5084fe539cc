"""Verifying a match log by playing it again, and printing it for people.

A log is trusted only as far as the engine agrees with it.  ``verify_log``
rebuilds the match from the header (rules, seed, players), applies each
``decision`` line in turn, and checks every other line against what the
engine does: each ``chance`` line against the seeded deal, each ``event``
line field for field, each decision for its seat, legality and (for a
default) the default policy, each fault's disqualification against the rule,
and finally the ``result`` against one recomputed from the engine's outcome
and the faults.  The first line that differs is the error, named by number,
so a tampered or corrupted log fails loudly and precisely.

Only decisions drive the replay; everything else is checked against it.  In
a log with a wire transcript (format 2) that includes every line the seats
were sent, regenerated and compared byte for byte, and every line they sent
back, which must be the reply, late reply or fault logged after it
(``referee.tools.transcript_check``).  What no line can confirm (a bot's stderr,
how a connection was lost, measured times) is listed in ``Replay.unverifiable``
by line number, never passed over in silence.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from engine import Deal
from engine import events as ev
from engine.errors import NewmarketError
from engine.rules import Rules
from engine.state import Match
from protocol.faults import DISQUALIFY_AT_ONCE, FaultKind
from protocol.messages import Choice, Request
from referee.match.convert import apply_choice, build_request, log_event
from referee.match.log import LOG_FORMAT, LogError, NotAMatchLog, log_lines, log_records
from referee.match.result import (
    FaultRecord,
    MatchResult,
    SeatResult,
    final_places,
    result_from_json,
    result_json,
)
from referee.tools.transcript_check import TranscriptCheck, Unverifiable

__all__ = ["NotAMatchLog", "Replay", "log_records", "render_replay", "verify_log"]

# Result fields that record how the match was played rather than what happened in it.
_UNCHECKED_SEAT_FIELDS = ("think_ms", "cpu_ms")  # measured, not derived from the game


@dataclasses.dataclass
class FaultLine:
    seat: int
    hand: int
    kind: str
    detail: str
    applied: object
    disqualified: bool


@dataclasses.dataclass
class Replay:
    """A verified log: what it says, and the engine's events that confirm it."""

    path: Path
    header: dict[str, Any]
    names: list[str]
    rules: Rules
    events: list[ev.Event]
    faults: list[FaultLine]
    result: MatchResult
    lines: int
    decisions: int
    unverifiable: list[Unverifiable] = dataclasses.field(default_factory=list)
    transcript: bool = False  # its sent and received lines were checked (format 2)

    def to_json(self) -> dict[str, object]:
        return {
            "verified": True,
            "not_verifiable": msgspec.to_builtins(self.unverifiable),
            "log": str(self.path),
            "match_id": self.header.get("match_id"),
            "seed": self.header.get("seed"),
            "lines": self.lines,
            "events": len(self.events),
            "decisions": self.decisions,
            "bots": self.header.get("bots"),
            "result": result_json(self.result),
            "hands": [
                {"events": [log_event(event) for event in hand]} for hand in hands(self.events)
            ],
        }


def hands(events: list[ev.Event]) -> Iterator[list[ev.Event]]:
    """The events cut after each ``HandEnded`` (eliminations go with the hand that follows)."""
    start = 0
    for index, event in enumerate(events):
        if isinstance(event, ev.HandEnded):
            yield events[start : index + 1]
            start = index + 1
    if start < len(events):
        yield events[start:]


class _Verifier:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.match: Match | None = None
        self.header: dict[str, Any] = {}
        self.rules = Rules()
        self.names: list[str] = []
        self.max_faults = 3
        self.events: list[ev.Event] = []  # the engine's, in order
        self.raw = 0  # raw engine events turned into ``events``
        self.checked = 0  # events confirmed by an ``event`` line
        self.faults: list[FaultLine] = []
        self.fault_counts: list[int] = []
        self.disqualified: list[bool] = []
        self.decisions: list[int] = []
        self.defaults: list[int] = []
        self.boodle: list[int] = []
        self.won: list[int] = []
        self.replies: dict[int, Choice] = {}
        self.requested: set[int] = set()
        self.result: MatchResult | None = None
        self.lines = 0
        self.decided = 0
        self.format = LOG_FORMAT
        self.wire: TranscriptCheck | None = None  # format 2: the transcript's own check
        self.line_bytes = b""  # the line being checked, as it is in the file
        self.unverifiable: list[Unverifiable] = []

    # ------------------------------------------------------------- driving

    def run(self) -> Replay:
        handlers: dict[str, Callable[[int, dict[str, Any]], None]] = {
            "header": self.on_header,
            "chance": self.on_chance,
            "event": self.on_event,
            "request": self.on_request,
            "reply": self.on_reply,
            "late": self.on_late,
            "fault": self.on_fault,
            "decision": self.on_decision,
            "lost": self.on_lost,
            "sent": self.on_sent,
            "received": self.on_received,
            "stderr": self.on_stderr,
            "result": self.on_result,
        }
        for number, raw, record in log_lines(self.path):
            self.lines = number
            self.line_bytes = raw
            kind = record["type"]
            if self.result is not None:
                raise LogError(f"a {kind!r} line after the result", number)
            handler = handlers.get(kind)
            if handler is None:
                raise LogError(f"unknown record type {kind!r}", number)
            wire = self.wire
            if wire is not None and kind not in _LOOKED_AT_WHOLE:
                # Format 2 is written by one encoder: a line is exactly what it re-encodes to,
                # so no value can be swapped for an equal one (1.0, true) or respelled.
                if canonical(record) != raw[:-1]:
                    raise LogError(
                        f"not as the referee writes a line: {_respelled(raw[:-1], record)}",
                        number,
                    )
                fields = _FIELDS.get(kind)
                if fields is not None:
                    if record.keys() not in fields:
                        raise LogError(f"a {kind!r} record with fields {sorted(record)}", number)
                    for field, types in _TYPED[kind]:
                        value = record.get(field)
                        if type(value) not in types:
                            raise LogError(f"{field} {value!r}: not a {types[0].__name__}", number)
                if (
                    wire.received is not None
                    and kind not in _BETWEEN_A_LINE_AND_ITS_VERDICT
                    and not (kind in _VERDICTS and record.get("seat") == wire.received[1])
                ):
                    raise wire.unexplained(number)
            try:
                handler(number, record)
            except LogError:
                raise
            except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
                raise LogError(
                    f"a {kind!r} record that cannot be read: {error!r}", number
                ) from None
        if self.result is None:
            raise LogError(
                f"the log ends at line {self.lines} before the match's result "
                "(the referee was stopped?)"
            )
        return self.replay(self.result)

    def replay(self, result: MatchResult) -> Replay:
        """What the verified log holds, for printing and for ``--json``."""
        return Replay(
            path=self.path,
            header=self.header,
            names=self.names,
            rules=self.rules,
            events=self.events,
            faults=self.faults,
            result=result,
            lines=self.lines,
            decisions=self.decided,
            unverifiable=sorted(self.unverifiable, key=_by_line),
            transcript=self.wire is not None,
        )

    def engine(self, number: int) -> Match:
        if self.match is None:
            raise LogError("no header before this line", number)
        return self.match

    def sync(self) -> None:
        """Bring ``events`` up to date with the engine."""
        match = self.match
        assert match is not None
        count = match.event_count()
        if count != self.raw:
            self.events.extend(match.events(viewer=None, since=self.raw))
            self.raw = count

    # ------------------------------------------------------------- records

    def on_header(self, number: int, record: dict[str, Any]) -> None:
        if number != 1:
            raise LogError("a second header", number)
        self.format = int(record["format"])
        try:
            self.rules = Rules.from_dict(record["rules"])
            players = int(record["players"])
            # Logs from before per-seat chips have no "chips": every seat had the rules'.
            chips = record.get("chips")
            # A scripted table (``newmarket check``) names the dealer and deals that took
            # the seed's place; the engine is given the same, and the rest is checked alike.
            scripted = record.get("scripted") or {}
            dealer = scripted.get("first_dealer")
            deals = [Deal.of(deal["hands"], deal["dead"]) for deal in scripted.get("deals", ())]
            self.match = Match(
                self.rules,
                players,
                int(record["seed"]),
                chips=chips,
                dealer=None if dealer is None else int(dealer),
                deals=deals,
            )
        except NewmarketError as error:
            raise LogError(f"the header cannot start a match: {error}", number) from None
        if record.get("first_dealer") != self.match.dealer:
            raise LogError(
                f"first dealer {record.get('first_dealer')!r}; the seed gives {self.match.dealer}",
                number,
            )
        bots = record["bots"]
        if len(bots) != players:
            raise LogError(f"{len(bots)} bots for {players} seats", number)
        self.header = record
        self.names = [str(bot["name"]) for bot in bots]
        self.max_faults = int(record["time_control"]["max_faults"])
        for counter in ("fault_counts", "decisions", "defaults", "boodle", "won"):
            setattr(self, counter, [0] * players)
        self.disqualified = [False] * players
        self.sync()
        self.unverifiable.append(Unverifiable(number, "header", _HEADER_UNVERIFIABLE))
        if self.format >= 2:
            if canonical(record) != self.line_bytes[:-1]:
                raise LogError(
                    f"not as the referee writes a line: {_respelled(self.line_bytes[:-1], record)}",
                    number,
                )
            self.wire = TranscriptCheck(record, self.match, self.names)
        else:
            self.unverifiable.append(Unverifiable(None, "transcript", _NO_TRANSCRIPT))

    def on_chance(self, number: int, record: dict[str, Any]) -> None:
        self.same_hand(number, record)
        upcoming = self.events[self.checked] if self.checked < len(self.events) else None
        if not isinstance(upcoming, ev.CardsDealt):
            raise LogError("a deal where the engine deals no cards", number)
        hands_text = [[str(c) for c in hand or ()] for hand in upcoming.hands]
        dead_text = [str(c) for c in upcoming.dead_hand or ()]
        if record["hands"] != hands_text or record["dead"] != dead_text:
            raise LogError(
                f"the deal differs from the seed's: the log has {record['hands']} "
                f"dead {record['dead']}, the engine deals {hands_text} dead {dead_text}",
                number,
            )

    def same_hand(self, number: int, record: dict[str, Any]) -> None:
        """A line written at this point of the match names the hand the engine is in (a log
        of format 1 is not held to it)."""
        match = self.engine(number)
        if self.wire is not None and (
            type(record["hand"]) is not int or record["hand"] != match.hand_number
        ):
            raise LogError(
                f"hand {record['hand']!r}; the engine is in hand {match.hand_number}", number
            )

    def on_event(self, number: int, record: dict[str, Any]) -> None:
        self.engine(number)
        if record["n"] != self.checked:
            raise LogError(f"event number {record['n']}, expected {self.checked}", number)
        if self.checked >= len(self.events):
            raise LogError(f"an event the engine did not produce here: {record['event']}", number)
        event = self.events[self.checked]
        expected = log_event(event)
        # Format 2: the line must be exactly the engine's event as the referee writes it.
        exact = self.wire is not None and self.line_bytes[:-1] == canonical(
            {"type": "event", "n": self.checked, "event": expected}
        )
        if not exact and record["event"] != expected:
            raise LogError(
                f"event {self.checked} differs: the log has {record['event']}, "
                f"the engine gives {expected}",
                number,
            )
        if not exact and self.wire is not None:
            raise LogError(
                f"not as the referee writes a line: {_respelled(self.line_bytes[:-1], record)}",
                number,
            )
        if isinstance(event, ev.BoodleWon):
            self.boodle[event.seat] += event.chips
        elif isinstance(event, ev.HandEnded):
            for winner in event.winners:
                self.won[winner] += 1
        self.checked += 1

    def on_request(self, number: int, record: dict[str, Any]) -> None:
        seat = int(record["seat"])
        if not 0 <= seat < len(self.decisions):
            raise LogError(f"a request of seat {seat}, which is not at the table", number)
        if self.wire is not None:
            self.same_hand(number, record)
            self.wire.on_request(number, record)
        self.decisions[seat] += 1
        self.requested.add(seat)
        self.replies.pop(seat, None)

    def on_reply(self, number: int, record: dict[str, Any]) -> None:
        if self.wire is not None:
            self.wire.on_reply(number, record)
        self.replies[int(record["seat"])] = record["choice"]

    def on_late(self, number: int, record: dict[str, Any]) -> None:
        if self.wire is not None:
            self.wire.on_late(number, record)

    def on_sent(self, number: int, record: dict[str, Any]) -> None:
        wire = self.transcript(number, record)
        self.sync()  # a sent line names the events up to now, logged after it
        wire.on_sent(number, self.line_bytes, self.engine(number), self.events, self.disqualified)

    def on_received(self, number: int, record: dict[str, Any]) -> None:
        self.transcript(number, record).on_received(number, record)

    def transcript(self, number: int, record: dict[str, Any]) -> TranscriptCheck:
        """The wire transcript's check; a format 1 log has no transcript."""
        if self.wire is None:
            raise LogError(f"a {record['type']!r} line in a log of format {self.format}", number)
        return self.wire

    def on_lost(self, number: int, record: dict[str, Any]) -> None:
        if self.wire is not None:
            self.wire.on_lost(number, record)
        else:
            self.unverifiable.append(Unverifiable(number, "lost", "how the connection was lost"))

    def on_stderr(self, number: int, record: dict[str, Any]) -> None:
        self.unverifiable.append(
            Unverifiable(number, "stderr", f"what seat {record['seat']} wrote to its stderr")
        )

    def on_fault(self, number: int, record: dict[str, Any]) -> None:
        seat = int(record["seat"])
        if not 0 <= seat < len(self.disqualified):
            raise LogError(f"a fault of seat {seat}, which is not at the table", number)
        kind = str(record["kind"])
        try:
            fault_kind = FaultKind(kind)
        except ValueError:
            raise LogError(f"unknown fault kind {kind!r}", number) from None
        self.fault_counts[seat] += 1
        if type(record["count"]) is not int or type(record["disqualified"]) is not bool:
            raise LogError("a fault whose count is not a number or disqualified not a bool", number)
        if record["count"] != self.fault_counts[seat]:
            raise LogError(
                f"seat {seat}'s fault count is {record['count']}, "
                f"but this is its fault number {self.fault_counts[seat]}",
                number,
            )
        flagged = bool(record["disqualified"])
        due = fault_kind in DISQUALIFY_AT_ONCE or self.fault_counts[seat] >= self.max_faults
        if due and not self.disqualified[seat] and not flagged:
            raise LogError(
                f"seat {seat}'s {kind} fault (number {self.fault_counts[seat]}) disqualifies, "
                "but the log does not say so",
                number,
            )
        if flagged and self.disqualified[seat]:
            raise LogError(f"seat {seat} is disqualified a second time", number)
        if flagged:
            self.disqualified[seat] = True
        self.faults.append(
            FaultLine(
                seat, int(record["hand"]), kind, str(record["detail"]), record["applied"], flagged
            )
        )
        if self.wire is not None:
            match = self.engine(number)
            self.wire.on_fault(number, record, match, self.events, self.checked, self.disqualified)

    def on_decision(self, number: int, record: dict[str, Any]) -> None:
        match = self.engine(number)
        self.sync()
        if self.checked != len(self.events):
            missing = log_event(self.events[self.checked])
            raise LogError(
                f"event {self.checked} is missing before this decision: {missing}", number
            )
        seat = match.current_seat()
        if seat is None:
            raise LogError("a decision after the match is over", number)
        if int(record["seat"]) != seat:
            raise LogError(
                f"a decision of seat {record['seat']}, but seat {seat} is to act", number
            )
        by = record["by"]
        sent = None
        if self.wire is not None:
            self.same_hand(number, record)
            sent = self.wire.on_decision(number, seat, by, self.disqualified)
        # The request sent, when one was (the same engine state), or one built to compare.
        request = sent or build_request(match, 1, time_left_ms=0, time_bank_ms=0)
        if record["decision"] != request.decision:
            raise LogError(
                f"a {record['decision']} decision, but the engine asks for {request.decision}",
                number,
            )
        choice = record["choice"]
        self.check_chooser(number, seat, by, choice, request)
        fault = apply_choice(match, request, choice)
        if fault is not None:
            raise LogError(
                f"seat {seat}'s decision {choice!r} is {fault.kind}: {fault.detail}", number
            )
        self.replies.pop(seat, None)
        self.decided += 1
        self.sync()

    def check_chooser(
        self, number: int, seat: int, by: object, choice: object, request: Request
    ) -> None:
        """A decision ``by`` the default is the request's default; ``by`` the bot, its reply."""
        if by == "default":
            if choice != request.default:
                raise LogError(
                    f"the default choice is {request.default!r}, the log applied {choice!r}", number
                )
            self.defaults[seat] += 1
        elif by == "bot":
            if self.replies.get(seat, _NO_REPLY) != choice:
                raise LogError(
                    f"seat {seat}'s decision {choice!r} is not the choice it replied "
                    f"({self.replies.get(seat, 'no reply')!r})",
                    number,
                )
        else:
            raise LogError(f"a decision by {by!r} (expected bot or default)", number)

    def on_result(self, number: int, record: dict[str, Any]) -> None:
        match = self.engine(number)
        self.sync()
        if not match.is_over:
            raise LogError("the result comes before the match is over", number)
        if self.checked != len(self.events):
            missing = log_event(self.events[self.checked])
            raise LogError(f"event {self.checked} is missing before the result: {missing}", number)
        expected = self.recompute(record)
        logged: dict[str, Any] = copy.deepcopy(record)
        for key in ("type", "log_path", "wall_ms"):
            logged.pop(key, None)
        want: dict[str, Any] = result_json(expected)
        want.pop("log_path", None)
        want.pop("wall_ms", None)
        for seat in [*logged.get("seats", []), *want["seats"]]:
            for field in _UNCHECKED_SEAT_FIELDS:
                seat.pop(field, None)
        if logged != want:
            raise LogError(f"the result differs: {_first_difference(logged, want)}", number)
        if self.wire is not None:
            self.wire.on_result(number)
            self.unverifiable.extend(self.wire.unverifiable)
        self.unverifiable.append(Unverifiable(number, "result", _RESULT_UNVERIFIABLE))
        try:
            self.result = result_from_json(record)
        except msgspec.ValidationError as error:
            raise LogError(f"the result cannot be read: {error}", number) from None

    def recompute(self, record: dict[str, Any]) -> MatchResult:
        match = self.match
        assert match is not None
        outcome = match.outcome()
        places = final_places(outcome.places, self.disqualified)
        by_seat: list[list[FaultRecord]] = [[] for _ in self.names]
        for fault in self.faults:
            by_seat[fault.seat].append(FaultRecord(fault.kind, fault.hand, fault.detail))
        seats = [
            SeatResult(
                seat=seat,
                name=self.names[seat],
                place=places[seat],
                chips=outcome.chips[seat],
                status="disqualified" if self.disqualified[seat] else "ok",
                faults=by_seat[seat],
                net_chips=outcome.net_chips[seat],
                boodle_chips=self.boodle[seat],
                hands_won=self.won[seat],
                decisions=self.decisions[seat],
                defaults=self.defaults[seat],
            )
            for seat in range(len(self.names))
        ]
        return MatchResult(
            match_id=str(self.header["match_id"]),
            seed=int(self.header["seed"]),
            rules=self.rules.to_dict(),
            hands=outcome.hands_played,
            seats=seats,
            log_path=None,
            reason=outcome.reason,
        )


_NO_REPLY = object()

# Lines between a received line and the verdict on it: fault() logs the events first.
_BETWEEN_A_LINE_AND_ITS_VERDICT = frozenset({"event", "chance"})
# Lines whose handler compares the whole line with the bytes it must be (half a log is
# event lines, and a sent line is the largest): the run loop's look would be a second one.
_LOOKED_AT_WHOLE = frozenset({"event", "sent"})
_VERDICTS = frozenset({"reply", "late", "fault"})

# The fields of each record a referee writing format 2 writes (``referee.match.log``), and
# nothing else: a field added or renamed by hand is a changed line.  The header's vary.
_FIELDS: dict[str, tuple[set[str], ...]] = {
    kind: tuple({"type", *names.split()} for names in alternatives)
    for kind, alternatives in {
        "chance": ("hand hands dead",),
        "event": ("n event",),
        "request": ("seat hand id decision legal default time_left_ms",),
        "reply": ("seat id choice latency_ms",),
        "late": ("seat id choice",),
        "fault": ("seat hand kind detail id applied count disqualified",),
        "decision": ("seat hand decision choice by",),
        "sent": ("seat t lines",),
        "received": (
            "seat t line",
            "seat t line spaces",
            "seat t line unread",
            "seat t line spaces unread",
            "seat t line_base64",
        ),
        "lost": ("seat kind detail",),
        "stderr": ("seat text bytes dropped",),
    }.items()
}

_HEADER_UNVERIFIABLE = (
    "when and where it was played (started, referee, python, platform, sandbox) and each "
    "bot's command, cwd, transport, reported name and version, alive and lost"
)
_RESULT_UNVERIFIABLE = "log_path, wall_ms and each seat's think_ms and cpu_ms (measured)"
_NO_TRANSCRIPT = (
    "log format 1 keeps no wire transcript: what the seats were sent and sent back, and the "
    "lines behind each reply and fault; nor are its lines held to format 2's exact form "
    "(each line as the referee encodes it, its fields, their types, its hand)"
)


# The types of the fields the records share (format 2), exactly: json's true is not 1.
_TYPES: dict[str, tuple[type, ...]] = {
    **dict.fromkeys(("seat", "hand", "n", "count", "time_left_ms"), (int,)),
    **dict.fromkeys(("t", "latency_ms"), (float,)),
    **dict.fromkeys(("kind", "detail", "decision", "by"), (str,)),
    "id": (int, type(None)),
    "disqualified": (bool,),
}
_TYPED: dict[str, list[tuple[str, tuple[type, ...]]]] = {
    kind: [(field, _TYPES[field]) for field in sorted(set.union(*alternatives)) if field in _TYPES]
    for kind, alternatives in _FIELDS.items()
}

canonical = msgspec.json.Encoder().encode


def _respelled(raw: bytes, record: dict[str, Any]) -> str:
    """Where ``raw`` first differs from its record re-encoded, for the error."""
    again = canonical(record)
    at = next((i for i, (a, b) in enumerate(zip(raw, again, strict=False)) if a != b), None)
    at = min(len(raw), len(again)) if at is None else at
    got = raw[max(0, at - 20) : at + 20].decode("utf-8", "replace")
    return f"at byte {at}, {got!r} is written {again[max(0, at - 20) : at + 20].decode()!r}"


def _by_line(item: Unverifiable) -> tuple[bool, int]:
    return (item.line is None, item.line or 0)


def _first_difference(logged: Any, want: Any, where: str = "") -> str:
    """Where two JSON values first differ, as ``seats[1].place: the log has 2, the engine 3``."""
    if isinstance(logged, dict) and isinstance(want, dict):
        for key in [*want, *(k for k in logged if k not in want)]:
            if logged.get(key, _NO_REPLY) != want.get(key, _NO_REPLY):
                return _first_difference(logged.get(key), want.get(key), f"{where}.{key}")
    if isinstance(logged, list) and isinstance(want, list) and len(logged) == len(want):
        for index, (a, b) in enumerate(zip(logged, want, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{where}[{index}]")
    return f"{where.lstrip('.') or 'the result'}: the log has {logged!r}, the replay gives {want!r}"


def verify_log(path: Path) -> Replay:
    """Re-run the engine from the log at ``path``; ``LogError`` names the first differing line
    (``NotAMatchLog`` when the file is not a match log at all)."""
    return _Verifier(path).run()


def render_replay(replay: Replay) -> list[str]:
    """The match for people: the table, then hand by hand with faults, then the result."""
    from referee.text.render import render

    header = replay.header
    lines = [
        f"Match {header.get('match_id')} · seed {header.get('seed')} · "
        f"{header.get('players')} players · {header.get('referee')}",
    ]
    scripted = header.get("scripted")
    if scripted:  # the seed did not choose everything: say what a script chose instead
        chosen = []
        if scripted.get("first_dealer") is not None:
            chosen.append(f"the first dealer (seat {scripted['first_dealer']})")
        if scripted.get("deals"):
            count = len(scripted["deals"])
            chosen.append(f"the first {count} deals" if count > 1 else "the first deal")
        lines.append(f"  scripted, not from the seed: {' and '.join(chosen)}")
    for bot in header.get("bots", []):
        reported = bot.get("reported_name")
        said = ""
        if reported:
            said = f" (reports {reported} {bot.get('reported_version') or ''}".rstrip() + ")"
        # No command: the referee started no process for it (a remote bot that connected,
        # or an opponent of `newmarket check` played inside the referee).
        command = " ".join(bot.get("command") or []) or "(no process started: remote or in-process)"
        lines.append(
            f"  seat {bot['seat']}: {bot['name']}{said} — {bot.get('transport')}: {command}"
        )
    lines.append("")
    by_hand: dict[int, list[FaultLine]] = {}
    for fault in replay.faults:
        by_hand.setdefault(fault.hand, []).append(fault)
    names = replay.names
    for fault in by_hand.pop(0, []):
        lines.append(_fault_line(fault, names))
    boodle = replay.rules.boodle_cards
    number = 0
    for hand in hands(replay.events):
        started = next((e for e in hand if isinstance(e, ev.HandStarted)), None)
        if started is not None:
            number = started.hand
        lines.extend(render(hand, names, boodle))
        for fault in by_hand.pop(number, []) if started is not None else []:
            lines.append(_fault_line(fault, names))
    for rest in by_hand.values():
        lines.extend(_fault_line(fault, names) for fault in rest)
    return lines


def _fault_line(fault: FaultLine, names: list[str]) -> str:
    applied = "" if fault.applied is None else f"; {fault.applied} applied"
    dq = "; DISQUALIFIED" if fault.disqualified else ""
    return f"  ! {names[fault.seat]}: {fault.kind} — {fault.detail}{applied}{dq}"
