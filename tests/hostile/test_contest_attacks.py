"""The contest's web features attacked as a hostile participant would, over HTTP.

Each test is one attack on the app in this process (``httpx`` through ASGI): no
token, a wrong or revoked one, a second account's, floods, crafted query strings
and bodies.  Each asserts what the attacker sees (the status and its one-line
reason), that nothing private is in any answer, and that the server still
serves.  What each attack did before its fix: benchmarks/results/2026-11-28-contest-attacks.md.
"""

from __future__ import annotations

import functools
import io
import json
import zipfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import trio
import trio.testing
from starlette.types import ASGIApp

from referee.match.dealkey import DealKey
from referee.scoring.policies import tracker
from referee.server import organiser
from referee.server.app import build_app
from referee.server.bad_tokens import UNKNOWN_TOKEN
from referee.server.challenges import challenge_loop
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore, Group
from referee.server.competition_file import load_config
from referee.server.contest_db import challenge, start_finals
from referee.server.contest_play import group_keys, play_keys
from referee.server.finals import prefix
from referee.server.organiser_auth import ORGANISER_COOKIE, new_organiser_token
from referee.server.play import Table
from referee.server.quotas import DiskSpace
from tests.server.contest_fakes import PolicyTable, admitted, asgi_client, contest
from tests.server.inprocess import finished

CUP = """[competition]
name = "cup"
house_bots = []
[server]
downloads_per_minute = 3
[challenges]
per_hour = 2
"""
PEOPLE = ("alice", "bob", "carol", "dave")
SECRET_STDERR = "my strategy: bluff on hearts"


@dataclass
class Cup:
    competition: Competition
    people: dict[str, tuple[int, int, str]]  # name: (participant, version, token)
    tmp: Path
    app: ASGIApp

    @property
    def store(self) -> CompetitionStore:
        return self.competition.store

    def token(self, name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.people[name][2]}"}

    def client(self, address: str = "203.0.113.7") -> httpx.AsyncClient:
        return asgi_client(self.app, address)

    def finished_group(self) -> Group:
        """A duplicate group of alice, bob and carol, all three matches stored with a log
        whose every seat wrote ``SECRET_STDERR`` on its stderr."""
        versions = tuple(self.people[name][1] for name in PEOPLE[:3])
        group = self.store.plan_group(5, versions, "test")
        for rotation in range(3):
            log = self.tmp / f"g{group.id}r{rotation}.jsonl"
            lines = [
                {"type": "header", "bots": [{"cwd": str(self.competition.config.data)}]},
                *({"type": "stderr", "seat": s, "text": f"{SECRET_STDERR} {s}"} for s in range(3)),
            ]
            log.write_text("".join(json.dumps(line) + "\n" for line in lines))
            mid = f"g{group.id}r{rotation}"
            self.store.record(group, rotation, versions, finished(mid, 5), log, identity=5)
        return group


@pytest.fixture
def cup(tmp_path: Path) -> Iterator[Cup]:
    with contest(tmp_path, CUP, PEOPLE) as (competition, people):
        yield Cup(competition, people, tmp_path, build_app(competition))


def one_line(answer: httpx.Response) -> str:
    """The JSON refusal's reason, checked to be one short line."""
    reason = answer.json()["error"]
    assert isinstance(reason, str) and "\n" not in reason and len(reason) < 200, reason
    return reason


async def still_serving(cup: Cup) -> None:
    async with cup.client() as client:
        board = await client.get("/api/leaderboard")
    assert board.status_code == 200 and "rows" in board.json()


# ---------------------------------------------------------------------- tokens


