"""An upload (one source file, a zip or a tar.gz) into a fresh directory, or a one-line refusal.

An upload comes from a stranger, so nothing in it is trusted:

* **names**: every member's path is normalised and must stay inside the
  directory (no absolute paths, no ``..``, no backslashes or NULs, no
  drive letters); the zip-slip and tar-slip attacks are refused by name,
  before any byte is written;
* **kinds**: only regular files and directories; a symlink, hard link,
  device or FIFO refuses the whole upload (a link could later point a
  compiler or the bot at the server's files);
* **sizes**: at most ``max_files`` members, and at most ``max_unpacked_bytes``
  together (or less: the ``room`` a participant's share of the disk leaves),
  counted on the bytes really written (a zip's declared sizes can lie), so a
  decompression bomb stops at the cap with a small directory;
* **writes**: ``O_CREAT | O_EXCL | O_NOFOLLOW`` with fixed modes, every file and
  the directory fsynced before the version is recorded.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import gzip
import lzma
import os
import posixpath
import re
import stat
import sys
import tarfile
import traceback
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from referee.server.competition_file import UploadLimits

CHUNK = 64 * 1024
# One leading dot is allowed: cargo's vendored crates need ``.cargo/config.toml`` and
# ``.cargo-checksum.json`` (never ``.`` or ``..``: those are refused before the name).
SAFE_NAME = re.compile(r"^\.?[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
MAX_DEPTH = 32  # directories in a member's path
# What a compiler may name its output: also javac's ``Main$1.class`` for an inner class.
BUILT_NAME = re.compile(r"^[A-Za-z0-9_$][A-Za-z0-9._$-]{0,199}$")


class UnpackError(ValueError):
    """An upload refused; the message is one line a participant can act on."""


# What the server's own disk says when the server, not the upload, is at fault.
STORAGE_ERRNOS = {
    errno.ENOSPC: "disk full",
    errno.EDQUOT: "disk quota exceeded",
    errno.EIO: "disk input/output error",
    errno.EROFS: "read-only file system",
}


class StorageError(Exception):
    """The server could not write an upload's bytes (a full disk): its problem, not the upload's.

    Not an ``OSError``: the archive readers turn ``OSError`` into a refusal of
    the upload (a damaged gzip raises one), and this must pass through them.
    """

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what  # "disk full", ...

    @property
    def reason(self) -> str:
        """The one line for the participant: not their fault, and what to do."""
        return f"the server could not store this upload: {self.what}; try again later"


@contextlib.contextmanager
def server_writes() -> Iterator[None]:
    """Turn a full disk (or a quota, a failing disk) met inside into ``StorageError``.

    Only around the server's own writes: an ``OSError`` reading a stranger's
    archive is the archive's, and other errnos here (``EEXIST`` for a name twice,
    ``ENOTDIR`` for a file used as a directory) are the upload's too.
    """
    try:
        yield
    except OSError as error:
        what = STORAGE_ERRNOS.get(error.errno or 0)
        if what is None:
            raise
        raise StorageError(what) from error


def safe_member_path(name: str, names: re.Pattern[str] = SAFE_NAME) -> str | None:
    """``name`` as a relative POSIX path inside the directory, None for a directory entry.

    Raises ``UnpackError`` for a path that would leave it, or a part ``names`` refuses.
    """
    if "\x00" in name or "\\" in name:
        raise UnpackError(f"{name!r}: a path with a backslash or NUL")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise UnpackError(f"{name!r}: an absolute path")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if any(part == ".." for part in parts):
        raise UnpackError(f"{name!r}: a path that leaves the directory (..)")
    if not parts:
        return None
    if len(parts) > MAX_DEPTH:
        # pathlib makes parents (and os.walk visits them) recursively: a path 1500
        # directories deep raised RecursionError, past every handler, and killed the server.
        shown = name if len(name) <= 60 else name[:57] + "..."
        raise UnpackError(f"{shown!r}: a path deeper than {MAX_DEPTH} directories")
    for part in parts:
        if not names.match(part):
            allowed = "'.', '_', '$' and '-'" if "$" in names.pattern else "'.', '_' and '-'"
            raise UnpackError(f"{name!r}: file names may use letters, digits, {allowed}")
    normal = posixpath.normpath("/".join(parts))
    return None if name.endswith("/") else normal


def archive_kind(filename: str, head: bytes) -> str:
    """``zip``, ``tar.gz`` or ``file``: by the upload's first bytes, then its name."""
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "zip"
    if head.startswith(b"\x1f\x8b"):
        return "tar.gz"
    lower = filename.lower()
    if lower.endswith(".zip"):
        return "zip"
    if lower.endswith((".tar.gz", ".tgz")):
        return "tar.gz"
    return "file"


def _bomb(cap: int, name: str = "", what: str = "") -> UnpackError:
    """The refusal of more than ``cap`` bytes (of ``name``, or ``what``) once unpacked."""
    where = f"{name!r}: " if name else ""
    return UnpackError(
        f"{where}expands beyond {cap // 1024} KiB {what + ' ' if what else ''}"
        "(a decompression bomb?)"
    )


