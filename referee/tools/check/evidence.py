"""The transcript a failure carries: the wire and the match log, interleaved.

On a failure the lines sent to the bot are taken from the connection
(``WireTap``, set as ``Connection.on_send``) and interleaved with the match
log's records for the bot's seat (its replies, the referee's verdicts, the
defaults applied), so the reader sees the failing step in context, numbered.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

import msgspec

from referee.text.faults import CRASH_HINT as CRASH_HINT  # re-exported: check names it
from referee.text.faults import fault_line
from referee.tools.check.expectations import Seen
from referee.tools.check.opponents import Message


@dataclasses.dataclass(frozen=True)
class Line:
    """One step of a transcript: ``<`` sent to the bot, ``>`` from it, ``!`` a verdict,
    ``=`` a default the referee applied, ``#`` a note."""

    mark: str
    text: str

    def __str__(self) -> str:
        return f"{self.mark} {self.text}"


class WireTap:
    """Every line the referee writes to the bot (``Connection.on_send``), kept until taken."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []

    def __call__(self, data: bytes) -> None:
        self.lines.extend(line for line in data.split(b"\n") if line)

    def take(self) -> list[bytes]:
        lines, self.lines = self.lines, []
        return lines


def _decode(line: bytes) -> Message:
    try:
        value = msgspec.json.decode(line)
    except msgspec.DecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def seen_of(sent: Iterable[bytes]) -> Seen:
    requests: list[Message] = []
    events: list[Message] = []
    for line in sent:
        message = _decode(line)
        if message.get("type") == "request":
            requests.append(message)
        elif message.get("type") == "events":
            events.extend(e for e in message.get("events", []) if isinstance(e, dict))
    return Seen(requests, events)


def compact_json(value: object) -> str:
    return msgspec.json.encode(value).decode()


def build_transcript(
    sent: Sequence[bytes], records: Sequence[Message], seat: int
) -> tuple[list[Line], int | None]:
    """The sent lines interleaved with the log's records for ``seat``.

    Returns the lines and the index of the first fault among them (None if
    there is none).  Each ``request`` record is matched to the sent request
    line with its id, so what came before it on the wire is shown before it.
    Once the seat is disqualified, the defaults the referee plays for it are
    folded into one note: they are the consequence, not the evidence.
    """
    weave = _Weave(sent)
    for record in records:
        if record.get("seat") == seat:
            weave.add(record)
    return weave.finish()


class _Weave:
    """``build_transcript``'s walk through one seat's records, the sent lines kept in step."""

    def __init__(self, sent: Sequence[bytes]) -> None:
        self.sent = sent
        self.out: list[Line] = []
        self.first_fault: int | None = None
        self.at = 0  # the first sent line not yet shown
        self.replies = 0
        self.disqualified = False
        self.resolving = False  # the disqualifying fault's own default is still to come
        self.folded = 0

    def add(self, record: Message) -> None:
        kind = record.get("type")
        if kind == "request":
            self._sent_through(record.get("id"))
        elif kind == "reply":
            self.replies += 1
            reply = {"type": "reply", "id": record["id"], "choice": record["choice"]}
            self.out.append(Line(">", f"{compact_json(reply)}   ({record['latency_ms']:g} ms)"))
        elif kind == "late":
            reply = {"type": "reply", "id": record["id"], "choice": record["choice"]}
            late = "(late: its request had timed out; ignored)"
            self.out.append(Line(">", f"{compact_json(reply)}   {late}"))
        elif kind == "fault":
            self._fault(record)
        elif kind == "decision" and record.get("by") == "default":
            if self.disqualified and not self.resolving:
                self.folded += 1
            else:
                self.resolving = False
                choice = compact_json(record["choice"])
                self.out.append(Line("=", f"the referee applied the default {choice}"))
        elif kind == "lost":
            self._mark_fault()
            self.out.append(Line("!", f"{record['kind']}: {record['detail']}"))

    def finish(self) -> tuple[list[Line], int | None]:
        self.out.extend(Line("<", line.decode("utf-8", "replace")) for line in self.sent[self.at :])
        if self.folded:
            note = f"disqualified: the referee made the bot's {self.folded} other decision(s)"
            self.out.append(Line("#", note))
        return self.out, self.first_fault

    def _sent_through(self, request_id: object) -> None:
        """Show the sent lines up to the request with ``request_id``."""
        sent = self.sent
        for index in range(self.at, len(sent)):
            message = _decode(sent[index])
            if message.get("type") == "request" and message.get("id") == request_id:
                shown = sent[self.at : index + 1]
                self.out.extend(Line("<", line.decode("utf-8", "replace")) for line in shown)
                self.at = index + 1
                return

    def _mark_fault(self) -> None:
        if self.first_fault is None:
            self.first_fault = len(self.out)

    def _fault(self, record: Message) -> None:
        self._mark_fault()
        line = fault_line(str(record["kind"]), str(record["detail"]), record.get("id"))
        self.out.append(Line("!", line))
        if record["kind"] == "crash" and not self.replies:
            self.out.append(Line("#", CRASH_HINT))
        if record.get("disqualified"):
            self.disqualified = True
            self.resolving = record.get("applied") is not None
