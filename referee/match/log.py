"""The match log: one JSON object per line, the single source of truth about a match.

A log is written as the match is played and read back by ``newmarket replay``,
which re-runs the engine from it and checks every line.  Each line has a
``type``; the first is always the ``header``, the last (of a finished match)
the ``result``:

``header``    format, versions (referee, protocol, Python), match_id, seed,
              players, each seat's starting chips (``chips``), the first
              dealer (the match's first chance outcome), ``scripted`` only if
              the caller chose the first dealer or deals instead of the seed
              (``newmarket check``; docs/match-log.md), every rule option,
              the time control, and per seat the
              bot's name, command, working directory, transport, the name and
              version it reported, and whether it started; ``sandbox``: the
              level, the protections active and those missing on this
              machine, and the limits (``referee.sandbox``).
``chance``    a hand's deal (every hand and the dead hand): the match's chance
              outcomes, written before the ``cards_dealt`` event they explain.
``event``     one omniscient engine event (``referee.match.convert.log_event``), with
              ``n``, its index among the match's events.
``request``   seat, hand, id, decision, legal choices, default, time left
              (written just after the request itself, so after the events
              that preceded it).
``reply``     seat, id, the choice as sent, latency in ms.
``late``      a reply to a request that had timed out: discarded, never applied.
``fault``     seat, hand, kind, detail, the request id, the choice applied,
              the seat's fault count and whether it disqualified.
``decision``  seat, hand, the decision, the choice applied, and ``by``:
              ``bot``, or ``default`` (a fault, a disqualified or dead seat).
``sent``      (format 2) the wire transcript: one write to a seat (as attempted: a
              bot that is gone may not have read it), ``t`` its time in
              ms from the match's start, ``lines`` each line written: a message
              as it was sent, or for an ``events`` message the list of its
              events, each the ``n`` of an ``event`` line (its wire form is
              regenerated from it: ``referee.tools.transcript``) or the referee's own
              event as sent.
``received``  (format 2) a line a seat sent during the match, at ``t``: ``line``
              (its text) or ``line_base64`` when it is not UTF-8; a message's line
              without its JSON whitespace past 64 bytes of it, ``spaces`` their count,
              or a reply re-encoded past 64 bytes of anything else, ``unread``.
``lost``      a bot lost after the result was decided (while told the end).
``stderr``    what a bot wrote to stderr during the match (head and tail, capped).
``result``    the ``MatchResult``: with the match's ``wall_ms`` and each
              seat's ``cpu_ms`` (its process tree's CPU time in the match).

Each kind is a struct of ``referee.match.records`` (the ``LogRecord`` union),
from which the log's JSON schema, docs/match-log.schema.json, is generated.
``read_records`` decodes a log into them; ``read_log`` into plain JSON values.

Every reader here reads a compact record (``referee.match.compact``) too, by its
first bytes: its full log is rebuilt by the engine, line for line, and read as if
it were the file (``raw_lines``); a league and the server keep their logs so.

Lines are buffered per decision and flushed before the referee waits on a
bot, so a killed referee leaves a readable prefix (at worst a last line cut
short, which ``read_log`` reports as such) at one write per decision.  Ctrl-C
(trio's ``KeyboardInterrupt``) never lands inside a record or a flush: those
are KI-protected, so the interrupt waits for the referee's next ``await`` and
a log cut by it is a clean prefix, every line once and whole.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
from trio.lowlevel import enable_ki_protection

from referee.match.compact import MAGIC, CompactError, is_compact, rebuild
from referee.match.records import LogRecord
from referee.storage.private_files import private_dir, private_opener

LOG_FORMAT = 2
"""The version of the layout above; replay reads this format and format 1 (no transcript)."""
READABLE_FORMATS = (1, 2)

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()
_record_decoder: msgspec.json.Decoder[LogRecord] = msgspec.json.Decoder(LogRecord)


class LogError(ValueError):
    """A log cannot be read or does not verify; the message names the line."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message if line is None else f"line {line}: {message}")
        self.line = line
        self.reason = message


class MatchLog:
    """Appends records to a JSONL file (or nowhere, with ``path=None``)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._file: io.BufferedWriter | None = None
        self._buffer = bytearray()
        self.lines = 0
        if path is not None:
            private_dir(path.parent)
            self._file = open(path, "wb", opener=private_opener)  # noqa: SIM115 (close())

    @enable_ki_protection  # a record and its newline, or nothing (see the module doc)
    def write(self, record: LogRecord | dict[str, Any]) -> None:
        self.lines += 1
        if self._file is not None:
            self._buffer += _encoder.encode(record)
            self._buffer += b"\n"

    @enable_ki_protection
    def write_json(self, record: bytes) -> None:
        """A record already encoded as one JSON object (no newline), as ``write`` would."""
        self.lines += 1
        if self._file is not None:
            self._buffer += record
            self._buffer += b"\n"

    @enable_ki_protection
    def flush(self) -> None:
        """Write the buffered lines; each byte is written once, whatever interrupts it.

        Ctrl-C used to land just after the write syscall, before the buffer was
        cleared, and ``close`` wrote the same lines again: a log that replayed
        as a decision out of turn.  The buffer is now taken before the write,
        and the whole flush is KI-protected (trio holds the interrupt).
        """
        if self._file is not None and self._buffer:
            data, self._buffer = self._buffer, bytearray()
            try:
                self._file.write(data)
                self._file.flush()
            except OSError as error:
                # A full disk: name the file, as open() would, so whoever reports it says where.
                # What did not fit is dropped: the match ends with this error, unrecorded.
                raise OSError(error.errno, error.strerror, str(self.path)) from None

    def close(self) -> None:
        file = self._file
        if file is None:
            return
        try:
            self.flush()
        finally:
            self._file = None
            with contextlib.suppress(OSError):  # a failed flush has said it, naming the file
                file.close()


def read_log(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, record)`` for each line; ``LogError`` naming the first bad line."""
    for number, _raw, record in read_log_lines(path):
        yield number, record