async def test_a_wrong_rotated_or_revoked_token_is_a_401_never_a_stranger(cup: Cup) -> None:
    """Before: a token that signed nobody in was taken for no token on every public address,
    so a participant whose token was rotated downloaded logs without its own stderr, silently."""
    cup.finished_group()
    old = cup.people["bob"][2]
    organiser.rotate_token(cup.store, organiser.API, "bob")
    organiser.revoke_token(cup.store, organiser.API, "carol")
    carols = cup.people["carol"][2]
    async with cup.client() as client:
        for token in (old, carols, "x" * 5000, "nm-" + "0" * 32):
            headers = {"Authorization": f"Bearer {token}"}
            for path in (
                "/api/me",
                "/api/matches/g1r1/log",
                "/api/matches/g1r1",
                "/api/participants/bob",
                "/api/participants/bob/matches",
                "/api/versions/1",
                "/api/challenges",
                "/api/challenges/1",
                "/api/leaderboard",
            ):
                answer = await client.get(path, headers=headers)
                assert answer.status_code == 401, (path, answer.text)
                assert one_line(answer) == UNKNOWN_TOKEN
            upload = await client.post(
                "/api/versions", headers=headers, files={"bot": ("main.py", b"x" * 100_000)}
            )
            assert upload.status_code == 401 and one_line(upload) == UNKNOWN_TOKEN
            # The organiser's addresses still say nothing of themselves to a bad token.
            hidden = await client.get("/api/organiser/audit", headers=headers)
            assert hidden.status_code == 404
        # No token at all: the public data, as before; alice's good token: hers.
        public = await client.get("/api/matches/g1r1/log")
        assert public.status_code == 200 and SECRET_STDERR not in public.text
        mine = await client.get("/api/matches/g1r0/log", headers=cup.token("alice"))
        assert f"{SECRET_STDERR} 0" in mine.text and f"{SECRET_STDERR} 1" not in mine.text
    await still_serving(cup)


async def test_another_participants_token_opens_nothing_of_theirs(cup: Cup) -> None:
    """dave (a second account) with his own good token: no stderr of another seat, no one
    else's challenge, no organiser address, no one else's version transcript."""
    cup.finished_group()
    async with cup.client() as client:
        made = await client.post(
            "/api/challenges", json={"opponents": ["bob", "carol"]}, headers=cup.token("alice")
        )
        assert made.status_code == 201
        # Nothing of the challenge played yet: no match to download, for anyone (refusals
        # are not counted against the downloads a minute).  Its logs once played, to its
        # players alone: tests/server/test_contest_downloads.py.
        for headers in (cup.token("alice"), cup.token("dave"), {}):
            log = await client.get("/api/matches/c1r0/log", headers=headers)
            assert log.status_code == 404 and one_line(log) == "no such match"
        for rotation in range(3):
            log = await client.get(f"/api/matches/g1r{rotation}/log", headers=cup.token("dave"))
            assert log.status_code == 200 and SECRET_STDERR not in log.text
        other = await client.get(f"/api/challenges/{made.json()['id']}", headers=cup.token("dave"))
        assert other.status_code == 404 and one_line(other) == "no such challenge"
        assert (await client.get("/api/challenges", headers=cup.token("dave"))).json() == {
            "challenges": []
        }
        version = await client.get(
            f"/api/versions/{cup.people['alice'][1]}", headers=cup.token("dave")
        )
        assert version.status_code == 200 and "transcript" not in version.json()
        for path in (
            "/api/organiser/participants",
            "/api/organiser/audit",
            "/api/organiser/contest",
            "/organiser",
        ):
            assert (await client.get(path, headers=cup.token("dave"))).status_code == 404
        # dave's own session, sent as the organiser's cookie: a participant's is never one.
        session = cup.store.open_session(cup.people["dave"][0], 3600)
        client.cookies.set(ORGANISER_COOKIE, session)
        assert (await client.get("/organiser")).status_code == 404
        client.cookies.clear()
        link = await client.post(
            "/api/organiser/links", json={"names": ["dave", "alice"]}, headers=cup.token("dave")
        )
        assert link.status_code == 404
        act = await client.post(
            "/api/organiser/rotate-token", json={"name": "alice"}, headers=cup.token("dave")
        )
        assert act.status_code == 404


# ---------------------------------------------------------------------- the feed


