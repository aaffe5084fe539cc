"""A finals or challenge match's log to download, and a match page's first look bounded.

Against the app in this process (``httpx`` through ASGI), with a real match's log (a
crashing bot's stderr in it) kept as a compact record and as JSON lines:

* a challenge's log goes to its players alone, each with its own seat's stderr,
  never to a second account or to nobody signed in, and nothing while it plays;
  what a player downloads goes through ``newmarket replay``;
* a finals match is a 404 to all but the organiser until the final ranking is
  published, then anyone's, as a ladder match's;
* a match page's first look counts toward the client's
  ``[server] downloads_per_minute`` (a page seen lately does not), and is made in
  a worker thread while the server answers others.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import trio
from starlette.types import ASGIApp

from referee.match import compact
from referee.match.dealkey import DealKey
from referee.server import match_builds
from referee.server.app import build_app
from referee.server.auth import SESSION_COOKIE
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.contest_db import (
    Challenge,
    add_challenge,
    contest_played,
    finish_finals,
    record_contest_match,
    set_challenge,
    start_finals,
)
from referee.server.finals import labels, ranking
from referee.server.organiser_auth import (
    ORGANISER_COOKIE,
    new_organiser_token,
    open_organiser_session,
)
from referee.tools.replay import verify_log
from tests.server.contest_fakes import asgi_client, contest
from tests.server.inprocess import finished

REPO = Path(__file__).resolve().parents[2]
CUP = """[competition]
name = "cup"
house_bots = []
[server]
downloads_per_minute = 3
"""
PEOPLE = ("alice", "bob", "carol", "dave")
SETTINGS = ("--hands", "10", "--sandbox", "none", "--log")
CRASH_STDERR = "crash.py: dying on purpose"  # seat 2's last words, its owner's alone


def newmarket(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """``newmarket ARGS`` run as a user would, its output kept for the assertion's message."""
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One real 3-seat match (seat 2 crashes, saying so on its stderr): its full log and
    its compact record."""
    root = tmp_path_factory.mktemp("played")
    full = root / "m.jsonl"
    crash = f"{sys.executable} -m tests.referee.bots.crash 6 3"
    bots = ["--bot", "random", "--bot", "tracker", "--bot", crash]
    done = newmarket("match", *bots, *SETTINGS, str(full), timeout=300)
    assert done.returncode == 0, done.stderr
    assert CRASH_STDERR in full.read_text()
    record = root / "m.nmr"
    record.write_bytes(compact.compact(full.read_bytes()))
    return {"full": full, "compact": record}


@dataclass
class Cup:
    competition: Competition
    people: dict[str, tuple[int, int, str]]  # name: (participant, version, token)
    tmp: Path
    app: ASGIApp
    now: list[float]  # the competition's clock, moved by the test

    @property
    def store(self) -> CompetitionStore:
        return self.competition.store

    def version(self, name: str) -> int:
        return self.people[name][1]

    def token(self, name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.people[name][2]}"}

    def client(self, address: str = "203.0.113.7") -> httpx.AsyncClient:
        return asgi_client(self.app, address)

    def alices_challenge(self) -> tuple[tuple[int, ...], Challenge]:
        """alice's challenge of bob and carol (waiting), with its seating."""
        seating = tuple(self.version(name) for name in ("alice", "bob", "carol"))
        asked = add_challenge(
            self.store,
            self.people["alice"][0],
            seating,
            7,
            DealKey.generate().to_text(),
            self.now[0],
        )
        return seating, asked

    def kept(self, source: Path, match_id: str) -> Path:
        """A copy of ``source`` as match ``match_id``'s kept record."""
        target = self.tmp / "logs" / f"{match_id}{source.suffix}"
        target.parent.mkdir(exist_ok=True)
        shutil.copy(source, target)
        return target


@pytest.fixture
def cup(tmp_path: Path) -> Iterator[Cup]:
    with contest(tmp_path, CUP, PEOPLE) as (competition, people):
        now = [1_000_000.0]
        competition.clock = lambda: now[0]
        yield Cup(competition, people, tmp_path, build_app(competition), now)


def one_line(answer: httpx.Response) -> str:
    reason = answer.json()["error"]
    assert isinstance(reason, str) and "\n" not in reason and len(reason) < 200, reason
    return reason


def replays(text: str, where: Path) -> None:
    """The downloaded ``text`` verifies as ``newmarket replay`` verifies it."""
    where.write_text(text)
    verify_log(where)


# ---------------------------------------------------------------------- challenges


