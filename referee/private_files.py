"""The organiser's files: new directories 0700, new files 0600, whatever the umask allows more.

A league's or a competition's data (its database, which holds the server's
signing secret, the match logs, the bots' stderr, the participants' uploads,
the tokens file) is the organiser's alone.  Another account of the machine
must not read it, nor a bot: a root referee runs each bot as a uid of its own,
and a bot's view shows nothing of the host it did not need (docs/hardening.md),
so modes are the second wall.  The league, the server and the logs they write
create their directories with ``private_dir`` and open their files with
``private_opener``.

One exception is the server's own: a version's unpacked files stay readable
(``referee.server.unpack``), since the bot that runs them has its own uid; its
directory is bound into the bot's view, which never shows the private parents.
Directories and files that already exist keep their modes: they may be the
organiser's own, made readable on purpose.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def private_dir(path: Path) -> Path:
    """Make ``path`` and its missing parents, each new one 0700 (as ``mkdir -p`` would fail)."""
    missing: list[Path] = []
    current = path
    while not os.path.lexists(current) and current != current.parent:
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile by another process
            directory.mkdir(mode=PRIVATE_DIR)
    path.mkdir(exist_ok=True)  # a file in the way: FileExistsError, as mkdir's
    return path


def private_opener(path: str | os.PathLike[str], flags: int) -> int:
    """``open(path, mode, opener=private_opener)``: a file it creates is 0600."""
    return os.open(path, flags | os.O_CLOEXEC, PRIVATE_FILE)


def create_private(path: Path) -> None:
    """Make ``path`` an empty 0600 file if it does not exist (before SQLite opens it)."""
    os.close(private_opener(path, os.O_WRONLY | os.O_CREAT))