async def test_a_challenge_is_in_its_players_own_feed_and_never_in_the_public_one(
    cup: Cup,
) -> None:
    """Before: the public feed of /p/NAME/feed.atom listed 'challenge 1 finished' to anyone,
    while a challenge's pages answer 404 to all but its players."""
    policies = {version: tracker() for _p, version, _t in cup.people.values()}

    async def open_table(_number: int) -> Table:
        return PolicyTable(policies)

    async with cup.client() as client, trio.open_nursery() as nursery:
        nursery.start_soon(challenge_loop, cup.competition, 9, open_table)
        made = await client.post(
            "/api/challenges", json={"opponents": ["bob", "carol"]}, headers=cup.token("alice")
        )
        with trio.fail_after(60):
            while (found := challenge(cup.store, made.json()["id"])) is None or (
                found.status != "finished"
            ):
                await trio.sleep(0.05)
        nursery.cancel_scope.cancel()
        for name in ("alice", "bob"):
            for headers in ({}, cup.token("dave")):  # nobody, and a second account
                public = await client.get(f"/p/{name}/feed.atom", headers=headers)
                assert public.status_code == 200 and "challenge" not in public.text
            own = await client.get(f"/p/{name}/feed.atom", headers=cup.token(name))
            assert "challenge 1 finished" in own.text and "/challenges/1" in own.text
        nobody = await client.get("/challenges/1")
        assert nobody.status_code == 404


async def test_challenges_wait_while_the_disk_is_short(
    cup: Cup, autojump_clock: trio.testing.MockClock
) -> None:
    """Before: the ladder stopped for a short disk, and a participant's challenges went on
    playing (and writing their logs) on it."""
    policies = {version: tracker() for _p, version, _t in cup.people.values()}
    free = [0]  # bytes free on the data directory's disk, as the server measures them
    cup.competition.disk = DiskSpace((cup.tmp,), 1 << 30, lambda _path: free[0])

    async def open_table(_number: int) -> Table:
        return PolicyTable(policies)

    async def status() -> str:
        found = challenge(cup.store, 1)
        assert found is not None
        return found.status

    async with cup.client() as client, trio.open_nursery() as nursery:
        nursery.start_soon(challenge_loop, cup.competition, 9, open_table)
        made = await client.post(
            "/api/challenges", json={"opponents": ["bob", "carol"]}, headers=cup.token("alice")
        )
        assert made.status_code == 201
        await trio.sleep(600)
        assert await status() == "waiting"
        free[0] = 2 << 30
        cup.competition.notify()
        with trio.fail_after(600):
            while await status() != "finished":
                await trio.sleep(1)
        nursery.cancel_scope.cancel()


# ---------------------------------------------------------------------- the finals


async def test_nothing_of_the_finals_is_out_before_their_ranking(cup: Cup) -> None:
    """One group of two played: no page, list, feed, metric or download says how it went,
    nor its deal key or seeds; a finals match is not the ladder's to download."""
    versions = tuple(cup.people[name][1] for name in PEOPLE[:3])
    record = start_finals(cup.store, versions, 9, DealKey.generate().to_text(), [versions] * 2)
    keys = group_keys(prefix(record, 0), record.seed, record.deal_key, 0, versions, 20)
    policies = {version: tracker() for version in versions}
    await play_keys(cup.competition, PolicyTable(policies), "finals", record.id, 0, keys, set())
    hidden = [record.deal_key, *(str(key.deal_seed) for key in keys), "f1g0r"]
    async with cup.client() as client:
        for path in (
            "/finals",
            "/api/finals",
            "/p/alice",
            "/p/alice/matches",
            "/p/alice/feed.atom",
            "/api/participants/alice",
            "/api/participants/alice/matches",
            "/api/me",
            "/status",
            "/metrics",
        ):
            for headers in ({}, cup.token("alice"), cup.token("dave")):
                answer = await client.get(path, headers=headers)
                leaked = [text for text in hidden if text in answer.text]
                assert leaked == [], (path, leaked)
        pending = await client.get("/api/finals")
        assert pending.status_code == 404 and one_line(pending) == "the finals have no ranking yet"
        assert "The finals are being played" in (await client.get("/finals")).text
        for path in ("/api/matches/f1g0r0/log", "/api/matches/f1g0r0", "/matches/f1g0r0/log"):
            assert (await client.get(path, headers=cup.token("alice"))).status_code == 404


