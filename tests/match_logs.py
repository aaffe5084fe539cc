"""Reading the match logs a league or the server kept, in whichever form they keep them.

Both keep compact records by default (``referee.match.archive``); a test that looks at a
log's lines reads them rebuilt, as ``newmarket replay`` does, never the file's bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from referee.match.archive import COMPACT_SUFFIX, FULL_SUFFIX, full_log_lines


def kept_logs(directory: Path, recursive: bool = False) -> list[Path]:
    """The match logs in ``directory`` (and below it, ``recursive``), in either form."""
    find = directory.rglob if recursive else directory.glob
    return sorted(path for suffix in (COMPACT_SUFFIX, FULL_SUFFIX) for path in find(f"*{suffix}"))


def log_text(path: Path) -> str:
    """The full log's text, rebuilt from a compact record if it is one."""
    return b"".join(full_log_lines(path)).decode("utf-8")


def log_records(path: Path) -> list[dict[str, Any]]:
    """Each line of the full log as JSON."""
    return [json.loads(line) for line in full_log_lines(path)]


def only_log(directory: Path) -> Path:
    """The one match log ``newmarket match --log-dir DIRECTORY`` wrote (named by its match id)."""
    logs = kept_logs(directory)
    assert len(logs) == 1, logs
    return logs[0]
