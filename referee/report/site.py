"""Writing the site, and swapping it into place so that no reader ever sees half of it.

A site is built whole in a fresh directory beside ``--out`` and then put in
its place: on Linux the two directories are exchanged in one step
(``renameat2(RENAME_EXCHANGE)``), so ``OUT`` always holds one complete site;
elsewhere the old site is renamed away and the new one renamed in, which
leaves a moment with no ``OUT`` at all but never a mixed one.

``SiteBuilder`` keeps, between builds, what it read from each match log
(keyed by the log's size and modification time): a finished match's log does
not change, so ``--watch`` reads each log once and copies its match page
from the previous site (a hard link where possible) instead of writing it again.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from referee.league.league_db import StoredMatch
from referee.match.result import result_from_json
from referee.report.data import League, MatchLog, load_league, log_path_of, read_match_log
from referee.report.pages import (
    bot_file,
    bot_page,
    index_page,
    log_link,
    match_file,
    match_page,
    match_view,
)

Signature = tuple[str, int, int]  # (log path, size, mtime_ns)


class SiteBuilder:
    """Builds the site for one database into ``out``; call ``build`` again to refresh it."""

    def __init__(
        self,
        db: Path,
        out: Path,
        logs: Path | None = None,
        verify: bool = True,
        refresh: int | None = None,
    ) -> None:
        self.db = db
        self.out = out
        self.logs = logs
        self.verify = verify
        self.refresh = refresh  # seconds: the standings page reloads itself (--watch)
        self._logs: dict[str, tuple[Signature | None, MatchLog | None]] = {}
        self.last_count = -1

    def _match_log(self, league: League, match: StoredMatch) -> tuple[MatchLog | None, bool]:
        """The match's log (None without one) and whether it is unchanged since the last build.

        An unchanged log comes from the cache without its frames (only the
        bot pages' parts are kept between builds, to keep a long watch small).
        """
        match_id = match.key.match_id
        path = log_path_of(league, match)
        signature: Signature | None = None
        if path is not None:
            stat = path.stat()
            signature = (str(path), stat.st_size, stat.st_mtime_ns)
        cached = self._logs.get(match_id)
        if cached is not None and cached[0] == signature:
            return cached[1], True
        log = None
        if path is not None:
            log = read_match_log(path, match.key.start_chips, verify=self.verify)
        self._logs[match_id] = (signature, log)
        return log, False

    def build(self) -> League:
        """Write the whole site to a new directory and swap it in for ``out``."""
        league = load_league(self.db, self.logs)
        check_out(self.out)  # before any work: a mistaken --out fails at once
        parent = self.out.resolve().parent
        parent.mkdir(parents=True, exist_ok=True)
        fresh = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.new-", dir=parent))
        fresh.chmod(0o755)  # mkdtemp makes it private; a published site is for everyone
        try:
            self._write(league, fresh)
            publish(fresh, self.out)
        except BaseException:
            shutil.rmtree(fresh, ignore_errors=True)
            raise
        self.last_count = len(league.matches)
        return league

    def _write(self, league: League, site: Path) -> None:
        (site / MARKER).write_text(
            "A site written by `newmarket report`; it replaces this folder whole.\n"
        )
        (site / "bots").mkdir()
        (site / "matches").mkdir()
        logs: dict[str, MatchLog | None] = {}
        for match in league.matches:
            match_id = match.key.match_id
            log, unchanged = self._match_log(league, match)
            logs[match_id] = log
            target = site / match_file(match_id)
            previous = self.out / match_file(match_id)
            if unchanged and previous.is_file() and _link_or_copy(previous, target):
                continue
            if unchanged and log is not None:  # the page is gone: read the log again
                self._logs.pop(match_id)
                log, _ = self._match_log(league, match)
                logs[match_id] = log
            href = None if log is None else log_link(log.path, self.out)
            target.write_text(match_page(league, match, log, href), encoding="utf-8")
            if log is not None:
                log.frames = []  # written; the bot pages need the rest only
        for index in range(len(league.bots)):
            (site / bot_file(index)).write_text(bot_page(league, index, logs), encoding="utf-8")
        (site / "index.html").write_text(index_page(league, self.refresh), encoding="utf-8")


def _link_or_copy(source: Path, target: Path) -> bool:
    """Reuse a page of the previous site; False if it cannot be had (then it is written anew)."""
    try:
        os.link(source, target)
        return True
    except OSError:
        try:
            shutil.copyfile(source, target)
            return True
        except OSError:
            return False


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directories in one step (Linux renameat2); False where that is not available."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError, TypeError):
        return False
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, f"cannot put the new site in place of {b}", str(b))


MARKER = ".newmarket-report"  # in every site: only such a directory is ever replaced


def check_out(out: Path) -> None:
    """Refuse an ``--out`` that is not ours to replace: a file, or a directory with other things.

    Replacing ``--out`` deletes what was there; ``--out ~/Documents`` must
    not.  An empty directory, or a site this command made (its marker file),
    may be replaced.
    """
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise OSError(errno.ENOTDIR, "exists and is not a directory", str(out))
    if out.is_dir() and not (out / MARKER).is_file() and any(out.iterdir()):
        raise OSError(
            errno.EEXIST,
            f"holds files that are not a site made by newmarket report (no {MARKER}); "
            "choose another directory, or empty this one",
            str(out),
        )


def publish(fresh: Path, out: Path) -> None:
    """Put the complete site in ``fresh`` where ``out`` is; the old site is deleted."""
    check_out(out)
    if not out.exists():
        fresh.rename(out)
        return
    if _exchange(fresh, out):
        shutil.rmtree(fresh, ignore_errors=True)  # ``fresh`` now holds the old site
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.resolve().parent))
    old.rmdir()
    out.rename(old)
    fresh.rename(out)
    shutil.rmtree(old, ignore_errors=True)


def finished_matches(db: Path) -> int:
    """How many matches the database holds now (a cheap poll; -1 if it cannot be read)."""
    try:
        connection = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return -1
    try:
        return int(connection.execute("SELECT COUNT(*) FROM matches").fetchone()[0])
    except sqlite3.Error:
        return -1
    finally:
        connection.close()


def watch(
    builder: SiteBuilder,
    *,
    interval: float,
    on_build: Callable[[League], None],
    should_stop: Callable[[], bool] = lambda: False,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Rebuild whenever the number of finished matches changes, until ``should_stop`` (or Ctrl-C).

    Only finished matches are ever written to the database, each in one
    transaction, so a change of the count is exactly "a match finished".
    """
    while not should_stop():
        count = finished_matches(builder.db)
        if count != builder.last_count and count >= 0:
            with contextlib.suppress(sqlite3.OperationalError):  # busy: try at the next poll
                on_build(builder.build())
        sleep(interval)


def write_match_site(log_path: Path, out: Path, verify: bool = True) -> MatchLog:
    """One match log as a small site of its own (``newmarket view``): no league needed.

    ``out/index.html`` is the match page with its replay, and the log itself
    is copied beside it for download.  ``out`` is replaced whole, under the
    same rules as a league's site (``check_out``).
    """
    log = read_match_log(log_path, [], verify=verify)
    result = None
    if log.result is not None:
        try:
            result = result_from_json(log.result)
        except (KeyError, TypeError, ValueError):
            result = None  # a damaged last line: the page says there is no result
    header = log.header
    names = [str(bot.get("name", f"seat {seat}")) for seat, bot in enumerate(_bots(header))]
    match_id = str(header.get("match_id") or log_path.stem)
    seed = header.get("seed")
    check_out(out)
    parent = out.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=parent))
    fresh.chmod(0o755)
    try:
        (fresh / MARKER).write_text(
            "A site written by `newmarket view`; it replaces this folder whole.\n"
        )
        copied = log_path.name if log_path.name != "index.html" else "match.jsonl"
        shutil.copyfile(log_path, fresh / copied)
        page_text = match_view(
            match_id,
            seed if isinstance(seed, int) else None,
            names,
            result,
            log,
            bot_links=None,
            log_href=copied,
            root="",
            nav=None,
        )
        (fresh / "index.html").write_text(page_text, encoding="utf-8")
        publish(fresh, out)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    return log


def _bots(header: dict[str, object]) -> list[dict[str, object]]:
    bots = header.get("bots")
    if not isinstance(bots, list):
        return []
    return [bot if isinstance(bot, dict) else {} for bot in bots]