# ---------------------------------------------------------------------- bodies and floods


async def test_json_nested_too_deep_is_a_400_not_a_500(cup: Cup) -> None:
    """Before: 30,000 brackets (60 KB, under the form cap) raised RecursionError: a 500."""
    deep = "[" * 30_000 + "]" * 30_000
    organiser_token = new_organiser_token(cup.store)
    async with cup.client() as client:
        for path, token in (
            ("/api/challenges", cup.people["alice"][2]),
            ("/api/organiser/links", organiser_token),
            ("/api/organiser/disable", organiser_token),
        ):
            answer = await client.post(
                path,
                content=deep,
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            )
            assert answer.status_code == 400, (path, answer.text)
            assert "JSON" in one_line(answer)
    await still_serving(cup)


async def test_a_flood_of_challenges_gets_exactly_the_hourly_limit(cup: Cup) -> None:
    async with cup.client() as client:
        answers: list[httpx.Response] = []

        async def ask() -> None:
            answers.append(
                await client.post(
                    "/api/challenges",
                    json={"opponents": ["bob", "carol"]},
                    headers=cup.token("alice"),
                )
            )

        async with trio.open_nursery() as nursery:
            for _ in range(30):
                nursery.start_soon(ask)
        statuses = sorted(answer.status_code for answer in answers)
        assert statuses == [201, 201] + [429] * 28
        refused = next(answer for answer in answers if answer.status_code == 429)
        assert one_line(refused) == "challenge limit: 2 an hour; try again later"
        # A name of 10,000 characters, a list of 5,000 names, a body past the cap.
        for body, status in (
            ({"opponents": ["b" * 10_000]}, 400),
            ({"opponents": [f"n{i}" for i in range(5_000)]}, 400),
            ({"opponents": ["bob"] * 20_000}, 413),
        ):
            answer = await client.post("/api/challenges", json=body, headers=cup.token("bob"))
            assert answer.status_code == status, answer.text
            one_line(answer)
    await still_serving(cup)


async def test_a_flood_of_log_downloads_is_limited_per_participant_and_address(
    cup: Cup,
) -> None:
    """Before: any client could ask for logs in a loop, each 15 to 25 ms of the event loop
    that serves every page and records every result."""
    now = [1_000_000.0]
    cup.competition.clock = lambda: now[0]
    cup.finished_group()
    async with cup.client("198.51.100.1") as stranger, cup.client("198.51.100.2") as other:
        for _ in range(3):
            assert (await stranger.get("/api/matches/g1r0/log")).status_code == 200
        refused = await stranger.get("/api/matches/g1r0/log")
        assert refused.status_code == 429 and refused.headers["retry-after"] == "60"
        assert one_line(refused) == "too many log downloads: 3 a minute; try again in 60 s"
        page = await stranger.get("/matches/g1r0/log")  # the page's link shares the count
        assert page.status_code == 429 and "too many log downloads" in page.text
        # Another address, and a participant by token (from the same address), count apart.
        assert (await other.get("/api/matches/g1r0/log")).status_code == 200
        for _ in range(3):
            ok = await stranger.get("/api/matches/g1r0/log", headers=cup.token("alice"))
            assert ok.status_code == 200
        assert (
            await stranger.get("/api/matches/g1r0/log", headers=cup.token("alice"))
        ).status_code == 429
        # Refusals cost no download; a minute later the stranger may download again.
        assert (await stranger.get("/api/leaderboard")).status_code == 200
        now[0] += 61
        assert (await stranger.get("/api/matches/g1r0/log")).status_code == 200
    await still_serving(cup)


