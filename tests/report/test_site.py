"""The site from a real league: the standings' numbers, escaping, the swap into place, --watch."""

from __future__ import annotations

import json
import queue
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from referee.match.packed_result import pack, unpack
from referee.report.data import load_league, log_path_of, read_match_log
from referee.report.frames import plural, pretty_text
from referee.report.pages import page_replay, replay_data
from referee.report.site import SiteBuilder, watch
from tests.clirun import newmarket
from tests.match_logs import kept_logs, log_text
from tests.report.conftest import BOTS, MISCHIEF
from tests.report.replay_steps import frames_of

_WIRE_CARD = re.compile(r"(?<![A-Za-z0-9'])[2-9TJQKA][CDHS](?![A-Za-z0-9'])")


def _newmarket(*args: str) -> subprocess.CompletedProcess[str]:
    """``newmarket ARGS...`` as the console script runs it (``tests.clirun``), in this
    process: no Python start-up and import per command."""
    code, out, err = newmarket(*args)
    return subprocess.CompletedProcess(["newmarket", *args], code, out, err)


def test_report_writes_every_page_with_the_standings_numbers(
    league_db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    done = _newmarket("report", "--db", str(league_db), "--out", str(out))
    assert done.returncode == 0, done.stderr
    # The result on stdout, as `newmarket view` prints its page (it was on stderr).
    league = load_league(league_db)
    assert (done.stdout, done.stderr) == (
        f"{out / 'index.html'}: {plural(len(league.matches), 'match')}, {len(BOTS)} bots\n",
        "",
    )
    standings = json.loads(_newmarket("standings", "--db", str(league_db), "--json").stdout)
    index = (out / "index.html").read_text()
    for row in standings["standings"]:
        assert f"{row['rating']:.2f}" in index and f"{row['sigma']:.2f}" in index
    assert len(list((out / "matches").glob("*.html"))) == len(league.matches) > 0
    assert len(list((out / "bots").glob("*.html"))) == len(BOTS)
    # The chart's last point of every bot is its rating in the standings.
    final = league.history[-1]
    for row in standings["standings"]:
        assert round(final[row["name"]].conservative, 4) == row["rating"]


def test_nothing_a_bot_says_becomes_markup(league_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    SiteBuilder(league_db, out).build()
    pages = [path.read_text() for path in out.rglob("*.html")]
    escaped_name = "&lt;img src=x onerror=alert(&#39;name&#39;)&gt;"
    everything = "\n".join(pages)
    assert "<script>alert" not in everything and "<img src=x" not in everything
    assert "</pre><b>nobody" not in everything
    assert escaped_name in (out / "index.html").read_text()
    mischief = BOTS.index(MISCHIEF)
    bot_page = (out / "bots" / f"{mischief}.html").read_text()
    assert "illegal" in bot_page  # its faults, each with a transcript
    assert "&lt;/pre&gt;&lt;b&gt;nobody&lt;/b&gt; notices" in bot_page  # its stderr, as text
    assert "! illegal fault:" in bot_page


def test_the_pages_count_in_good_english_and_one_card_notation(
    league_db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    SiteBuilder(league_db, out).build()
    for path in out.rglob("*.html"):
        text = re.sub(r"<[^>]+>", " ", path.read_text())
        assert not re.search(r"(?<![\d.])1 (faults|matches|hands|places|chips)\b", text), path
        assert not re.search(r"(?<![\d.])([02-9]|\d\d+) (fault|match|hand)\b(?! ·)", text), path
    mischief = (out / "bots" / f"{BOTS.index(MISCHIEF)}.html").read_text()
    faults = re.findall(r'<div class="fault">(.*?)</div>', mischief, re.S)
    assert faults
    for fault in faults:
        assert not _WIRE_CARD.search(re.sub(r"<[^>]+>", " ", fault)), fault
    # Every page's own words (a bot's stderr is its own) and every line the replay tells.
    narrated = 0
    for path in out.rglob("*.html"):
        page = path.read_text()
        data = re.search(r'<script type="application/json" id="match-data">(.*?)</script>', page)
        if data is not None:
            for frame in frames_of(json.loads(data.group(1))):
                for line in frame["lines"]:
                    assert not _WIRE_CARD.search(line), (path, line)
                    narrated += 1
        words = re.sub(
            r'<pre class="stderr">.*?</pre>|<script.*?</script>|<style>.*?</style>',
            "",
            page,
            flags=re.S,
        )
        assert not _WIRE_CARD.search(re.sub(r"<[^>]+>", " ", words)), path
    assert narrated > 100


def test_a_rebuild_replaces_the_site_whole(league_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    builder = SiteBuilder(league_db, out)
    builder.build()
    (out / "stale.html").write_text("from an older site")
    first_match = sorted((out / "matches").iterdir())[0]
    builder.build()
    assert not (out / "stale.html").exists()
    assert first_match.is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["site"]  # no temporary directory left


def test_watch_rebuilds_when_a_match_finishes(league_db: Path, tmp_path: Path) -> None:
    db = tmp_path / "league.db"
    shutil.copy(league_db, db)
    last, saved = _hide_last_match(db)
    out = tmp_path / "site"
    builder = SiteBuilder(db, out, logs=league_db.parent / "logs")
    built: list[int] = []
    polls = 0

    def sleep(_: float) -> None:
        nonlocal polls
        polls += 1
        if polls == 2:  # the match finishes while the report watches
            _finish(db, saved)

    watch(
        builder,
        interval=0,
        on_build=lambda league: built.append(len(league.matches)),
        should_stop=lambda: polls >= 4,
        sleep=sleep,
    )
    total = len(load_league(league_db).matches)
    assert built == [total - 1, total]  # one build at the start, one when the match finished
    assert (out / "matches" / f"{last}.html").is_file()


def test_a_bad_database_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = _newmarket("report", "--db", str(tmp_path / "none.db"), "--out", str(tmp_path / "s"))
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "no such league database" in done.stderr


def _hide_last_match(db: Path) -> tuple[str, dict[str, list[Any]]]:
    """Take the last match out of the database, as if it were still being played."""
    with sqlite3.connect(db) as connection:
        last = str(
            connection.execute(
                "SELECT match_id FROM matches ORDER BY round DESC, ordinal DESC LIMIT 1"
            ).fetchone()[0]
        )
        saved = {
            table: connection.execute(
                f"SELECT * FROM {table} WHERE match_id = ?", (last,)
            ).fetchall()
            for table in ("matches", "seats", "faults")
        }
        for table in ("faults", "seats", "matches"):
            connection.execute(f"DELETE FROM {table} WHERE match_id = ?", (last,))
    return last, saved


def _finish(db: Path, saved: dict[str, list[Any]]) -> None:
    with sqlite3.connect(db) as connection:
        for table in ("matches", "seats", "faults"):
            for row in saved[table]:
                marks = ", ".join("?" * len(row))
                connection.execute(f"INSERT INTO {table} VALUES ({marks})", row)


# Starts a command with SIGINT set as given ({}), then execs it: the disposition it inherits.
_WITH_SIGINT = "import os, signal, sys; signal.signal(signal.SIGINT, signal.{}); " + (
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)


@pytest.mark.parametrize("inherited", ["SIG_DFL", "SIG_IGN"])
def test_the_watch_command_follows_the_league_and_stops_on_ctrl_c(
    league_db: Path, tmp_path: Path, inherited: str
) -> None:
    """Ctrl-C stops ``--watch`` even when it started with SIGINT ignored.

    A shell without job control (``sh -c 'CMD &'``, scripts, CI runners)
    starts background commands so; Python then leaves SIGINT ignored, and
    this command used to run on forever.  The test follows the command by
    the line it prints after each build, with no polling and no sleeps, and
    the command is killed if it does not stop: nothing outlives the test.
    """
    db = tmp_path / "league.db"
    shutil.copy(league_db, db)
    last, saved = _hide_last_match(db)
    out = tmp_path / "site"
    command = [sys.executable, "-c", _WITH_SIGINT.format(inherited), "-m", "referee.cli"]
    command += ["report", "--db", str(db), "--out", str(out), "--watch", "--interval", "0.2"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str | None] = queue.Queue()

    def read_stdout() -> None:  # a line per build, on stdout
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read_stdout, daemon=True).start()

    def next_line() -> str:
        line = lines.get(timeout=120)  # a loaded machine: generous
        assert line is not None, "the command ended early"
        return line

    try:
        total = len(load_league(league_db).matches)
        # The first build is in place.
        assert f": {plural(total - 1, 'match')}, {len(BOTS)} bots" in next_line()
        assert not (out / "matches" / f"{last}.html").exists()
        # The league is not finished: its standings reload themselves in the browser.
        assert 'http-equiv="refresh"' in (out / "index.html").read_text()
        _finish(db, saved)
        # Rebuilt when the match finished.
        assert f": {plural(total, 'match')}, {len(BOTS)} bots" in next_line()
        assert (out / "matches" / f"{last}.html").is_file()
        assert 'http-equiv="refresh"' not in (out / "index.html").read_text()  # final
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=120) == 130
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert lines.get(timeout=120) is None  # no build after the stop
    assert process.stderr is not None
    assert "stopped" in process.stderr.read()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".site")]  # no half site