@dataclasses.dataclass(frozen=True)
class Room:
    """Less than ``max_unpacked_bytes`` left for this upload (a participant's share of the
    disk, ``referee.server.quotas``), and the refusal past it."""

    bytes: int
    refusal: str


class _Writer:
    """Writes members under ``root`` and keeps the count and byte caps."""

    def __init__(
        self, root: Path, limits: UploadLimits, names: re.Pattern[str], room: Room | None
    ) -> None:
        self.root = root
        self.limits = limits
        self.names = names
        self.files: list[str] = []
        self.total = 0
        self.room = room if room is not None and room.bytes < limits.max_unpacked_bytes else None

    def check_size(self, size: int, name: str = "") -> None:
        """Refuse ``size`` bytes (declared, or written so far) past either cap."""
        if size > self.limits.max_unpacked_bytes:
            raise _bomb(self.limits.max_unpacked_bytes, name)
        if self.room is not None and size > self.room.bytes:
            raise UnpackError(f"{name!r}: {self.room.refusal}" if name else self.room.refusal)

    def write(self, relative: str, chunks: Iterator[bytes], executable: bool = False) -> None:
        if len(self.files) >= self.limits.max_files:
            raise UnpackError(f"more than {self.limits.max_files} files")
        if relative in self.files:
            raise UnpackError(f"{relative!r} appears twice")
        target = self.root / relative
        with server_writes():
            target.parent.mkdir(parents=True, exist_ok=True)
            _readable(target.parent, self.root)
            # The parent was made from checked names only, so it is inside root; O_NOFOLLOW
            # and O_EXCL refuse anything that is already there.
            mode = 0o755 if executable else 0o644
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
            os.fchmod(fd, mode)  # whatever the server's umask: the bot's own uid reads it
        try:
            with os.fdopen(fd, "wb", closefd=False) as out:
                for chunk in chunks:  # read from the archive: its errors are its own
                    self.total += len(chunk)
                    self.check_size(self.total)
                    with server_writes():
                        out.write(chunk)
                with server_writes():
                    out.flush()
                    os.fsync(fd)
        finally:
            os.close(fd)
        self.files.append(relative)


def _readable(directory: Path, root: Path) -> None:
    """Directories from ``directory`` up to ``root`` 0755, whatever the umask made them.

    A version's files are the one part of the server's data a bot reads: a root
    server runs it as a uid of its own, and only this directory is in its view
    (the server's data directory around it stays 0700: ``referee.storage.private_files``).
    """
    while directory != root and root in directory.parents:
        directory.chmod(0o755)
        directory = directory.parent


def _read_chunks(stream: IO[bytes]) -> Iterator[bytes]:
    while chunk := stream.read(CHUNK):
        yield chunk


def unpack_upload(
    source: Path,
    filename: str,
    root: Path,
    limits: UploadLimits,
    *,
    executable: bool = False,
    names: re.Pattern[str] = SAFE_NAME,
    room: Room | None = None,
) -> list[str]:
    """Unpack the upload in ``source`` (named ``filename`` by its sender) into new ``root``.

    Returns the files written (relative POSIX paths).  On refusal raises
    ``UnpackError``, and only that, whatever the bytes; the caller removes
    ``root``.  A full disk (the server's fault) is ``StorageError`` instead.
    ``names`` is what each part of a member's path must match (``BUILT_NAME``
    for a compiler's output).  ``room``, if less than ``max_unpacked_bytes``, caps
    the bytes written the same way, with its own refusal.
    """
    with server_writes():
        root.mkdir(parents=True, exist_ok=False)
        root.chmod(0o755)
    writer = _Writer(root, limits, names, room)
    with source.open("rb") as raw:
        head = raw.read(8)
        raw.seek(0)
        kind = archive_kind(filename, head)
        try:
            _unpack_as(kind, raw, filename, writer, executable=executable)
        except (UnpackError, StorageError):
            raise
        except Exception as error:
            # Not an error named above: a library's reaction to a stranger's bytes nobody
            # has tried yet, or a bug of ours. Escaping, it ended the server at every
            # start (the admission loop unpacks a pending version again), and the
            # compiler's output is the upload's code's to forge as well. So it is a
            # refusal too, and its traceback goes to the operator's stderr, for the
            # error to be named above or the bug fixed.
            traceback.print_exc(file=sys.stderr)
            raise UnpackError(f"cannot be unpacked ({type(error).__name__}: {error})") from None
    if not writer.files:
        raise UnpackError("the archive holds no files")
    with server_writes():
        _fsync_tree(root)
    return writer.files