async def test_an_upload_after_the_freeze_or_by_a_disabled_account_is_refused_before_its_body(
    tmp_path: Path,
) -> None:
    """Before: a 1 MiB upload was read whole (and spooled) to be told that the freeze had
    passed or its sender was disabled; now the refusal comes from the headers."""
    path = tmp_path / "cup.toml"
    path.write_text(CUP + '[phases]\nfreeze = "2026-12-20T18:00Z"\n')
    config = load_config(path)
    competition = Competition(config, CompetitionStore.open(config.database))
    people = {name: admitted(competition.store, name) for name in ("alice", "bob")}
    organiser.disable(competition.store, organiser.API, "bob")
    pulled: list[int] = []

    async def body() -> AsyncIterator[bytes]:
        yield b'--b\r\nContent-Disposition: form-data; name="bot"; filename="main.py"\r\n\r\n'
        for _ in range(16):  # 1 MiB
            pulled.append(1)
            yield b"#" * 65536

    transport = httpx.ASGITransport(app=build_app(competition))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://cup") as client:
            for name, now, reason in (
                ("alice", 1_800_000_000.0, "submissions closed at 2026-12-20T18:00:00+00:00"),
                ("bob", 1_700_000_000.0, "the organiser has disabled this participant: no uploads"),
            ):
                competition.clock = functools.partial(float, now)
                pulled.clear()
                answer = await client.post(
                    "/api/versions",
                    content=body(),
                    headers={
                        "Authorization": f"Bearer {people[name][2]}",
                        "Content-Type": "multipart/form-data; boundary=b",
                    },
                )
                assert answer.status_code == 403, answer.text
                assert one_line(answer).startswith(reason)
                assert pulled == []  # not one chunk of the file was asked for
    finally:
        competition.store.close()


# ---------------------------------------------------------------------- crafted queries


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("limit=-1", "limit: must be from 1 to 200"),
        ("limit=0", "limit: must be from 1 to 200"),
        ("limit=" + "9" * 400, "limit: must be from 1 to 200"),
        ("limit=1e3", "limit: '1e3' is not a whole number"),
        ("cursor=-5", "cursor: must be from 1 to 9223372036854775807"),
        ("cursor=99999999999999999999", "cursor: must be from 1 to 9223372036854775807"),
        ("version=1;DROP TABLE matches", "version: '1;DROP TABLE matches' is not a whole number"),
        ("version=1%00", r"version: '1\x00' is not a whole number"),
        ("version=2", "version: 2 is not one of alice's versions"),
        ("opponent=bob'%20OR%201=1--", 'opponent: no participant named "bob\' OR 1=1--"'),
        ("opponent=" + "x" * 5000, "opponent: no participant named '" + "x" * 40 + "'"),
        ("since=99999-01-01", "since: '99999-01-01' is not a date (2026-11-28)"),
        ("since=2026-02-30", "since: '2026-02-30' is not a date"),
        ("faults=yes", "faults: use faults=only (or 1)"),
        ("order=rowid", "order: not a filter (use version, opponent, faults"),
        ("__proto__=1", "__proto__: not a filter"),
    ],
)
async def test_a_crafted_match_list_query_is_a_one_line_400(
    cup: Cup, query: str, reason: str
) -> None:
    cup.finished_group()
    async with cup.client() as client:
        answer = await client.get(f"/api/participants/alice/matches?{query}")
        assert answer.status_code == 400
        assert one_line(answer).startswith(reason)
        page = await client.get(f"/p/alice/matches?{query}")
        assert page.status_code == 400
        # Nothing ran as SQL: every match is still there, in order.
        listed = (await client.get("/api/participants/alice/matches")).json()
        assert [m["match_id"] for m in listed["matches"]] == ["g1r2", "g1r1", "g1r0"]


