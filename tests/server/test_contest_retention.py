"""A contest's match records under retention, and the files of versions that never play again.

The clock is injected: the stores stamp ``finished_at`` from a fake wall clock
and the pass reads the same clock, so days pass in no time.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import trio

from referee.bots import BotSpec
from referee.server import competition_db, contest_db, organiser
from referee.server.app import build_app
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.contest_db import (
    add_challenge,
    record_contest_match,
    set_challenge,
    start_finals,
)
from referee.server.metrics import snapshot
from referee.server.retention import DAY, Retention
from referee.server.uploads import COMPLETE
from referee.server.views import match_view
from tests.server.inprocess import (
    START,
    FakeTime,
    admitted_group,
    fake_wall_clock,
    finished,
    open_competition,
    operations_said,
)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    return fake_wall_clock(monkeypatch, competition_db, contest_db)


@pytest.fixture
def said() -> Iterator[io.StringIO]:
    with operations_said() as out:
        yield out


def _competition(tmp_path: Path, retention: str) -> Competition:
    sections = f"[server]\nsecure_cookies = false\n[retention]\n{retention}\n"
    return open_competition(tmp_path, sections=sections)


def _contest_match(competition: Competition, kind: str, owner: int, rotation: int) -> str:
    """One finished finals or challenge match with a compact record and a stderr beside it."""
    logs = competition.config.logs_dir
    logs.mkdir(parents=True, exist_ok=True)
    mid = f"f{owner}g0r{rotation}" if kind == "finals" else f"c{owner}r{rotation}"
    (logs / f"{mid}.nmz").write_bytes(b"z" * 2000)
    (logs / f"{mid}.stderr").write_bytes(b"e" * 10)
    record_contest_match(
        competition.store, mid, kind, owner, 0, rotation, 7, [1, 2, 3],
        finished(mid, 7), str(logs / f"{mid}.nmz"),
    )  # fmt: skip
    return mid


async def _challenge_answers(
    competition: Competition, token: str, challenge: int
) -> tuple[dict[str, object], str, httpx.Response]:
    transport = httpx.ASGITransport(app=build_app(competition))
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(transport=transport, base_url="http://cup") as client:
        api = await client.get(f"/api/challenges/{challenge}", headers=headers)
        form = await client.get("/signin")
        csrf = form.text.split('name="csrf" value="')[1].split('"')[0]
        await client.post("/signin", data={"token": token, "csrf": csrf})
        page = await client.get(f"/challenges/{challenge}")
        download = await client.get(f"/api/matches/c{challenge}r0/log", headers=headers)
    assert api.status_code == 200 and page.status_code == 200
    return api.json(), page.text, download


def test_challenges_are_kept_for_ever_unless_the_organiser_says_and_finals_always(
    tmp_path: Path, clock: FakeTime, said: io.StringIO
) -> None:
    competition = _competition(tmp_path, "days = 7\nfirst_groups = 0")
    store = competition.store
    group = admitted_group(store)
    alice = store.version(group.versions[0])
    assert alice is not None
    finals = start_finals(store, group.versions, 9, "k" * 64, [group.versions])
    finals_matches = [_contest_match(competition, "finals", finals.id, r) for r in range(3)]
    asked = add_challenge(store, alice.participant, group.versions, 3, "k" * 64, START)
    challenge_matches = [_contest_match(competition, "challenge", asked.id, r) for r in range(3)]
    set_challenge(store, asked.id, "finished")
    for rotation in range(3):  # a ladder group, whose records are pruned after 7 days
        mid = competition_db.match_id(group.id, rotation)
        log = competition.config.logs_dir / f"{mid}.nmz"
        log.write_bytes(b"l" * 2000)
        store.record(group, rotation, group.versions, finished(mid, 5), log, identity=5)
    ladder = competition_db.match_id(group.id, 0)
    logs = competition.config.logs_dir

    # A hundred days on, by the rule: a finals match and a match someone asked for
    # are kept for ever; the ladder's is pruned.
    clock.now += 100 * DAY
    report = trio.run(Retention(competition, clock=clock.time).run_pass)
    assert report.pruned == 3
    for mid in [*finals_matches, *challenge_matches]:
        assert (logs / f"{mid}.nmz").exists() and (logs / f"{mid}.stderr").exists()
    assert "what=contest-matches" not in said.getvalue()
    competition.store.close()

    # The organiser bounds the challenges' records to 30 days: the next pass prunes them
    # (looked at again under the new rule), never the finals'.
    competition = _competition(tmp_path, "days = 7\nfirst_groups = 0\nchallenge_days = 30")
    store = competition.store
    trio.run(Retention(competition, clock=clock.time).run_pass)
    for mid in challenge_matches:
        assert not (logs / f"{mid}.nmz").exists() and not (logs / f"{mid}.stderr").exists()
    for mid in finals_matches:
        assert (logs / f"{mid}.nmz").exists()
    assert (
        " retention what=contest-matches pruned=3 freed_bytes=6030 kept=3 challenge_days=30\n"
        in said.getvalue()
    )
    # The challenge's result stays; its page and API say what a ladder match's page says.
    ladder_view = match_view(competition, ladder, None)
    assert ladder_view is not None
    assert ladder_view["record_pruned"] == "record pruned on 2027-03-08 (retention 7 days)"
    alice_token = _token_of(store, alice.participant)
    api, page, download = trio.run(_challenge_answers, competition, alice_token, asked.id)
    matches = api["matches"]
    assert isinstance(matches, list) and len(matches) == 3
    assert {m["record_pruned"] for m in matches} == {
        "record pruned on 2027-03-08 (retention 30 days)"
    }
    assert {m["log"] for m in matches} == {None}  # no link to a record that is gone
    # Its download says when, as a ladder match's does.
    assert download.status_code == 404
    assert "record pruned on 2027-03-08 (retention 30 days)" in download.text
    assert api["net_chips"] and api["status"] == "finished"
    assert page.count("record pruned on 2027-03-08 (retention 30 days)") == 3
    # The status page counts every record pruned: the ladder's three and the challenge's.
    assert snapshot(competition).records_pruned == 6
    competition.store.close()

    # Another change of rules walks the contest's matches again: the records already pruned
    # are not counted a second time, and nothing else is said.
    competition = _competition(tmp_path, "days = 5\nfirst_groups = 0\nchallenge_days = 20")
    said.truncate(0)
    said.seek(0)
    trio.run(Retention(competition, clock=clock.time).run_pass)
    assert "what=contest-matches" not in said.getvalue()
    assert " retention pruned=0 " in said.getvalue()
    competition.store.close()


def _token_of(store: CompetitionStore, participant: int) -> str:
    found = store.participant(participant)
    assert found is not None
    done = organiser.rotate_token(store, organiser.SHELL, found.name)
    assert done.token is not None
    return done.token


def _files(competition: Competition, version: int) -> Path:
    root = competition.config.uploads_dir / f"{version:06d}"
    (root / "files" / "build").mkdir(parents=True)
    (root / "files" / "build" / "bot").write_bytes(b"b" * 30_000)
    (root / "upload").write_bytes(b"u" * 100)
    (root / COMPLETE).touch()
    return root


def _admit(store: CompetitionStore, participant: int, status: str = "admitted") -> int:
    version = store.add_version(participant, "python3", "main.py", "", 1)
    spec = BotSpec("x", ("x",)).to_json() if status == "admitted" else None
    store.decide(version.id, status, "ok" if spec else "check: illegal move", "", spec)
    return version.id


def test_files_of_versions_that_will_not_play_again_go_once_no_table_uses_them(
    tmp_path: Path, clock: FakeTime, said: io.StringIO
) -> None:
    competition = _competition(tmp_path, "days = 7")
    store = competition.store
    group = admitted_group(store)  # planned, not played: its versions are in use
    a1, b1, _c1 = group.versions
    alice, bob = (store.version(v).participant for v in (a1, b1))  # type: ignore[union-attr]
    a2, rejected = _admit(store, alice), _admit(store, alice, "rejected")
    b2, b3 = _admit(store, bob), _admit(store, bob)
    roots = {v: _files(competition, v) for v in (a1, a2, rejected, b1, b2, b3)}
    organiser.withdraw(store, organiser.SHELL, str(a1), "keep")
    retention = Retention(competition, clock=clock.time)

    trio.run(retention.run_pass)
    # Only the rejected version's files go: the others sit in the group still being played,
    # play, or are the version before the one that plays.
    assert not roots[rejected].exists()
    assert store.version(rejected) is not None  # its row (and page) stays
    for version in (a1, a2, b1, b2, b3):
        assert (roots[version] / "files" / "build" / "bot").exists()
    assert " retention what=version-files versions=1 freed_bytes=30100\n" in said.getvalue()

    for rotation in range(3):  # the group finishes: no table will seat it again
        mid = competition_db.match_id(group.id, rotation)
        store.record(group, rotation, group.versions, finished(mid, 5), None, identity=5)
    trio.run(retention.run_pass)
    # The withdrawn a1 and bob's b1 (older than his two newest) go; b2 and b3 stay.
    assert not roots[a1].exists() and not roots[b1].exists()
    for version in (a2, b2, b3):
        assert (roots[version] / "files" / "build" / "bot").exists()
    assert " retention what=version-files versions=2 freed_bytes=60200\n" in said.getvalue()
    playing = {v.id for v in store.playing_versions()}
    assert {a2, b3} <= playing
    # Withdrawing bob's newest brings back the one before it, whose files were kept; after
    # that one too, no version of his is seated: b1's files are gone.
    organiser.withdraw(store, organiser.SHELL, str(b3), "keep")
    assert b2 in {v.id for v in store.playing_versions()}
    organiser.withdraw(store, organiser.SHELL, str(b2), "keep")
    assert not {b1, b2, b3} & {v.id for v in store.playing_versions()}
    store.close()


def test_a_group_whose_version_lost_its_files_is_not_re_run(
    tmp_path: Path, clock: FakeTime, said: io.StringIO
) -> None:
    # A re-run plays the group's table again; a superseded version whose files retention
    # removed cannot start, and its owner must not be charged for the missing files.
    competition = _competition(tmp_path, "days = 7")
    store = competition.store
    group = admitted_group(store)
    for rotation in range(3):
        mid = competition_db.match_id(group.id, rotation)
        store.record(group, rotation, group.versions, finished(mid, 5), None, identity=5)
    roots = {v: _files(competition, v) for v in group.versions}
    for version in group.versions:  # two newer versions each: the first is superseded
        owner = store.version(version)
        assert owner is not None
        _admit(store, owner.participant)
        _admit(store, owner.participant)
    trio.run(Retention(competition, clock=clock.time).run_pass)
    assert not any(root.exists() for root in roots.values())

    with pytest.raises(organiser.OrganiserError, match="whose files were removed"):
        organiser.rerun(store, organiser.SHELL, str(group.id), 1)
    assert store.group_count() == 1  # nothing planned
    store.close()
