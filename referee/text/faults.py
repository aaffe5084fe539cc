"""A bot's fault in words, with its evidence: one wording for ``newmarket check`` and the server.

``fault_line`` is the line ``check`` prints for a fault and a match page
shows; ``MEANINGS`` says what each kind means (SPEC.md, "Faults") to someone
who has not read the spec; ``fault_evidence`` finds, in a match log's
records, what each fault was about: the request it answered, what came back
(the line as the bot wrote it, or nothing), the time it took and what the
referee did instead.  Pure functions of the records, so a page, the check
and a test read a log the same way.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

MEANINGS: Final = {
    "startup": "it did not say ready, validly, within the start-up time",
    "timeout": "it did not reply within the time it had left",
    "crash": "its process ended during the match",
    "eof": "its output (stdout or its connection) closed during the match",
    "malformed": "its line was not a reply the protocol allows (not JSON, or a mis-shaped choice)",
    "line_too_long": "it wrote a line longer than the protocol's limit",
    "illegal": "it chose something the rules forbid at that moment",
    "protocol": "it broke the conversation (an unknown or repeated id, a message out of turn)",
}

CRASH_HINT: Final = (
    "the process ended before it answered anything in this match: did it exit at the end "
    "of the previous match, or at a message it did not expect? One process plays many "
    "matches and ignores what it does not know (SPEC.md 2, 3.3)"
)

STDERR_MARK = "; stderr: "  # how a crash's or a start-up's detail quotes the bot's last line
STDERR_HIDDEN = "; stderr: (shown to its owner only)"
SHOWN_CHARS = 300  # of a line the bot wrote: its start, as the check's transcript cuts it


_QUOTED_STDERR = re.compile(re.escape(STDERR_MARK) + "[^\n]*")


def without_stderr(detail: str) -> str:
    """A fault's detail without the last stderr line it quotes (``exited with status 1;
    stderr: ...``, to the end of its line): a bot's stderr is its owner's alone."""
    return _QUOTED_STDERR.sub(STDERR_HIDDEN, detail) if STDERR_MARK in detail else detail


def without_stderr_in(value: Any) -> Any:
    """``without_stderr`` on every string of JSON-able data (a replay's narrated steps)."""
    if isinstance(value, str):
        return without_stderr(value)
    if isinstance(value, dict):
        return {key: without_stderr_in(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [without_stderr_in(item) for item in value]
    return value


def fault_line(kind: str, detail: str, request_id: object = None) -> str:
    """``malformed fault: request 3: ...``: a fault as check and the match page say it."""
    if request_id is not None and f"request {request_id}" not in detail:
        detail = f"request {request_id}: {detail}"
    return f"{kind} fault: {detail}"


@dataclasses.dataclass(frozen=True)
class FaultEvidence:
    seat: int
    hand: int
    kind: str
    line: str  # fault_line's
    meaning: str
    request: str | None  # the request it answered (or failed to), in words
    came_back: str  # what the bot sent back, or that nothing came
    time_used_ms: float | None
    consequence: str  # the default played, disqualification

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def fault_evidence(records: Sequence[Mapping[str, Any]]) -> list[FaultEvidence]:
    """Each fault of a match log's records, in order, with its evidence."""
    requests: dict[tuple[int, object], Mapping[str, Any]] = {}
    sent_at: dict[tuple[int, object], float] = {}
    replies: dict[tuple[int, object], Mapping[str, Any]] = {}
    received: dict[int, Mapping[str, Any]] = {}
    answered: dict[int, int] = {}  # seat -> replies so far
    found = []
    for index, record in enumerate(records):
        kind = record.get("type")
        seat = record.get("seat")
        if not isinstance(seat, int):
            continue
        if kind == "sent":
            for item in record.get("lines") or []:
                if isinstance(item, dict) and item.get("type") == "request":
                    sent_at[(seat, item.get("id"))] = float(record.get("t") or 0)
        elif kind == "request":
            requests[(seat, record.get("id"))] = record
        elif kind == "received":
            received[seat] = record
        elif kind == "reply":
            replies[(seat, record.get("id"))] = record
            answered[seat] = answered.get(seat, 0) + 1
        elif kind == "fault":
            found.append(
                _evidence(
                    record,
                    records[index + 1 :],
                    requests,
                    sent_at,
                    replies,
                    received.get(seat),
                    answered.get(seat, 0),
                )
            )
            received.pop(seat, None)
    return found


def _evidence(
    fault: Mapping[str, Any],
    after: Sequence[Mapping[str, Any]],
    requests: Mapping[tuple[int, object], Mapping[str, Any]],
    sent_at: Mapping[tuple[int, object], float],
    replies: Mapping[tuple[int, object], Mapping[str, Any]],
    last_line: Mapping[str, Any] | None,
    answered: int,
) -> FaultEvidence:
    seat = int(fault["seat"])
    kind = str(fault.get("kind"))
    request_id = fault.get("id")
    key = (seat, request_id)
    request = requests.get(key) if request_id is not None else None
    reply = replies.get(key) if request_id is not None else None
    used: float | None = None
    if reply is not None:
        used = float(reply.get("latency_ms") or 0)
    elif kind == "timeout" and request is not None:
        # Until the referee told it so: the fault's own line on the wire, when logged.
        told = _told_at(after, seat, request_id)
        used = round(told - sent_at[key], 3) if told is not None and key in sent_at else None
        used = used if used is not None else float(request.get("time_left_ms") or 0)
    elif last_line is not None and key in sent_at:
        used = round(float(last_line.get("t") or 0) - sent_at[key], 3)
    came_back = _came_back(kind, last_line, after, seat, request_id)
    consequence = []
    if fault.get("applied") is not None:
        consequence.append(f"the referee played the default {_shown(fault['applied'])} for it")
    if fault.get("disqualified"):
        consequence.append("it was disqualified (the referee plays its defaults to the end)")
    elif fault.get("count") is not None:
        consequence.append(f"fault {fault['count']} of this seat in this match")
    if kind == "crash" and not answered:
        consequence.append(CRASH_HINT)
    return FaultEvidence(
        seat=seat,
        hand=int(fault.get("hand") or 0),
        kind=kind,
        line=fault_line(kind, str(fault.get("detail")), request_id),
        meaning=MEANINGS.get(kind, "a fault of a kind this server does not know"),
        request=None if request is None else _request_words(request),
        came_back=came_back,
        time_used_ms=used,
        consequence="; ".join(consequence),
    )


def _told_at(after: Sequence[Mapping[str, Any]], seat: int, request_id: object) -> float | None:
    """When the referee wrote the fault for ``request_id`` to ``seat`` (its ``sent`` line)."""
    for record in after:
        if record.get("type") != "sent" or record.get("seat") != seat:
            continue
        for item in record.get("lines") or []:
            if isinstance(item, dict) and (item.get("type"), item.get("id")) == (
                "fault",
                request_id,
            ):
                return float(record.get("t") or 0)
    return None


def _came_back(
    kind: str,
    last_line: Mapping[str, Any] | None,
    after: Sequence[Mapping[str, Any]],
    seat: int,
    request_id: object,
) -> str:
    if kind == "timeout":
        late = next(
            (
                r
                for r in after
                if r.get("type") == "late" and r.get("seat") == seat and r.get("id") == request_id
            ),
            None,
        )
        if late is not None:
            return f"nothing in time; a late reply {_shown(late.get('choice'))} came after, ignored"
        return "nothing in time"
    if last_line is None:
        return "no line (the connection or process ended)" if kind in ("crash", "eof") else "-"
    if "line" in last_line:
        text = str(last_line["line"])
    else:
        text = f"{len(str(last_line.get('line_base64', '')))} characters of base64 (not UTF-8)"
    if len(text) > SHOWN_CHARS:
        text = f"{text[:SHOWN_CHARS]} … ({len(text) - SHOWN_CHARS} more characters)"
    return text


def _request_words(request: Mapping[str, Any]) -> str:
    legal = " ".join(_shown(c) for c in request.get("legal") or [])
    return (
        f"request {request.get('id')}: {request.get('decision')} in hand {request.get('hand')}; "
        f"legal: {legal or '-'}; default {_shown(request.get('default'))}; "
        f"{request.get('time_left_ms')} ms to answer"
    )


def _shown(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    return str(value)