async def test_an_id_past_sqlites_integers_is_a_404_not_a_500(cup: Cup) -> None:
    """Before: /challenges/<30 digits> (a page anyone may ask for) raised OverflowError in
    sqlite3, a 500; so did the organiser's audit with such a ``before``."""
    huge = "9" * 30
    organiser_token = new_organiser_token(cup.store)
    async with cup.client() as client:
        for path in (f"/challenges/{huge}", f"/api/challenges/{huge}"):
            for headers in ({}, cup.token("alice")):
                answer = await client.get(path, headers=headers)
                assert answer.status_code == 404, (path, answer.status_code)
        for before in (huge, f"-{huge}"):
            audit = await client.get(
                f"/api/organiser/audit?before={before}",
                headers={"Authorization": f"Bearer {organiser_token}"},
            )
            assert audit.status_code == 200 and "entries" in audit.json()
    await still_serving(cup)


async def test_the_last_page_and_past_it_are_empty_not_errors(cup: Cup) -> None:
    cup.finished_group()
    async with cup.client() as client:
        first = (await client.get("/api/participants/alice/matches?limit=2")).json()
        assert first["cursor"] is not None and len(first["matches"]) == 2
        last = (await client.get(f"/api/participants/alice/matches?{first['next']}")).json()
        assert [m["match_id"] for m in last["matches"]] == ["g1r0"] and last["next"] is None
        for cursor in (1, 9223372036854775807):
            edge = await client.get(f"/api/participants/alice/matches?cursor={cursor}")
            assert edge.status_code == 200
        past = await client.get("/api/participants/alice/matches?cursor=1")
        assert past.json()["matches"] == []


# ---------------------------------------------------------------------- status and metrics


async def test_status_metrics_and_a_challenge_hold_no_token_seed_key_path_or_stderr(
    cup: Cup,
) -> None:
    cup.finished_group()
    cup.store.plan_group(77, (1, 2, 3), "test")  # a group in play: its cards are secret
    async with cup.client() as client:
        await client.post(
            "/api/challenges", json={"opponents": ["bob", "carol"]}, headers=cup.token("alice")
        )
        found = challenge(cup.store, 1)
        assert found is not None
        secrets_ = [
            *(token for _p, _v, token in cup.people.values()),
            cup.store.secret.hex(),
            found.deal_key,
            str(found.seed),
            SECRET_STDERR,
            str(cup.competition.config.data),
            str(cup.tmp),
        ]
        # Nor does the challenge itself, to its own requester, while it waits to be played.
        for path in ("/metrics", "/status", "/api/challenges/1", "/challenges/1", "/challenge"):
            for headers in ({}, cup.token("alice")):
                answer = await client.get(path, headers=headers)
                leaked = [s for s in secrets_ if s in answer.text]
                assert leaked == [], (path, leaked)


# ---------------------------------------------------------------------- compiled uploads


def _zip(members: dict[str, bytes], link: tuple[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        if link is not None:
            info = zipfile.ZipInfo(link[0])
            info.external_attr = 0o120777 << 16  # a symbolic link
            archive.writestr(info, link[1])
    return buffer.getvalue()


SOURCES = {
    "cpp": {"bot.cpp": b"int main() {}\n"},
    "rust": {"Cargo.toml": b'[package]\nname = "b"\nversion = "0.1.0"\n', "src/main.rs": b""},
    "go": {"go.mod": b"module m\n\ngo 1.20\n", "main.go": b"package main\nfunc main() {}\n"},
}


@pytest.mark.parametrize("runtime", sorted(SOURCES))
async def test_a_compiled_upload_with_a_link_or_a_path_out_is_refused_before_its_build(
    cup: Cup, runtime: str
) -> None:
    sources = SOURCES[runtime]
    attacks = {
        "a link to the database": _zip(sources, ("data.txt", str(cup.competition.config.database))),
        "a path out": _zip({**sources, "../../../../etc/cron.d/x": b"* * * * * root sh\n"}),
        "an absolute path": _zip({**sources, "/tmp/planted": b"x"}),
    }
    async with cup.client() as client:
        for what, archive in attacks.items():
            answer = await client.post(
                "/api/versions",
                headers=cup.token("alice"),
                data={"runtime": runtime},
                files={"bot": ("bot.zip", archive)},
            )
            assert answer.status_code == 400, (what, answer.text)
            one_line(answer)
    assert not Path("/tmp/planted").exists()
    await still_serving(cup)