def read_log_lines(path: Path) -> Iterator[tuple[int, bytes, dict[str, Any]]]:
    """``read_log``'s records with each line's bytes, for a reader that needs them exactly
    (a ``sent`` record's messages are the very bytes the seat was sent)."""
    for number, raw in raw_lines(path):
        yield number, raw, _plain(number, raw)


def read_records(path: Path) -> Iterator[tuple[int, LogRecord]]:
    """``(line number, record)`` for each line, decoded into ``LogRecord``'s structs;
    ``LogError`` naming the file and the first bad line (not JSON, or not a record)."""
    number = 0
    try:
        for number, raw in raw_lines(path):
            yield number, _typed(number, raw)
    except LogError as error:
        if error.line is None and number == 0:  # ``raw_lines`` has named the file
            raise
        error.args = (f"{path}: {error}",)
        raise


def raw_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """``(line number, line with its newline)`` of the full log at ``path``, read as it is or
    rebuilt from a compact record; ``LogError`` naming the file for one that cannot be read."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed below)
    except OSError as error:
        raise LogError(f"cannot read {path}: {error.strerror or error}") from None
    with handle:
        if is_compact(handle.read(len(MAGIC))):
            # A compact record (referee.match.compact): its full log, rebuilt by the engine.
            yield from _rebuilt_lines(path, MAGIC + handle.read())
            return
        handle.seek(0)
        number = 0
        for number, raw in enumerate(handle, start=1):
            if not raw.endswith(b"\n"):
                raise LogError("the last line is cut short (was the referee killed?)", number)
            yield number, raw
        if number == 0:
            raise LogError(f"{path} is empty")


def _rebuilt_lines(path: Path, data: bytes) -> Iterator[tuple[int, bytes]]:
    """``raw_lines`` of a compact record.  Its errors read as a full log's: the file named
    before the first line, then the line (``line N: compact record: ...``), and neither
    for a rebuilt log its digest refuses after the last line (whoever reads the lines
    names the file, as for any later line)."""
    number = 0
    try:
        for number, raw in enumerate(rebuild(data), start=1):
            yield number, raw
    except CompactError as error:
        if error.line is not None or number > 0:
            raise LogError(f"compact record: {error.reason}", error.line) from None
        raise LogError(f"{path}: compact record: {error}") from None
    if number == 0:
        raise LogError(f"{path} is empty")


def _plain(number: int, raw: bytes) -> dict[str, Any]:
    try:
        record = _decoder.decode(raw)
    except msgspec.DecodeError as error:
        raise LogError(f"not JSON: {error}", number) from None
    except UnicodeDecodeError:
        raise LogError("not UTF-8 text", number) from None
    if not isinstance(record, dict) or not isinstance(record.get("type"), str):
        raise LogError('not a log record (an object with a "type")', number)
    return record


def _typed(number: int, raw: bytes) -> LogRecord:
    try:
        return _record_decoder.decode(raw)
    except msgspec.ValidationError as error:
        raise LogError(f"not a log record: {error}", number) from None
    except msgspec.DecodeError as error:
        raise LogError(f"not JSON: {error}", number) from None
    except UnicodeDecodeError:
        raise LogError("not UTF-8 text", number) from None


class NotAMatchLog(LogError):
    """The file is not a match log a replay can read: it cannot be opened, it is
    empty, or its first line is not a header of a known format.

    A log whose first line is a good header and which then goes wrong does not
    verify (a plain ``LogError``); this file was never a match log at all, which
    ``newmarket replay`` answers as it answers any bad argument (exit 2).  The
    message starts with the file's name.
    """

    def __init__(self, path: Path, error: LogError) -> None:
        where = "" if str(path) in error.reason else f"{path}: "
        super().__init__(f"{where}{error}")
        self.line = error.line
        self.reason = error.reason


def log_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``read_log``'s records, after a first line that is a header of a format this replay
    reads; ``NotAMatchLog`` if there is no such line, ``LogError`` for a later bad line."""
    for number, _raw, record in log_lines(path):
        yield number, record


def log_lines(path: Path) -> Iterator[tuple[int, bytes, dict[str, Any]]]:
    """``log_records`` with each line's bytes (``read_log_lines``)."""
    lines = read_log_lines(path)
    try:
        number, raw, header = next(lines)
        _check_header(number, header)
    except LogError as error:
        raise NotAMatchLog(path, error) from None
    yield number, raw, header
    yield from lines


def log_typed_records(path: Path) -> Iterator[tuple[int, LogRecord]]:
    """``log_records`` decoded into ``LogRecord``'s structs: ``NotAMatchLog`` as there,
    ``LogError`` naming the line (not the file) for a later line that is no record."""
    lines = raw_lines(path)
    try:
        number, raw = next(lines)
        _check_header(number, _plain(number, raw))
        header = _typed(number, raw)
    except LogError as error:
        raise NotAMatchLog(path, error) from None
    yield number, header
    for number, raw in lines:
        yield number, _typed(number, raw)


def _check_header(number: int, header: dict[str, Any]) -> None:
    """A first line that is a header of a format this replay reads, or ``LogError``."""
    if header["type"] != "header":
        raise LogError(f"the first line must be the header, got {header['type']!r}", number)
    if header.get("format") not in READABLE_FORMATS:
        raise LogError(
            f"log format {header.get('format')!r}; this replay reads formats "
            f"{', '.join(map(str, READABLE_FORMATS))}",
            number,
        )
