"""A bot's whole-session stderr files: ``LOGS/stderr/NAME-N.stderr``, one per table worker N.

The table workers write them (``referee.tables.worker``) and the report reads them
(``referee.report.data``); both name them here, so that what one writes is what
the other finds and nothing else.  A name becomes a file name with everything but
letters, digits and ``-_.`` as ``_``; a league refuses two bots whose names come
out the same (``league_file``), and a bot's files are exactly ``NAME-<digits>``:
``echo``'s are never ``echo-2``'s, whose text is that other bot's to write.
"""

from __future__ import annotations

import re
from pathlib import Path

SUFFIX = ".stderr"


def file_safe(name: str) -> str:
    """``name`` as a file name: every character but letters, digits and ``-_.`` as ``_``."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def stderr_path(directory: Path, bot: str, worker: int) -> Path:
    """The file in ``directory`` that table worker ``worker`` appends ``bot``'s stderr to."""
    return directory / f"{file_safe(bot)}-{worker}{SUFFIX}"


def stderr_paths(directory: Path, bot: str) -> list[Path]:
    """``bot``'s files in ``directory`` (every worker's), in order; none of another bot's."""
    own = re.compile(re.escape(file_safe(bot)) + r"-\d+" + re.escape(SUFFIX))
    return sorted(
        path for path in directory.glob(f"{file_safe(bot)}-*{SUFFIX}") if own.fullmatch(path.name)
    )