def test_a_league_without_logs_says_so(league_db: Path, tmp_path: Path) -> None:
    db = tmp_path / "nologs.db"
    shutil.copy(league_db, db)
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT match_id, result FROM matches").fetchall()
        for match_id, stored in rows:
            result = unpack(stored)
            result.log_path = None
            connection.execute(
                "UPDATE matches SET log_path = NULL, result = ? WHERE match_id = ?",
                (pack(result), match_id),
            )
    out = tmp_path / "site"
    SiteBuilder(db, out).build()
    match_page = next((out / "matches").iterdir()).read_text()
    assert "No log was kept for this match" in match_page
    bot_page = (out / "bots" / f"{BOTS.index(MISCHIEF)}.html").read_text()
    assert "kept no match logs" in bot_page
    assert "illegal" in bot_page  # the faults the database holds


@pytest.mark.skipif(sys.platform != "linux", reason="the one-step swap is Linux's renameat2")
def test_a_reader_never_finds_the_site_missing_or_half_written(
    league_db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    builder = SiteBuilder(league_db, out, verify=False)
    builder.build()
    pages = sorted(str(p.relative_to(out)) for p in out.rglob("*.html"))
    done = threading.Event()
    failures: list[BaseException] = []

    def rebuild() -> None:
        try:
            for _ in range(4):
                builder.build()
        except BaseException as error:
            failures.append(error)
        finally:
            done.set()

    thread = threading.Thread(target=rebuild)
    thread.start()
    reads = 0
    try:
        while not done.is_set():
            for name in pages:  # every page is there, and whole, at every moment
                assert (out / name).read_text().endswith("</html>\n"), name
                reads += 1
    finally:
        thread.join(timeout=300)
    assert reads > 0
    assert not failures


def test_a_damaged_log_is_named_on_its_match_page(league_db: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(league_db.parent / "logs", logs)
    first, second, third, fourth = kept_logs(logs)[:4]
    fourth.write_bytes(fourth.read_bytes()[:-40])  # a compact record cut short
    for record in (first, second):  # damaged as full logs, whose lines a hand can change
        text = log_text(record)
        record.unlink()
        record.with_suffix(".jsonl").write_text(text)
    first, second = first.with_suffix(".jsonl"), second.with_suffix(".jsonl")
    first.write_bytes(first.read_bytes()[:-40])  # cut short, as by a kill -9
    lines = second.read_text().splitlines(keepends=True)
    lines[5] = lines[5].replace('"seat":0', '"seat":1', 1) if '"seat":0' in lines[5] else "{}\n"
    second.write_text("".join(lines))
    out = tmp_path / "site"
    done = _newmarket("report", "--db", str(league_db), "--out", str(out), "--logs", str(logs))
    assert done.returncode == 0, done.stderr
    cut = (out / "matches" / f"{first.stem}.html").read_text()
    assert "The log cannot be read whole: line" in cut and "cut short" in cut
    changed = (out / "matches" / f"{second.stem}.html").read_text()
    assert "does not verify" in changed or "cannot be read whole" in changed
    assert "The log verifies" in (out / "matches" / f"{third.stem}.html").read_text()
    damaged = (out / "matches" / f"{fourth.stem}.html").read_text()
    assert "The log cannot be read whole" in damaged and "damaged compact record" in damaged


def test_a_match_pages_steps_give_back_every_frame_of_its_log(league_db: Path) -> None:
    """A page carries each replay frame as what changed since the one before: read back as
    the viewer reads them, they are the log's frames, every one, exactly."""
    league = load_league(league_db)
    for match in league.matches:
        path = log_path_of(league, match)
        assert path is not None
        log = read_match_log(path, [], verify=False)
        data = replay_data(["a", "b", "c"], log)
        assert len(data["frames"]) > 10  # type: ignore[arg-type]
        assert frames_of(page_replay(data)) == data["frames"]


def test_a_report_reads_full_logs_as_it_reads_compact_records(
    league_db: Path, tmp_path: Path
) -> None:
    """The same league's logs kept as JSON lines (``match_logs = "full"``, or a league from
    before compact records) give the same pages, but for the link to each log's file."""
    compact = tmp_path / "compact"
    shutil.copytree(league_db.parent / "logs", compact)
    full = tmp_path / "full"
    full.mkdir()
    records = kept_logs(compact)
    assert records and all(record.suffix == ".nmr" for record in records)
    for record in records:
        (full / f"{record.stem}.jsonl").write_text(log_text(record))
    pages = {}
    for logs in (compact, full):
        out = tmp_path / f"site-{logs.name}"
        done = _newmarket("report", "--db", str(league_db), "--out", str(out), "--logs", str(logs))
        assert done.returncode == 0, done.stderr
        pages[logs.name] = {
            path.name: path.read_text() for path in sorted((out / "matches").glob("*.html"))
        }
    assert len(pages["full"]) == len(records)
    for name, page in pages["full"].items():
        assert "The log verifies" in page and '"steps":[{' in page.replace(" ", ""), name
        stem = name.removesuffix(".html")
        assert f"../../full/{stem}.jsonl" in page
        linked = page.replace(f"../../full/{stem}.jsonl", f"../../compact/{stem}.nmr")
        assert linked == pages["compact"][name]


def test_a_missing_logs_directory_is_one_line_and_exit_2(league_db: Path, tmp_path: Path) -> None:
    done = _newmarket(
        "report",
        "--db",
        str(league_db),
        "--out",
        str(tmp_path / "s"),
        "--logs",
        str(tmp_path / "x"),
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: --log-dir:") and done.stderr.count("\n") == 1


def test_each_fault_has_its_transcript_with_the_table_around_it(league_db: Path) -> None:
    league = load_league(league_db)
    mischief = BOTS.index(MISCHIEF)
    checked = 0
    for match in league.matches:
        if mischief not in match.key.bots:
            continue
        seat = match.key.bots.index(mischief)
        path = log_path_of(league, match)
        assert path is not None
        log = read_match_log(path, match.key.start_chips, verify=False)
        mine = [t for t in log.transcripts if t.seat == seat]
        assert [(t.kind, t.hand, t.detail) for t in mine] == [
            (f.kind, f.hand, f.detail) for f in match.result.seats[seat].faults
        ]
        for transcript in mine:
            marks = [mark for mark, _ in transcript.lines]
            fault = marks.index("!")
            assert marks[fault - 2 : fault + 2] == ["<", ">", "!", "="]  # asked, replied, judged
            assert "#" in marks[: fault - 2]  # what the table did before the request
            assert pretty_text(transcript.detail) in transcript.lines[fault][1]
            text = "\n".join(line for _, line in transcript.lines)
            assert "hand 0" not in text
            assert not _WIRE_CARD.search(text), text  # one card notation: 10♣, never TC
            checked += 1
    assert checked > 0


def test_a_directory_that_is_not_a_site_is_never_replaced(league_db: Path, tmp_path: Path) -> None:
    precious = tmp_path / "documents"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    done = _newmarket("report", "--db", str(league_db), "--out", str(precious))
    assert done.returncode == 2
    assert "not a site made by newmarket report" in done.stderr
    assert done.stderr.count("\n") == 1
    assert [p.name for p in precious.iterdir()] == ["thesis.tex"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["documents"]  # nothing left behind
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _newmarket("report", "--db", str(league_db), "--out", str(empty)).returncode == 0
    assert (empty / "index.html").is_file()


def test_view_names_a_bad_log_and_refuses_a_directory_it_did_not_make(tmp_path: Path) -> None:
    missing = _newmarket("view", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2
    assert missing.stderr.startswith("error: LOG:") and missing.stderr.count("\n") == 1
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("this is not a match log\n")
    done = _newmarket("view", str(garbage))  # no log at all: a bad argument, as for replay
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.startswith(f"error: LOG: {garbage}: line 1: not JSON")
    assert done.stderr.count("\n") == 1
    assert not (tmp_path / "garbage-view").exists()
    broken = tmp_path / "broken.jsonl"  # a log's header, and nothing else that adds up
    broken.write_text('{"type": "header", "format": 2}\n')
    done = _newmarket("view", str(broken))
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "broken-view" / "index.html").read_text()
    assert "The log has no result" in page
    assert "the log has a problem" in done.stdout
    precious = tmp_path / "documents"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    refused = _newmarket("view", str(broken), "--out", str(precious))
    assert refused.returncode == 2 and refused.stderr.startswith("error: --out:")
    assert (precious / "thesis.tex").read_text() == "years of work"
