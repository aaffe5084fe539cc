"""Uploads built to hurt the server while it unpacks them (``referee.server.unpack``).

The server unpacks an upload in its own process, so what the unpacking
holds in memory is the server's.  ``tests/server/test_hostile.py`` sends the
archives a real server must refuse; these are the cheap, unit-sized ones.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import tracemalloc
from pathlib import Path

import pytest

from referee.server.config import UploadLimits
from referee.server.unpack import UnpackError, unpack_upload

MIB = 1 << 20


def tar_gz_with_a_huge_header(kind: bytes, size: int) -> bytes:
    """One GNU long-name (or pax) header declaring ``size`` bytes of ``A``, then a file."""
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6) as out:
        header = tarfile.TarInfo("x")
        header.type, header.size = kind, size
        out.write(header.tobuf(format=tarfile.GNU_FORMAT))
        block = b"A" * MIB
        for _ in range(size // MIB):
            out.write(block)
        member = tarfile.TarInfo("main.py")
        member.size = 4
        out.write(member.tobuf(format=tarfile.GNU_FORMAT) + b"pass".ljust(512, b"\0"))
        out.write(b"\0" * 1024)
    return raw.getvalue()


@pytest.mark.parametrize("kind", [tarfile.GNUTYPE_LONGNAME, tarfile.XHDTYPE], ids=["gnu", "pax"])
def test_a_huge_tar_header_is_refused_before_it_is_held(kind: bytes, tmp_path: Path) -> None:
    """tarfile reads such a header whole: 1 MiB of upload held 2 GiB of the server's memory
    (a gigabyte of ``A``, compressed a thousandfold).  64 MiB here, against a 16 MiB cap."""
    upload = tmp_path / "upload"
    upload.write_bytes(tar_gz_with_a_huge_header(kind, 64 * MIB))
    limits = UploadLimits()
    assert upload.stat().st_size < limits.max_bytes  # the server takes it in
    tracemalloc.start()
    try:
        with pytest.raises(UnpackError, match=r"expands beyond \d+ KiB of tar data"):
            unpack_upload(upload, "bot.tar.gz", tmp_path / "files", limits)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 * MIB, f"unpacking held {peak / MIB:.0f} MiB"