async def test_a_challenges_log_goes_to_its_players_alone_each_with_its_own_stderr(
    cup: Cup, played: dict[str, Path]
) -> None:
    seating, asked = cup.alices_challenge()
    # Rotation 0 kept as a compact record, rotation 1 as JSON lines (carol at seat 0 there,
    # so the crash's stderr at seat 2 is bob's).
    for rotation, (form, seats) in enumerate(
        (("compact", seating), ("full", (seating[2], seating[0], seating[1])))
    ):
        mid = f"c{asked.id}r{rotation}"
        log = cup.kept(played[form], mid)
        record_contest_match(
            cup.store, mid, "challenge", asked.id, 0, rotation, 5, seats, finished(mid, 5), str(log)
        )
    set_challenge(cup.store, asked.id, "playing")
    async with cup.client() as client:
        early = await client.get("/api/matches/c1r0/log", headers=cup.token("alice"))
        assert early.status_code == 403 and "still being played" in one_line(early)
        assert (await client.get("/api/challenges/1", headers=cup.token("alice"))).json()[
            "matches"
        ][0]["log"] is None
        set_challenge(cup.store, asked.id, "finished")

        # Nobody signed in, and a second account who did not play: as if it did not exist.
        for headers in ({}, cup.token("dave")):
            for path in ("/api/matches/c1r0/log", "/api/matches/c1r1/log"):
                refused = await client.get(path, headers=headers)
                assert refused.status_code == 404 and one_line(refused) == "no such match"
                assert CRASH_STDERR not in refused.text
            page = await client.get("/matches/c1r0/log", headers=headers)
            assert page.status_code == 404 and CRASH_STDERR not in page.text

        # Each player: the log, its own seat's stderr only, and it replays.
        expected = {("alice", 0): False, ("carol", 0): True, ("bob", 1): True, ("carol", 1): False}
        for (name, rotation), own_crash in expected.items():
            answer = await client.get(f"/api/matches/c1r{rotation}/log", headers=cup.token(name))
            assert answer.status_code == 200, answer.text
            assert answer.headers["content-disposition"].endswith(f'c1r{rotation}.jsonl"')
            assert (CRASH_STDERR in answer.text) is own_crash, (name, rotation)
            replays(answer.text, cup.tmp / f"{name}-{rotation}.jsonl")

        # The challenge's JSON and its page link the logs.
        shown = (await client.get("/api/challenges/1", headers=cup.token("alice"))).json()
        assert [m["log"] for m in shown["matches"]] == [
            "/api/matches/c1r0/log",
            "/api/matches/c1r1/log",
        ]
    # ``newmarket replay`` itself, on what a player downloaded from the compact record.
    done = newmarket("replay", str(cup.tmp / "alice-0.jsonl"), timeout=120)
    assert done.returncode == 0, done.stderr


async def test_a_gone_record_is_a_one_line_404_and_the_challenge_page_links_the_logs(
    cup: Cup, played: dict[str, Path]
) -> None:
    seating, asked = cup.alices_challenge()
    log = cup.kept(played["compact"], "c1r0")
    record_contest_match(
        cup.store, "c1r0", "challenge", asked.id, 0, 0, 5, seating, finished("c1r0", 5), str(log)
    )
    set_challenge(cup.store, asked.id, "finished")
    (ladder,) = _ladder(cup, played, 1)[:1]
    async with cup.client() as client:
        # The challenge's page, to a browser signed in as its requester, links the log.
        client.cookies.set(SESSION_COOKIE, cup.store.open_session(cup.people["alice"][0], 3600))
        page = await client.get("/challenges/1")
        assert page.status_code == 200 and 'href="/matches/c1r0/log"' in page.text
        client.cookies.clear()
        log.unlink()
        gone = await client.get("/api/matches/c1r0/log", headers=cup.token("alice"))
        assert gone.status_code == 404
        assert (
            one_line(gone) == "the log of match c1r0 is no longer kept (its result is, on its page)"
        )
        # A record retention pruned says when, as the match's page does.
        (cup.tmp / "logs" / f"{ladder}.nmr").unlink()
        cup.store.mark_pruned([(ladder, 1234)], 1_764_288_000.0, 7)  # 2025-11-28
        pruned = await client.get(f"/api/matches/{ladder}/log")
        assert pruned.status_code == 404
        assert "record pruned on 2025-11-28 (retention 7 days)" in one_line(pruned)


# ---------------------------------------------------------------------- finals


