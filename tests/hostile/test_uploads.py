"""Uploads built to hurt the server while it unpacks them (``referee.server.unpack``).

The server unpacks an upload in its own process, so what the unpacking
holds in memory is the server's.  ``tests/server/test_hostile.py`` sends the
archives a real server must refuse; these are the cheap, unit-sized ones.
"""

from __future__ import annotations

import gzip
import io
import random
import tarfile
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.server.competition_file import UploadLimits
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


def small_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("main.py", "print('hello')\n" * 20)
        archive.writestr("lib/util.py", "VALUE = 1\n")
    return buffer.getvalue()


def small_tar_gz() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as archive:
        for name, data in (("main.py", b"print('hello')\n" * 20), ("lib/util.py", b"VALUE = 1\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def mutated(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        at = rng.randrange(len(out))
        roll = rng.random()
        if roll < 0.6:
            out[at] = rng.randrange(256)
        elif roll < 0.8:
            out[at : at + 4] = rng.choice([b"\xff\xff\xff\xff", b"\0\0\0\0", b"9999"])
        else:
            del out[at : at + rng.randint(1, 50)]
    return bytes(out)


@pytest.mark.parametrize(("name", "make"), [("bot.zip", small_zip), ("bot.tar.gz", small_tar_gz)])
def test_a_damaged_archive_is_a_refusal_and_nothing_else(
    name: str, make: Callable[[], bytes], tmp_path: Path
) -> None:
    """A stranger's bytes end the unpacking with ``UnpackError`` (one line for the
    participant) or a clean unpacking, never another exception: the server's admission
    loop unpacks a pending version again, and anything else ended the server.  A mutated
    zip raised NotImplementedError, UnicodeDecodeError, zlib.error and EOFError."""
    rng = random.Random(1)
    original = make()
    upload = tmp_path / "upload"
    for attempt in range(300):
        upload.write_bytes(mutated(original, rng))
        files = tmp_path / f"files{attempt}"
        try:
            unpack_upload(upload, name, files, UploadLimits())
        except UnpackError as error:
            assert "\n" not in str(error)


def tar_gz(info: tarfile.TarInfo, data: bytes = b"") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info.size = len(data) if info.isfile() else 0
        archive.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return buffer.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info


@pytest.mark.parametrize(
    ("info", "why"),
    [
        (member("main.py", tarfile.LNKTYPE, "/etc/shadow"), "a link"),  # a hard link
        (member("fifo", tarfile.FIFOTYPE), "not a regular file"),
        (member("tty", tarfile.CHRTYPE), "not a regular file"),
        (member("/etc/cron.d/x"), "an absolute path"),
        (member("a/../../x.py"), "leaves the directory"),
        (member("-fplugin=evil.c"), "file names may use"),  # an option to the compiler
        (member("main\n.py"), "file names may use"),
        (member("\x1b[2Jmain.py"), "file names may use"),
        (member("main.py\u202egnp"), "file names may use"),
    ],
    ids=["hardlink", "fifo", "device", "absolute", "dotdot", "option", "newline", "ansi", "bidi"],
)
def test_a_member_that_is_not_a_plain_file_with_a_plain_name_is_refused(
    info: tarfile.TarInfo, why: str, tmp_path: Path
) -> None:
    upload = tmp_path / "upload"
    upload.write_bytes(tar_gz(info, b"pass\n"))
    with pytest.raises(UnpackError, match=why) as caught:
        unpack_upload(upload, "bot.tar.gz", tmp_path / "files", UploadLimits())
    assert "\n" not in str(caught.value) and "\x1b" not in str(caught.value)
    assert not list((tmp_path / "files").rglob("*"))  # nothing was written