def _unpack_as(
    kind: str, raw: IO[bytes], filename: str, writer: _Writer, *, executable: bool
) -> None:
    """A zip's or a tar.gz's members, or the one file of its sender's name, through ``writer``."""
    if kind == "zip":
        _unpack_zip(raw, writer)
    elif kind == "tar.gz":
        _unpack_tar(raw, writer)
    else:
        base = posixpath.basename(filename.replace("\\", "/")) or "bot"
        if not SAFE_NAME.match(base):
            raise UnpackError(f"file name {filename!r}: use letters, digits, '.', '_' and '-' only")
        writer.write(base, _read_chunks(raw), executable=executable)


# zipfile raises more than BadZipFile on a stranger's bytes: NotImplementedError for a
# "version needed" it does not know, UnicodeDecodeError for a name, zlib.error and EOFError
# for damaged data (found by mutating a small zip, tests/hostile/test_uploads.py).  Any of
# them escaping here ended the server (its admission loop unpacks a pending version again).
ZIP_ERRORS = (
    zipfile.BadZipFile,
    NotImplementedError,
    RuntimeError,
    OSError,
    ValueError,
    EOFError,
    zlib.error,
    lzma.LZMAError,
)


def _unpack_zip(raw: IO[bytes], writer: _Writer) -> None:
    try:
        archive = zipfile.ZipFile(raw)
    except ZIP_ERRORS as error:
        raise UnpackError(f"not a readable zip file: {error}") from None
    with archive:
        members = archive.infolist()
        if len(members) > writer.limits.max_files * 2:
            raise UnpackError(f"more than {writer.limits.max_files} files")
        for info in members:
            relative = safe_member_path(info.filename, writer.names)
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)  # 0 when the zip was made where files have no Unix type
            if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
                what = "a symlink" if kind == stat.S_IFLNK else "not a regular file"
                raise UnpackError(f"{info.filename!r}: {what}")
            if relative is None or info.is_dir():
                continue
            writer.check_size(info.file_size, info.filename)  # as declared: the bytes count too
            try:
                with archive.open(info) as member:
                    writer.write(
                        relative, _read_chunks(member), executable=bool(mode & stat.S_IXUSR)
                    )
            except ZIP_ERRORS as error:
                if isinstance(error, UnpackError):
                    raise
                raise UnpackError(f"{info.filename!r}: cannot be read: {error}") from None


TAR_BYTES_PER_MEMBER = 4 * 512  # a header, a pax or long-name header, the last block's padding


class _CappedGunzip:
    """The decompressed bytes of a gzip stream, refused past ``cap`` in all.

    ``tarfile`` reads a GNU long-name or pax header whole into memory, however
    large its declared size: a 1 MiB upload of one such header (a gigabyte of
    ``A`` compresses a thousandfold) held 2 GiB of the server's memory for ten
    seconds before it was refused.  Counting the whole tar stream here bounds
    every header, and the file data too, before ``tarfile`` sees a byte.
    """

    def __init__(self, raw: IO[bytes], cap: int) -> None:
        self.inner = gzip.GzipFile(fileobj=raw, mode="rb")
        self.cap = cap
        self.total = 0

    def read(self, size: int = -1) -> bytes:
        data = self.inner.read(size if size >= 0 else CHUNK)
        self.total += len(data)
        if self.total > self.cap:
            raise _bomb(self.cap, what="of tar data")
        return data


def _unpack_tar(raw: IO[bytes], writer: _Writer) -> None:
    limits = writer.limits
    cap = limits.max_unpacked_bytes + (limits.max_files * 2 + 20) * TAR_BYTES_PER_MEMBER
    try:
        stream = _CappedGunzip(raw, cap)
        archive = tarfile.open(fileobj=stream, mode="r|")  # type: ignore[call-overload]  # noqa: SIM115
    except (tarfile.TarError, OSError, EOFError) as error:
        raise UnpackError(f"not a readable tar.gz file: {error}") from None
    try:
        with archive:
            count = 0
            for member in archive:
                count += 1
                if count > writer.limits.max_files * 2:
                    raise UnpackError(f"more than {writer.limits.max_files} files")
                relative = safe_member_path(member.name, writer.names)
                if member.issym() or member.islnk():
                    raise UnpackError(f"{member.name!r}: a link")
                if member.isdir():
                    continue
                if not member.isfile():
                    raise UnpackError(f"{member.name!r}: not a regular file (a device or FIFO?)")
                if relative is None:
                    continue
                writer.check_size(member.size, member.name)
                stream = archive.extractfile(member)
                if stream is None:
                    raise UnpackError(f"{member.name!r}: cannot be read")
                writer.write(relative, _read_chunks(stream), executable=bool(member.mode & 0o100))
    except (tarfile.TarError, EOFError, OSError, zlib.error) as error:
        raise UnpackError(f"not a readable tar.gz file: {error}") from None


def _fsync_tree(root: Path) -> None:
    """fsync every directory under ``root`` (the files were synced as written), then root."""
    for directory, _dirs, _files in os.walk(root, topdown=False):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def fsync_parent(path: Path) -> None:
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
