"""The operations log rotated by size: bounded on disk, no line lost, read whole by the
organiser's page and API across the rotated files."""

from __future__ import annotations

import io
import multiprocessing
import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from referee.server import log_rotation
from referee.server.competition_file import ConfigError, load_config
from referee.server.operations import OperationsLog, Value, read_operations
from tests.server.test_organiser import Cup

NOON = 1_795_867_200.0  # 2026-11-28 12:00:00 UTC


def _numbers(records: list[dict[str, Value]]) -> list[int]:
    return [int(str(r["n"])) for r in records if r["kind"] == "upload"]


def test_the_file_is_rotated_by_size_and_only_whole_old_files_are_dropped(
    tmp_path: Path,
) -> None:
    out = io.StringIO()
    log = OperationsLog.for_data(tmp_path, stream=out, old_files=3)
    log.max_bytes = 2000  # a few dozen lines a file
    log.clock = lambda: NOON
    for n in range(1000):
        log.log("upload", participant="alice", n=n)
    path = tmp_path / "operations.log"
    files = [*log_rotation.old_files(path), path]
    assert [f.name for f in files] == [
        "operations.log.3",
        "operations.log.2",
        "operations.log.1",
        "operations.log",
    ]
    # Bounded: four files of at most 2000 bytes and a line; and private, as the first was.
    for part in files:
        assert part.stat().st_size <= 2000 + 200
        assert stat.S_IMODE(os.stat(part).st_mode) == 0o600
    records = read_operations(path)
    numbers = _numbers(records)
    # What is kept is the newest lines, every one of them since the oldest kept file began.
    assert numbers == list(range(numbers[0], 1000)) and numbers[0] > 800
    # Each file starts with the line that says what its rotation moved and dropped.
    for part in files[1:]:
        first = read_operations_file(part)[0]
        assert first["kind"] == "retention" and first["what"] == "operations-log"
        assert int(str(first["dropped_bytes"])) > 0 and first["old_files"] == 3
    assert " retention what=operations-log rotated_bytes=" in out.getvalue()
    assert read_operations(path, limit=5) == records[-5:]


def read_operations_file(part: Path) -> list[dict[str, Value]]:
    alone = part.parent / "alone"
    alone.mkdir(exist_ok=True)
    (alone / "operations.log").write_bytes(part.read_bytes())
    return read_operations(alone / "operations.log")


def _writer(data: str, who: str, count: int) -> None:
    log = OperationsLog.for_data(Path(data), stream=None, old_files=1000)
    log.max_bytes = 3000
    for n in range(count):
        log.log("upload", participant=who, n=n)


def test_two_processes_writing_through_rotations_lose_no_line(tmp_path: Path) -> None:
    # The server and a management command append at once: every line of both is read back,
    # each process's in its order, however the renames fell between them.
    context = multiprocessing.get_context("fork")
    writers = [
        context.Process(target=_writer, args=(str(tmp_path), who, 400)) for who in ("a", "b")
    ]
    for process in writers:
        process.start()
    for process in writers:
        process.join(60)
        assert process.exitcode == 0
    records = read_operations(tmp_path / "operations.log")
    for who in ("a", "b"):
        mine = [int(str(r["n"])) for r in records if r.get("participant") == who]
        assert mine == list(range(400))
    assert len(log_rotation.old_files(tmp_path / "operations.log")) > 10


@pytest.fixture
async def cup(tmp_path: Path) -> AsyncIterator[Cup]:
    made = Cup(tmp_path)
    yield made
    made.competition.close()
    made.store.close()


async def test_the_organiser_reads_the_log_across_its_rotated_files(cup: Cup) -> None:
    data = cup.competition.config.data
    log = OperationsLog.for_data(data, stream=None)
    log.max_bytes = 1500
    log.log("upload", participant="<script>alert(1)</script>", n=-1)  # a hostile name
    for n in range(120):
        log.log("upload", participant="bob", n=n)
    assert len(log_rotation.old_files(data / "operations.log")) == 5
    # The last 50 lines span three or more files: the page shows them all, newest last.
    async with cup.client(cup.organiser) as api:
        answer = await api.get("/api/organiser/operations", params={"limit": "60"})
        assert answer.status_code == 200
        body = answer.json()
        uploads = [r["n"] for r in body["records"] if r["kind"] == "upload" and r["n"] >= 0]
        assert uploads == list(range(120 - len(uploads), 120)) and len(uploads) > 50
        assert body["files"] == 6
        refused = await api.get("/api/organiser/operations", params={"limit": "x"})
        assert refused.status_code == 400
    async with cup.client(cup.tokens["alice"]) as alice:
        assert (await alice.get("/api/organiser/operations")).status_code == 404
    browser = await cup.signed_in(cup.organiser)
    page = await browser.get("/organiser")
    await browser.aclose()
    shown = page.text.split('id="operations-lines">')[1].split("</pre>")[0].splitlines()
    assert len(shown) == 50 and shown[-1].endswith("upload participant=bob n=119")
    assert any("upload participant=bob n=" in line for line in shown[:5])
    # Every line is text on the page, whatever a participant named itself.
    log.max_bytes = 10**6
    log.log("upload", participant="<script>alert(1)</script>", n=120)
    browser = await cup.signed_in(cup.organiser)
    page = await browser.get("/organiser")
    await browser.aclose()
    assert "<script>alert(1)" not in page.text and "&lt;script&gt;alert(1)" in page.text


@pytest.mark.parametrize(
    ("line", "key"),
    [("operations_log_mb = 0", "mb"), ("operations_log_files = -1", "files")],
)
def test_a_bad_rotation_setting_is_one_line_naming_the_key_and_the_file(
    tmp_path: Path, line: str, key: str
) -> None:
    path = tmp_path / "cup.toml"
    path.write_text(f'[competition]\nname = "x"\n[retention]\n{line}\n')
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    said = str(raised.value)
    assert "\n" not in said and str(path) in said and f"retention.operations_log_{key}" in said
