"""A table worker that dies mid-group: the group is retried once, then given up, and a
version at every failed table in a row is suspended (a bot attacking its referee)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import trio
import trio.testing

from engine import preset
from referee.bots import BotSpec
from referee.match.key import MatchKey
from referee.match.result import MatchResult
from referee.server.app import build_app
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.competition_file import load_config
from referee.server.failures import platform_cause
from referee.server.play import GroupQueue
from referee.server.worker_table import WorkerError, WorkerTable


def _competition(tmp_path: Path) -> Competition:
    """A competition with one house bot and no participants, its store open."""
    config_path = tmp_path / "cup.toml"
    config_path.write_text('[competition]\nname = "x"\nhouse_bots = ["random"]\n')
    config = load_config(config_path)
    return Competition(config, CompetitionStore.open(config.database))


async def test_failed_tables_retry_then_give_up_and_suspend_the_common_version(
    tmp_path: Path,
) -> None:
    competition = _competition(tmp_path)
    store = competition.store
    competition.ensure_house_bots(competition.config.house_bots)
    house = store.versions()[0].id
    versions = []
    for name in ("alice", "bob", "mallory"):
        participant, _token = store.add_participant(name)
        version = store.add_version(participant.id, "python3", "main.py", "", 1)
        store.decide(version.id, "admitted", "ok", "", {"name": name, "command": ["x"]})
        versions.append(version.id)
    alice, bob, mallory = versions
    queue = GroupQueue(competition)

    def crashed(match: str) -> WorkerError:
        """A worker that crashed on what a bot sent: a traceback and exit status 1."""
        error = WorkerError("its table worker ended (exited with status 1)", returncode=1)
        error.match_id = match
        return error

    first = store.plan_group(1, (mallory, alice, house), "test")
    await queue.table_failed(first, crashed("g1r0"), None)
    assert [group.id for group, _done in queue.resumed] == [first.id]  # retried once
    queue.resumed.clear()
    await queue.table_failed(first, crashed("g1r0"), None)
    assert queue.resumed == []  # given up
    queue.group_played(store.plan_group(2, (alice, bob, house), "test"))  # alice is fine
    await queue.table_failed(
        store.plan_group(3, (mallory, bob, house), "test"), crashed("g3r1"), None
    )

    status = {v.id: v.status for v in store.versions()}
    assert status[mallory] == "suspended"
    assert status[alice] == status[bob] == status[house] == "admitted"
    suspended = store.version(mallory)
    assert suspended is not None and "failed 3 times in a row" in suspended.detail
    # The evidence: which matches, and what the worker did in each.
    (suspension,) = store.suspensions(mallory)
    assert suspension["evidence"] == [
        {"match": "g1r0", "what": "its table worker ended (exited with status 1)"},
        {"match": "g1r0", "what": "its table worker ended (exited with status 1)"},
        {"match": "g3r1", "what": "its table worker ended (exited with status 1)"},
    ]
    # A restart does not resume a group that was given up.
    assert first.id not in {group.id for group, _done in store.unfinished_groups()}
    # Its page and its owner's show why, to anyone: the matches and what each worker did.
    transport = httpx.ASGITransport(app=build_app(competition))
    async with httpx.AsyncClient(transport=transport, base_url="http://cup") as browser:
        page = (await browser.get(f"/versions/{mallory}")).text
        shown = re.search(r'<table id="suspension">.*?</table>', page, re.S)
        assert shown is not None
        rows = re.findall(r"<tr><td>(g\d+r\d+)</td><td>([^<]+)</td></tr>", shown.group(0))
        assert rows == [(e["match"], e["what"]) for e in suspension["evidence"]]
        owner = (await browser.get("/p/mallory")).text
        assert "v1 is suspended" in owner and "g3r1: its table worker ended" in owner
        assert "is suspended" not in (await browser.get("/p/alice")).text
    store.close()


async def test_the_platforms_failures_suspend_nobody_and_give_up_no_group(
    tmp_path: Path,
) -> None:
    # A full disk made every table's worker fail to write its log: three in a row
    # suspended every participant at those tables, for good.
    competition = _competition(tmp_path)
    store = competition.store
    versions = []
    for name in ("alice", "bob", "carol"):
        participant, _token = store.add_participant(name)
        version = store.add_version(participant.id, "python3", "main.py", "", 1)
        store.decide(version.id, "admitted", "ok", "", {"name": name, "command": ["x"]})
        versions.append(version.id)
    queue = GroupQueue(competition)
    group = store.plan_group(1, tuple(versions), "test")
    full = WorkerError("g1r0: [Errno 28] No space left on device: '/srv/cup-data/logs/g1r0.jsonl'")
    for _attempt in range(10):
        platform = platform_cause(full, disk_low=False, bots_can_signal=True)
        assert platform == "the server could not write its files (no space left on device)"
        await queue.table_failed(group, full, platform)
    assert {v.status for v in store.versions()} == {"admitted"}
    assert [g.id for g, _done in queue.resumed] == [group.id] * 10  # never given up
    assert group.id in {g.id for g, _done in store.unfinished_groups()}
    store.close()


@pytest.mark.parametrize(
    ("error", "disk_low", "bots_can_signal", "platform"),
    [
        # A write the disk refused, however the worker said it.
        (WorkerError("g1r0: [Errno 5] Input/output error: '/x'"), False, True, True),
        (WorkerError("g1r0: Disk quota exceeded"), False, True, True),
        # Anything at all while the disk is low.
        (WorkerError("its table worker ended (exited with status 1)", 1), True, True, True),
        # The OOM killer acted in the server's cgroup.
        (
            WorkerError("its table worker ended (killed by signal 9)", -9, oom=True),
            False,
            True,
            True,
        ),
        # A signal that no bot can send here (each bot has its own PID namespace).
        (
            WorkerError("its table worker ended (killed by signal 15)", -15, False),
            False,
            False,
            True,
        ),
        # SIGKILL, and no way to tell an OOM kill: the benefit of the doubt.
        (WorkerError("its table worker ended (killed by signal 9)", -9, None), False, True, True),
        # A bot could: crash the referee with what it sends, kill it, or garble its pipe.
        (WorkerError("its table worker ended (exited with status 1)", 1), False, False, False),
        (WorkerError("its table worker ended (killed by signal 9)", -9, False), False, True, False),
        (
            WorkerError("its table worker ended (killed by signal 11)", -11, None),
            False,
            True,
            False,
        ),
        (WorkerError("its table worker wrote a bad line (not JSON)"), False, True, False),
    ],
)
def test_whose_fault_a_table_failure_is(
    error: WorkerError, disk_low: bool, bots_can_signal: bool, platform: bool
) -> None:
    assert (platform_cause(error, disk_low, bots_can_signal) is not None) == platform


# A table worker that ends, or writes something that is not its protocol, costs its
# table a restart (WorkerError), never the server: each fake worker below reads the
# play message and then misbehaves one way.
FAKE_WORKERS = {
    "ends": "import sys; sys.stdin.readline()",
    "garbage": "import sys; sys.stdin.readline(); print('[' * 5000, flush=True)",
    "bad result": (
        "import sys; sys.stdin.readline();"
        ' print(\'{"type": "result", "result": {"seats": 7}}\', flush=True)'
    ),
}


@pytest.mark.parametrize("misbehaviour", sorted(FAKE_WORKERS))
async def test_a_worker_that_ends_or_speaks_garbage_is_a_table_failure(misbehaviour: str) -> None:
    process = await trio.lowlevel.open_process(
        [sys.executable, "-c", FAKE_WORKERS[misbehaviour]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    table = WorkerTable(process, warn=lambda _text: None)
    key = MatchKey(
        match_id="g1r0",
        ordinal=0,
        round=1,
        table=0,
        rotation=0,
        seed=1,
        bots=(0, 1, 2),
        start_chips=(40, 40, 40),
        deal_seed=1,
    )
    try:
        with pytest.raises(WorkerError, match="table worker"):
            await table.play(key, preset("boodle"), {}, [])
    finally:
        await table.aclose()


async def test_participants_are_admitted_in_turn_not_one_burst_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each admission can take minutes: one participant's burst of uploads must not
    # hold a later participant's first version until the whole burst is checked.
    from referee.server import play

    competition = _competition(tmp_path)
    store = competition.store
    mallory, _token = store.add_participant("mallory")
    alice, _token = store.add_participant("alice")
    burst = [store.add_version(mallory.id, "python3", "main.py", "", 1).id for _ in range(3)]
    later = store.add_version(alice.id, "python3", "main.py", "", 1).id
    order: list[int] = []

    def unpack(_competition: Competition, _version: object, _others: object) -> None:
        return None

    async def admit(_config: object, the_store: CompetitionStore, version: object) -> bool:
        version_id = getattr(version, "id", 0)
        the_store.decide(version_id, "admitted", "ok", "", {"name": "v", "command": ["x"]})
        order.append(version_id)
        return True

    monkeypatch.setattr(play, "unpack_version", unpack)
    monkeypatch.setattr(play, "admit", admit)
    with trio.move_on_after(5):
        await play.admission_loop(competition)
    assert order == [burst[0], later, burst[1], burst[2]]
    store.close()


async def test_a_server_bug_admitting_one_version_rejects_it_and_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Left pending, the version would meet the same bug at every restart and stop the
    # server for good; swallowed silently, the bug would never be seen by the operator.
    from referee.server import play

    competition = _competition(tmp_path)
    store = competition.store
    alice, _token = store.add_participant("alice")
    broken = store.add_version(alice.id, "python3", "main.py", "", 1).id
    fine = store.add_version(alice.id, "python3", "main.py", "", 1).id

    def unpack(_competition: Competition, _version: object, _others: object) -> None:
        return None

    async def admit(_config: object, the_store: CompetitionStore, version: object) -> bool:
        version_id = getattr(version, "id", 0)
        if version_id == broken:
            raise KeyError("a bug")
        the_store.decide(version_id, "admitted", "ok", "", {"name": "v", "command": ["x"]})
        return True

    monkeypatch.setattr(play, "unpack_version", unpack)
    monkeypatch.setattr(play, "admit", admit)
    with trio.move_on_after(5):
        await play.admission_loop(competition)
    statuses = {v.id: (v.status, v.detail) for v in store.versions()}
    assert statuses[broken][0] == "rejected"
    assert "a server bug" in statuses[broken][1] and "KeyError" in statuses[broken][1]
    assert statuses[fine][0] == "admitted"
    assert "Traceback" in capsys.readouterr().err
    store.close()


def test_an_unnamed_error_unpacking_is_a_refusal_with_its_traceback_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A library's reaction to bytes nobody has tried yet: the participant gets a refusal
    # (not a 500 with the version left pending), the operator the traceback.
    from referee.server import unpack, uploads
    from referee.server.unpack import UnpackError

    competition = _competition(tmp_path)
    alice, _token = competition.store.add_participant("alice")
    version = competition.store.add_version(alice.id, "python3", "main.zip", "", 1)
    root = uploads.version_root(competition, version.id)
    root.mkdir(parents=True)
    (root / "upload").write_bytes(b"PK\x03\x04")

    def unpack_zip(_raw: object, _writer: object) -> None:
        raise IndexError("an error nobody named")

    monkeypatch.setattr(unpack, "_unpack_zip", unpack_zip)
    with pytest.raises(UnpackError, match="IndexError: an error nobody named"):
        uploads.unpack_version(competition, version)
    assert not (root / "files").exists()
    assert "Traceback" in capsys.readouterr().err
    competition.store.close()


async def test_an_upload_still_unpacking_is_not_admitted_from_under_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The upload request stores its version, then unpacks it in a thread; the admission
    # loop, woken by anything meanwhile, used to unpack the same directory at once, and
    # each deleted the other's files: a 500 for the participant (CI saw it under load).
    import io
    import threading

    from starlette.datastructures import UploadFile

    from referee.server import play, unpack, uploads

    competition = _competition(tmp_path)
    store = competition.store
    alice, _token = store.add_participant("alice")
    calls = 0
    inside = trio.Event()  # the request's thread is inside the unpack
    release = threading.Event()  # ... and stays there until admission has been woken
    real_unpack = unpack.unpack_upload

    def held_unpack(*args: object, **kwargs: object) -> list[str]:
        nonlocal calls
        calls += 1
        if calls == 1:
            trio.from_thread.run_sync(inside.set)
            release.wait(60)  # a deadline for a hang, never reached when the test works
        return real_unpack(*args, **kwargs)  # type: ignore[arg-type]

    admitted: list[tuple[int, bool]] = []  # (version, its files complete when admitted)

    async def admit(_config: object, the_store: CompetitionStore, version: object) -> bool:
        version_id = getattr(version, "id", 0)
        root = uploads.version_root(competition, version_id)
        admitted.append((version_id, (root / uploads.COMPLETE).exists()))
        the_store.decide(version_id, "admitted", "ok", "", {"name": "v", "command": ["x"]})
        return True

    taken_meanwhile: list[int | None] = []

    async def wake_admission_inside_the_unpack() -> None:
        await inside.wait()
        competition.notify()  # as its poll, or another version's decision, wakes it
        await trio.testing.wait_all_tasks_blocked()  # it has done what it does when woken
        taken_meanwhile.append(competition.admitting)
        release.set()

    monkeypatch.setattr(uploads, "unpack_upload", held_unpack)
    monkeypatch.setattr(play, "admit", admit)
    bot = UploadFile(file=io.BytesIO(b"print('hello')\n"), filename="main.py")
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play.admission_loop, competition)
            nursery.start_soon(wake_admission_inside_the_unpack)
            version = await uploads.accept_upload(competition, alice, bot, "python3")
            with trio.fail_after(10):
                while not admitted:
                    await competition.changed.wait()
            nursery.cancel_scope.cancel()
    finally:
        release.set()
    assert taken_meanwhile == [None]  # admission left the version to its request
    assert version.status == "pending"
    assert admitted == [(version.id, True)]
    assert calls == 1  # unpacked once, by the request
    store.close()


async def test_a_version_whose_upload_a_kill_cut_short_is_refused_with_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A kill -9 between the version's row and the rename of its bytes into versions/<id>/
    # leaves a pending version with no upload.  The next start's admission met a
    # FileNotFoundError: "a server bug", a traceback, and the server's own path shown to
    # everyone on the version's page.  It is the participant's to upload again, said so.
    from referee.server import play

    competition = _competition(tmp_path)
    store = competition.store
    alice, _token = store.add_participant("alice")
    cut = store.add_version(alice.id, "python3", "main.py", "", 15).id
    admitted: list[int] = []

    async def admit(_config: object, _store: CompetitionStore, version: object) -> bool:
        admitted.append(getattr(version, "id", 0))  # never reached: nothing to build
        return True

    monkeypatch.setattr(play, "admit", admit)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(play.admission_loop, competition)
        while (found := store.version(cut)) is not None and found.status == "pending":
            await competition.changed.wait()
        nursery.cancel_scope.cancel()
    version = store.version(cut)
    assert version is not None and admitted == []
    assert (version.status, version.detail) == (
        "rejected",
        "upload: the server stopped before this upload was stored; upload it again",
    )
    assert "Traceback" not in capsys.readouterr().err
    store.close()


async def test_a_failed_group_is_replayed_only_once_its_old_worker_has_ended(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    # A table worker that fails mid-match (a bad line) may still be playing it: it drops
    # the match when its stdin closes, flushing the match's log as it goes, and is given up
    # to WORKER_EXIT_GRACE.  The group was offered for a retry before that close, so an idle
    # table took it at once and played the same match id: one log written by two referees.
    from referee.server import play

    competition = _competition(tmp_path)
    store = competition.store
    for name in ("alice", "bob", "carol"):
        participant, _token = store.add_participant(name)
        version = store.add_version(participant.id, "python3", "main.py", "", 1)
        spec = BotSpec(name, ("python3", "main.py")).to_json()
        store.decide(version.id, "admitted", "ok", "", spec)
    queue = GroupQueue(competition)
    old_worker_gone = trio.Event()
    failed = trio.Event()
    played: list[tuple[int, str, bool]] = []  # (table, match id, the old worker gone by then)
    opened: list[int] = []

    class FakeTable:
        def __init__(self, number: int) -> None:
            self.number = number
            self.fails = not opened  # the first table opened fails its first match
            opened.append(number)

        async def play(self, key: MatchKey, *_args: object) -> MatchResult:
            played.append((self.number, key.match_id, old_worker_gone.is_set()))
            if self.fails:
                failed.set()
                raise WorkerError("its table worker wrote a bad line")
            await trio.sleep_forever()
            raise AssertionError("unreachable")

        async def aclose(self) -> None:
            if self.fails:
                await old_worker_gone.wait()  # still ending the match it was playing

    async def open_table(number: int) -> play.Table:
        if number == 2:
            await failed.wait()  # table 2 is idle until table 1's worker has failed
        return FakeTable(number)

    with trio.fail_after(60):  # virtual seconds: a hang is a failure, not a stuck suite
        async with trio.open_nursery() as nursery:
            for number in (1, 2):
                nursery.start_soon(play.table_loop, competition, queue, number, open_table)
            await failed.wait()
            await trio.sleep(1)  # table 2 looks for its first group
            old_worker_gone.set()
            await trio.sleep(play.RESTART_DELAY + 5)  # table 1 reopens and looks again
            nursery.cancel_scope.cancel()
    first_match = played[0][1]
    again = [(table, gone) for table, mid, gone in played[1:] if mid == first_match]
    assert again and all(gone for _table, gone in again), played
    store.close()


def test_a_house_bot_cut_by_a_kill_at_its_first_start_is_admitted_at_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A house bot is a participant, a version, then its decision: a kill -9 before the
    # decision left a pending "bundled" version, which the next start skipped (it had a
    # version) and admission then rejected (nothing was uploaded): the organiser's
    # sparring bot gone for good.
    competition = _competition(tmp_path)
    store = competition.store

    def killed(*_args: object) -> None:
        raise KeyboardInterrupt("the process ends here")  # kill -9: nothing after runs

    with monkeypatch.context() as patched:
        patched.setattr(store, "decide", killed)
        with pytest.raises(KeyboardInterrupt):
            competition.ensure_house_bots(competition.config.house_bots)
    assert [v.status for v in store.versions()] == ["pending"]  # as the kill leaves it
    competition.ensure_house_bots(competition.config.house_bots)  # the next start
    versions = store.versions()
    assert [(v.participant_name, v.status) for v in versions] == [("house:random", "admitted")]
    assert versions[0].spec is not None
    store.close()
