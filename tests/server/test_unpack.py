"""Hostile archives: zip-slip, tar-slip, symlinks, devices, bombs and too many files."""

from __future__ import annotations

import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from referee.server.config import UploadLimits
from referee.server.unpack import UnpackError, unpack_upload

LIMITS = UploadLimits(max_bytes=1 << 20, max_files=10, max_unpacked_bytes=1 << 20, per_hour=5)


def zip_bytes(members: list[tuple[str, bytes, int]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data, mode in members:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


def tar_bytes(members: list[tarfile.TarInfo], data: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for member in members:
            content = data.get(member.name)
            if content is not None:
                member.size = len(content)
            archive.addfile(member, io.BytesIO(content) if content is not None else None)
    return buffer.getvalue()


def unpack(tmp_path: Path, payload: bytes, name: str) -> list[str]:
    source = tmp_path / "upload"
    source.write_bytes(payload)
    return unpack_upload(source, name, tmp_path / "out", LIMITS)


def test_a_good_zip_and_tar_unpack_with_their_files(tmp_path: Path) -> None:
    good = zip_bytes([("main.py", b"print(1)\n", stat.S_IFREG | 0o644), ("lib/", b"", 0)])
    (tmp_path / "a").mkdir()
    assert unpack(tmp_path / "a", good, "bot.zip") == ["main.py"]
    info = tarfile.TarInfo("src/main.c")
    (tmp_path / "b").mkdir()
    assert unpack(tmp_path / "b", tar_bytes([info], {"src/main.c": b"int main;"}), "b.tgz") == [
        "src/main.c"
    ]
    assert (tmp_path / "b" / "out" / "src" / "main.c").read_bytes() == b"int main;"


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../../evil.py", "leaves the directory"),
        ("/etc/passwd", "absolute path"),
        ("a\\..\\b.py", "backslash"),
        ("ok/../../x", "leaves the directory"),
    ],
)
def test_zip_slip_is_refused_and_nothing_is_written_outside(
    tmp_path: Path, name: str, why: str
) -> None:
    payload = zip_bytes([(name, b"pwned", stat.S_IFREG | 0o644)])
    with pytest.raises(UnpackError, match=why):
        unpack(tmp_path, payload, "slip.zip")
    assert not (tmp_path.parent / "evil.py").exists()


def test_a_symlink_in_a_zip_or_a_tar_is_refused(tmp_path: Path) -> None:
    link = zip_bytes([("passwd", b"/etc/passwd", stat.S_IFLNK | 0o777)])
    (tmp_path / "z").mkdir()
    with pytest.raises(UnpackError, match="symlink"):
        unpack(tmp_path / "z", link, "link.zip")
    info = tarfile.TarInfo("passwd")
    info.type = tarfile.SYMTYPE
    info.linkname = "/etc/passwd"
    (tmp_path / "t").mkdir()
    with pytest.raises(UnpackError, match="a link"):
        unpack(tmp_path / "t", tar_bytes([info], {}), "link.tar.gz")


def test_a_device_in_a_tar_is_refused(tmp_path: Path) -> None:
    info = tarfile.TarInfo("disk")
    info.type = tarfile.BLKTYPE
    with pytest.raises(UnpackError, match="not a regular file"):
        unpack(tmp_path, tar_bytes([info], {}), "dev.tar.gz")


def test_a_decompression_bomb_stops_at_the_cap(tmp_path: Path) -> None:
    # 64 MiB of zeros compress to ~64 KiB; the zip's header even declares a small size.
    zeros = b"\0" * (64 << 20)
    payload = zip_bytes([("bomb.bin", zeros, stat.S_IFREG | 0o644)])
    assert len(payload) < 1 << 20
    with pytest.raises(UnpackError, match="decompression bomb"):
        unpack(tmp_path, payload, "bomb.zip")
    written = sum(p.stat().st_size for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert written <= LIMITS.max_unpacked_bytes


def test_too_many_files_are_refused(tmp_path: Path) -> None:
    members = [(f"f{i}.py", b"x", stat.S_IFREG | 0o644) for i in range(11)]
    with pytest.raises(UnpackError, match="more than 10 files"):
        unpack(tmp_path, zip_bytes(members), "many.zip")


def test_a_single_file_keeps_its_safe_name_and_an_odd_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert unpack(tmp_path / "a", b"print(1)", "my_bot.py") == ["my_bot.py"]
    (tmp_path / "b").mkdir()
    with pytest.raises(UnpackError, match="file name"):
        unpack(tmp_path / "b", b"print(1)", "my bot;rm -rf.py")


def test_unpacked_files_stay_readable_to_the_bots_uid_whatever_the_umask(tmp_path: Path) -> None:
    # A root server runs each bot as a uid of its own: under a service's UMask=0077 its own
    # files were 0600 and its directories 0700, and no upload could start.
    payload = zip_bytes(
        [("main.py", b"print(1)\n", stat.S_IFREG | 0o600), ("lib/util.py", b"x = 1\n", 0o600)]
    )
    previous = os.umask(0o077)
    try:
        assert sorted(unpack(tmp_path, payload, "bot.zip")) == ["lib/util.py", "main.py"]
    finally:
        os.umask(previous)
    out = tmp_path / "out"
    for path in (out, out / "lib"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o755
    for path in (out / "main.py", out / "lib" / "util.py"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