async def test_a_finals_match_is_nobodys_before_the_ranking_and_anyones_after(
    cup: Cup, played: dict[str, Path]
) -> None:
    seating = tuple(cup.version(name) for name in ("alice", "bob", "carol"))
    finals = start_finals(cup.store, seating, 9, DealKey.generate().to_text(), [seating])
    log = cup.kept(played["full"], "f1g0r0")
    result = finished("f1g0r0", 5)
    record_contest_match(
        cup.store, "f1g0r0", "finals", finals.id, 0, 0, 5, seating, result, str(log)
    )
    organiser = {"Authorization": f"Bearer {new_organiser_token(cup.store)}"}
    async with cup.client() as client:
        for headers in ({}, cup.token("alice"), cup.token("dave")):
            for path in ("/api/matches/f1g0r0/log", "/matches/f1g0r0/log"):
                hidden = await client.get(path, headers=headers)
                assert hidden.status_code == 404, (path, headers)
                assert CRASH_STDERR not in hidden.text
        assert "f1g0r0" not in (await client.get("/finals")).text
        # The organiser may look before (to check the finals are sound).
        early = await client.get("/api/matches/f1g0r0/log", headers=organiser)
        assert early.status_code == 200
        replays(early.text, cup.tmp / "organiser.jsonl")
        client.cookies.set(ORGANISER_COOKIE, open_organiser_session(cup.store))  # signed in
        assert (await client.get("/matches/f1g0r0/log")).status_code == 200
        client.cookies.clear()

        played_rows = contest_played(cup.store, "finals", finals.id)
        finish_finals(
            cup.store, finals.id, ranking(finals, played_rows, labels(cup.store, seating))
        )

        anyone = await client.get("/api/matches/f1g0r0/log")
        assert anyone.status_code == 200 and CRASH_STDERR not in anyone.text
        replays(anyone.text, cup.tmp / "anyone.jsonl")
        owner = await client.get("/api/matches/f1g0r0/log", headers=cup.token("carol"))
        assert owner.status_code == 200 and CRASH_STDERR in owner.text  # carol's seat 2
        assert (await client.get("/api/finals")).json()["logs"] == [
            {"match": "f1g0r0", "log": "/api/matches/f1g0r0/log"}
        ]
        assert 'href="/matches/f1g0r0/log"' in (await client.get("/finals")).text


# ---------------------------------------------------------------------- a match's first look


def _ladder(cup: Cup, played: dict[str, Path], groups: int) -> list[str]:
    """``groups`` finished duplicate groups of alice, bob and carol, each match kept as a
    record of its own (a page of its own to make); their match ids."""
    versions = tuple(cup.version(name) for name in ("alice", "bob", "carol"))
    ids = []
    for _ in range(groups):
        group = cup.store.plan_group(5, versions, "test")
        for rotation in range(3):
            mid = f"g{group.id}r{rotation}"
            log = cup.kept(played["compact"], mid)
            cup.store.record(group, rotation, versions, finished(mid, 5), log, identity=5)
            ids.append(mid)
    return ids


async def test_first_looks_at_match_pages_count_toward_the_download_limit(
    cup: Cup, played: dict[str, Path]
) -> None:
    ids = _ladder(cup, played, 2)
    async with cup.client("198.51.100.1") as walker, cup.client("198.51.100.2") as other:
        for mid in ids[:3]:  # the limit is 3 a minute
            assert (await walker.get(f"/api/matches/{mid}")).status_code == 200
        refused = await walker.get(f"/api/matches/{ids[3]}")
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 0
        assert one_line(refused).startswith("too many new match pages and log downloads: 3")
        page = await walker.get(f"/matches/{ids[4]}")
        assert page.status_code == 429 and "too many new match pages" in page.text
        # A page seen lately costs nothing and is not counted; another client has its own.
        again = await walker.get(f"/api/matches/{ids[0]}")
        assert again.status_code == 200 and again.json()["replay"] is not None
        assert (await other.get(f"/matches/{ids[3]}")).status_code == 200
        # A log download from the same client is refused too: one count for both.
        assert (await walker.get(f"/api/matches/{ids[5]}/log")).status_code == 429
        cup.now[0] += 61
        shown = await walker.get(f"/api/matches/{ids[4]}")
        assert shown.status_code == 200 and shown.json()["replay"] is not None


async def test_a_match_page_is_made_in_a_worker_thread_while_others_are_served(
    cup: Cup, played: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _ladder(cup, played, 1)
    started, release = threading.Event(), threading.Event()
    loop_thread = threading.get_ident()
    threads: list[int] = []
    make = match_builds._make

    def held(*args: object) -> None:
        threads.append(threading.get_ident())
        started.set()
        assert release.wait(60), "never released"
        make(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(match_builds, "_make", held)
    answers: dict[str, httpx.Response] = {}
    async with cup.client() as looker, cup.client("198.51.100.3") as reader:

        async def look() -> None:
            answers["page"] = await looker.get(f"/api/matches/{ids[0]}")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(look)
            assert await trio.to_thread.run_sync(started.wait, 60)
            # The page is being made, held in its thread: the server answers others.
            for path in ("/api/phase", "/api/leaderboard", f"/api/matches/{ids[1]}/log"):
                assert (await reader.get(path)).status_code == 200, path
            assert "page" not in answers
            release.set()
    assert answers["page"].status_code == 200 and answers["page"].json()["replay"] is not None
    assert threads and loop_thread not in threads
