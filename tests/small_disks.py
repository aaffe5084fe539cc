"""Small file systems a test fills to its last byte: a tmpfs it mounts (root only) and a filler.

Three suites meet a full disk for real (a league's database, the server's logs, a
participant's attack on the server's data directory); they share these so a disk is
mounted, skipped and filled the same way in each.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

MIB = 1 << 20


@contextlib.contextmanager
def tmpfs(mount_point: Path, size_mb: int) -> Iterator[Path]:
    """A tmpfs of ``size_mb`` MiB at ``mount_point`` (made with its parents), unmounted
    afterwards; the test is skipped, saying why, where this process cannot mount."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root")
    mount_point.mkdir(parents=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(path: Path) -> None:
    """Write ``path`` until its file system has no byte left (unbuffered: nothing is left
    to flush later, and halving the write finds the last bytes)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        size = MIB
        while size:
            try:
                os.write(fd, bytes(size))
            except OSError as error:
                assert error.errno == errno.ENOSPC
                size //= 2
    finally:
        os.close(fd)
