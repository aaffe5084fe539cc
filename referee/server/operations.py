"""The server's operations log: one line per thing an organiser would want to find later.

A competition runs for weeks; "what happened at 03:12 last Tuesday" must be
answerable from one place.  Every start, stop, upload, admission, rejection,
suspension, organiser action, retention pass, platform fault and change of
pace is one line, written:

* to the server's stderr, as a person reads it (``human``, the default) or
  as JSON lines (``newmarket serve cup.toml --log-format json``), and
* appended to ``DATA/operations.log``, always as JSON lines, so that the
  management commands (another process) land in the same file as the server
  and a page or a script can read it back (``read_operations``).

A line is ``TIME KIND key=value ...``: values that are not one plain word
are JSON-quoted, so a participant's name can never start a line of its own
or fake a field.  Nothing secret is ever a field (a token, a deal's seed, a
path under the data directory that a page could show is the caller's to
leave out); the log is the operator's, but it is copied around.

Writing the log never stops the server: a file that cannot be written (a
full disk) is said once on stderr and the stderr line still goes out.

The file is rotated by size (``[retention] operations_log_mb``, with
``operations_log_files`` old files kept: ``referee.server.log_rotation``);
``read_operations`` reads the old files and the current one as one log, and
the first line of a new file says what the rotation moved and dropped.
"""

from __future__ import annotations

import datetime
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TextIO

from referee.server import log_rotation

Value = str | int | float | bool | None
Format = Literal["human", "json"]
FORMATS: tuple[Format, ...] = ("human", "json")
FILE_NAME = "operations.log"
MIB = 1024 * 1024
MAX_MB = 10  # the file's size before it is rotated ([retention] operations_log_mb)
OLD_FILES = 5  # rotated files kept ([retention] operations_log_files)

# Every kind of line, so a typo in a caller is an error in its test, not a line nobody finds.
KINDS: frozenset[str] = frozenset(
    {
        "start",  # the server listens
        "stop",  # the server stops (signal, or an error)
        "upload",  # a participant uploaded a version (or registered a remote one)
        "admission",  # a version passed its check
        "rejection",  # a version failed its upload, build or check
        "suspension",  # a version was suspended for its faults
        "organiser",  # an organiser's action (field ``action``), from the page or the shell
        "retention",  # a retention pass pruned old match records
        "platform-fault",  # the platform failed (a table, the disk, admission's check)
        "pace",  # the scheduler changed pace (settled or full speed)
        "contest",  # a finals or challenge event (field ``event``): planned, published, played
    }
)
_PLAIN = re.compile(r"[A-Za-z0-9_.:/@+,%-]+")


class OperationsLog:
    """Writes operation lines to a stream (``format``) and to a JSON-lines file (``path``)."""

    def __init__(
        self,
        *,
        stream: TextIO | None = None,
        path: Path | None = None,
        format: Format = "human",
        clock: Callable[[], float] | None = None,
        max_bytes: int = MAX_MB * MIB,
        old_files: int = OLD_FILES,
    ) -> None:
        if format not in FORMATS:
            raise ValueError(f"log format {format!r}: expected one of {', '.join(FORMATS)}")
        self.stream = stream
        self.path = path
        self.format = format
        self.clock = clock or time.time
        self.max_bytes = max_bytes
        self.old_files = old_files
        self._file_failed = False

    @classmethod
    def for_data(
        cls,
        data: Path,
        format: Format = "human",
        *,
        stream: TextIO | None = sys.stderr,
        max_mb: int = MAX_MB,
        old_files: int = OLD_FILES,
    ) -> OperationsLog:
        """The log of the competition whose data directory is ``data``."""
        path = data / FILE_NAME
        return cls(
            stream=stream, path=path, format=format, max_bytes=max_mb * MIB, old_files=old_files
        )

    def log(self, kind: str, **fields: Value) -> dict[str, Value]:
        """Write one line of ``kind`` with ``fields``; returns the record as written."""
        if kind not in KINDS:
            raise ValueError(f"unknown operation kind {kind!r}")
        record: dict[str, Value] = {"time": _timestamp(self.clock()), "kind": kind, **fields}
        self._say(record)
        if self.path is not None:
            self._append(json_line(record))
        return record

    def _append(self, line: str) -> None:
        assert self.path is not None
        said: list[dict[str, Value]] = []

        def rotation_line(rotated: log_rotation.Rotated) -> bytes:
            # The new file's first line: a rotation is a prune when it drops the oldest file.
            record: dict[str, Value] = {
                "time": _timestamp(self.clock()),
                "kind": "retention",
                "what": "operations-log",
                "rotated_bytes": rotated.rotated_bytes,
                "dropped_bytes": rotated.dropped_bytes,
                "old_files": rotated.kept_files,
            }
            said.append(record)
            return (json_line(record) + "\n").encode()

        try:
            # Under the rotation's lock: the server's lines and a management command's never
            # interleave within a line, nor go to a file being renamed.
            log_rotation.append(
                self.path,
                (line + "\n").encode(),
                self.max_bytes,
                self.old_files,
                rotation_line,
            )
            self._file_failed = False
        except OSError as error:
            if not self._file_failed and self.stream is not None:
                self._file_failed = True
                try:
                    self.stream.write(
                        f"newmarket serve: cannot append to the operations log: {error.strerror}\n"
                    )
                    self.stream.flush()
                except (OSError, ValueError):
                    pass
        for record in said:
            self._say(record)

    def _say(self, record: dict[str, Value]) -> None:
        if self.stream is None:
            return
        text = json_line(record) if self.format == "json" else human_line(record)
        try:
            self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr must not stop the server
            pass


def human_line(record: dict[str, Value]) -> str:
    """``newmarket serve: TIME KIND key=value ...``, each odd value JSON-quoted."""
    rest = [f"{key}={_human_value(value)}" for key, value in record.items() if key not in _HEAD]
    return " ".join(["newmarket serve:", str(record["time"]), str(record["kind"]), *rest])


def json_line(record: dict[str, Value]) -> str:
    return json.dumps(record, ensure_ascii=True, separators=(",", ":"))


def read_operations(path: Path, limit: int | None = None) -> list[dict[str, Value]]:
    """The operations log's records, its rotated files' first, oldest first (the last
    ``limit``); bad lines skipped."""
    lines = log_rotation.read_lines(path, limit, lambda line: _record(line) is not None)
    records = [record for record in map(_record, lines) if record is not None]
    return records if limit is None else records[-limit:]


def _record(line: str) -> dict[str, Value] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None  # a line cut by a full disk
    return record if isinstance(record, dict) and "kind" in record else None


_HEAD = ("time", "kind")
_current: OperationsLog | None = None


def set_operations_log(log: OperationsLog | None) -> OperationsLog | None:
    """Make ``log`` the one ``log_operation`` writes to; returns the previous one."""
    global _current
    previous, _current = _current, log
    return previous


def log_operation(kind: str, **fields: Value) -> dict[str, Value]:
    """One line of ``kind`` in the process's operations log (stderr, human, if none was set)."""
    log = _current if _current is not None else OperationsLog(stream=sys.stderr)
    return log.log(kind, **fields)


def _human_value(value: Value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    text = str(value)
    return text if _PLAIN.fullmatch(text) else json.dumps(text, ensure_ascii=True)


def _timestamp(seconds: float) -> str:
    moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
