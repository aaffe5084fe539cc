"""How a finished match's log is kept: a compact record (the default) or the full JSON lines.

A league and the server write each match's full log as it is played
(``referee.match.log``), then keep it in the form their settings name
(``match_logs``): ``compact`` turns it into a compact record
(``referee.match.compact``, ``MATCH_ID.nmr``) once the record is shown to
rebuild it byte for byte, and removes the full log; ``full`` leaves the
``MATCH_ID.jsonl``.  Either way the match's stored files are that one file,
whose path the database keeps, so whoever prunes logs deletes that path and
nothing is left behind (the bots' stderr is inside it).

Whatever reads logs reads both forms by their content (``full_log_lines``,
``referee.match.log``'s readers), never by the file's name.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Literal, get_args

import msgspec

from referee.match.compact import CompactError, checked_compact
from referee.match.log import raw_lines
from referee.match.result import MatchResult
from referee.storage.private_files import private_opener

LogForm = Literal["compact", "full"]
LOG_FORMS: tuple[str, ...] = get_args(LogForm)
DEFAULT_LOG_FORM: LogForm = "compact"
COMPACT_SUFFIX = ".nmr"
FULL_SUFFIX = ".jsonl"

__all__ = [
    "COMPACT_SUFFIX",
    "DEFAULT_LOG_FORM",
    "FULL_SUFFIX",
    "LOG_FORMS",
    "LogForm",
    "full_log_lines",
    "keep_log",
    "kept",
    "kept_path",
    "stored_log",
    "stored_path",
]


def keep_log(path: Path, form: LogForm) -> Path:
    """Keep the full log at ``path`` in ``form``; the path of the file that holds it now.

    ``compact``: the record is made and shown to rebuild the log byte for byte
    (``checked_compact``), written beside it (``.nmr``) and synced, and only then is the
    full log removed.  A log the record cannot keep (cut short by a stopped referee, or
    not one the engine can follow) or a record that cannot be written (a full disk)
    leaves the full log where it is: a finished match's log is never lost to its
    compaction.
    """
    if form == "full":
        return path
    target = kept_path(path, form)
    partial = target.with_name(target.name + ".part")
    try:
        record = checked_compact(path.read_bytes())
        with open(partial, "wb", opener=private_opener) as handle:
            handle.write(record)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, target)
    except (OSError, CompactError):
        with contextlib.suppress(OSError):
            partial.unlink()
        return path
    with contextlib.suppress(OSError):
        path.unlink()
    return target


def kept_path(path: Path, form: LogForm) -> Path:
    """Where ``keep_log`` keeps the full log at ``path`` in ``form`` when all goes well."""
    return path if form == "full" else path.with_suffix(COMPACT_SUFFIX)


def kept(result: MatchResult, form: LogForm) -> MatchResult:
    """``result`` with its log kept in ``form`` (``keep_log``) and ``log_path`` naming the file."""
    if result.log_path is None or form == "full":
        return result
    return msgspec.structs.replace(result, log_path=keep_log(result.log_path, form))


def stored_path(logs: Path, match_id: str, result: MatchResult) -> Path:
    """Where in ``logs`` a table's finished match keeps its log: the file its result names
    (a table on another machine names its own path; its name is the same here)."""
    name = result.log_path.name if result.log_path is not None else f"{match_id}{FULL_SUFFIX}"
    return logs / name


def stored_log(logs: Path, match_id: str) -> Path | None:
    """The file in ``logs`` that holds match ``match_id``'s log, in either form, if any."""
    for suffix in (COMPACT_SUFFIX, FULL_SUFFIX):
        candidate = logs / f"{match_id}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def full_log_lines(path: Path) -> Iterator[bytes]:
    """The full match log's lines, each ending in a newline, whatever form ``path`` keeps it in.

    A compact record is rebuilt (and its digest checked after the last line); a full log
    is read as it is.  ``LogError`` with one line naming the file and what is wrong.  The
    lines are not verified: ``referee.tools.replay.verify_log`` does that.
    """
    for _number, raw in raw_lines(path):
        yield raw
