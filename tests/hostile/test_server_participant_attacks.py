"""A real ``newmarket serve`` attacked over 127.0.0.1 as a hostile participant would.

One server (a child process, ``tests/server/serving.py``) plays a ladder of
alice's uploaded bot (it tells its stderr a secret each match), bob's and two
house bots.  bob is the attacker, with his own good token; a stranger has
none.  Each test is one attack, and asserts what the attacker sees and that
nothing of alice's or the organiser's is in any answer.  What each attack did,
and what held: benchmarks/results/2026-11-28-contest-attacks.md.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from bots.registry import BUNDLED
from referee.bots import resolve_bot
from referee.match.packed_result import unpack
from referee.server.competition_db import CompetitionStore
from referee.server.competition_file import load_config
from tests.server.serving import (
    BOTS,
    Server,
    add_old_participant,
    competition_file,
    running,
    upload,
    uploaded,
    version_status,
    wait_until,
)
from tests.server.test_slow_clients import multipart_head, slow_body
from tests.small_disks import fill, tmpfs

SECRET = "my secret strategy"  # what alice's bot (tests/server/bots/plain.py) tells its stderr
BODY_TIMEOUT = 3  # seconds: the server's [server] body_timeout here


@dataclass
class Cup:
    server: Server
    tokens: dict[str, str]  # alice, bob, and the organiser's
    data: Path  # the server's data directory

    def client(self, name: str | None = None) -> httpx.Client:
        return self.server.client(self.tokens[name] if name else None)

    def challenges(self, name: str) -> list[object]:
        return list(self.server.get("/api/challenges", self.tokens[name])["challenges"])

    def secrets(self) -> list[str]:
        """What no page or API answer may hold: every token, the server's keys, the
        challenges' deal keys, and where the server keeps its files."""
        database = load_config(self.server.config).database
        with sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True) as raw:
            meta = [str(v) for (v,) in raw.execute("SELECT value FROM meta")]
            keys = [str(k) for (k,) in raw.execute("SELECT deal_key FROM challenges")]
        long_meta = [value for value in meta if len(value) >= 16]  # keys, not counters
        return [*self.tokens.values(), *long_meta, *keys, str(self.data), str(self.data.parent)]


@pytest.fixture(scope="module")
def cup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cup]:
    tmp = tmp_path_factory.mktemp("attack")
    config = competition_file(
        tmp,
        house=("random", "tracker"),
        extra="self_registration = true\n",
        challenges="per_hour = 20\nopponents_see = true",
    )
    limits = f"header_timeout = 3\nbody_timeout = {BODY_TIMEOUT}\nregistrations_per_hour = 50\n"
    config.write_text(config.read_text().replace("[server]\n", "[server]\n" + limits))
    store = CompetitionStore.open(load_config(config).database)
    try:
        _alice, alice = store.add_participant("alice")
        bob_row, bob = store.add_participant("bob")
        version = store.add_version(bob_row.id, "bundled", "random", "", 0)
        store.decide(version.id, "admitted", "ok", "", resolve_bot("random", "bob").to_json())
    finally:
        store.close()
    with running(config) as server:
        said = re.search(r"org-\S+", "".join(server.before_ready))  # its first start's
        tokens = {"alice": alice, "bob": bob}
        if said is not None:
            tokens["organiser"] = said.group(0)
        version_id = uploaded(server, alice, BOTS / "plain.py")
        wait_until("alice's bot admitted", lambda: version_status(server, version_id))
        assert version_status(server, version_id) == "admitted"

        def alice_played() -> bool:
            listed = server.get("/api/participants/alice/matches")
            return bool(listed["matches"])

        wait_until("a ladder match of alice's", alice_played)
        yield Cup(server, tokens, load_config(config).data)


def one_line(answer: httpx.Response) -> str:
    reason = answer.json()["error"]
    assert isinstance(reason, str) and "\n" not in reason and len(reason) < 200, reason
    return reason


# ---------------------------------------------------------------------- slow bodies


def test_a_challenge_sent_a_byte_a_second_is_cut_off_and_asks_for_nothing(cup: Cup) -> None:
    body = json.dumps({"opponents": ["alice", "house:tracker"]}).encode() + b" " * 200
    head = (
        "POST /api/challenges HTTP/1.1\r\nHost: cup\r\n"
        f"Authorization: Bearer {cup.tokens['bob']}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    before = len(cup.challenges("bob"))
    started = time.monotonic()
    got = slow_body(cup.server, head, body)
    assert got.startswith(b"HTTP/1.1 408"), got[:200]
    assert b"request body too slow" in got
    assert time.monotonic() - started < BODY_TIMEOUT + 10
    assert len(cup.challenges("bob")) == before


def test_an_upload_from_a_second_account_sent_a_byte_a_second_stores_nothing(cup: Cup) -> None:
    body = (
        b'--cut\r\nContent-Disposition: form-data; name="runtime"\r\n\r\npython3\r\n'
        b'--cut\r\nContent-Disposition: form-data; name="bot"; filename="main.py"\r\n\r\n'
        + b"#"
        * 200
    )

    def versions() -> list[int]:
        return [v["id"] for v in cup.server.get("/api/me", cup.tokens["bob"])["versions"]]

    before = versions()
    got = slow_body(cup.server, multipart_head("/api/versions", cup.tokens["bob"], 4000), body)
    assert got.startswith(b"HTTP/1.1 408"), got[:200]
    assert versions() == before


# ---------------------------------------------------------------------- names


@pytest.mark.parametrize(
    "name",
    [
        "Alice",
        "ALICE",
        "alice\u200b",  # a zero-width space
        "\u200balice",
        "al\u00adice",  # a soft hyphen
        "\u0430lice",  # a Cyrillic a
        "alice/..",
        "../alice",
        "./alice",
        "random",  # a house bot's name without the house's mark
        "tracker",
        "house:Random",
        "house: random",
        "organiser",
        "bob",  # oneself
    ],
)
def test_a_name_that_looks_like_someone_is_nobody_to_challenge(cup: Cup, name: str) -> None:
    before = len(cup.challenges("bob"))
    with cup.client("bob") as client:
        answer = client.post("/api/challenges", json={"opponents": [name, "house:tracker"]})
    assert answer.status_code == 400, answer.text
    assert one_line(answer) == f"{name!r} has no current version to challenge (see /challenge)"
    assert len(cup.challenges("bob")) == before


LOOK_ALIKES = [
    "Alice",
    "ALICE",
    "alice ",
    " alice",
    "alice\u200b",
    "al\u200dice",  # a zero-width joiner
    "\u0430lice",  # a Cyrillic a
    "\uff41lice",  # a fullwidth a
    "random",
    "Tracker",
    "house:random",
    "organiser",
    "Organizer",
    "admin",
    "../alice",
    "alice/..",
    "a/b",
    "..",
]


def test_registering_a_look_alike_a_house_name_or_a_path_is_refused_in_one_line(
    cup: Cup,
) -> None:
    """Self-registration on the page, by a browser from the same address as a stranger:
    every name that would pass for alice, a house bot, the organiser or a path is refused,
    and no participant is made."""
    before = cup.server.get("/api/participants")
    with httpx.Client(base_url=cup.server.url, timeout=60) as browser:
        form = browser.get("/register")
        found = re.search(r'name="csrf" value="([^"]+)"', form.text)
        assert form.status_code == 200 and found is not None
        for name in LOOK_ALIKES:
            made = browser.post("/register", data={"name": name, "csrf": found.group(1)})
            assert made.status_code == 400, (name, made.text[:300])
            assert "new-token" not in made.text, name
    assert cup.server.get("/api/participants") == before


@pytest.mark.parametrize(
    "path",
    ["/p/Alice", "/p/alice%E2%80%8B", "/p/%D0%B0lice", "/p/..%2Falice", "/p/alice%20"],
)
def test_a_page_asked_for_by_a_look_alike_name_is_a_404_not_alices(cup: Cup, path: str) -> None:
    with cup.client("bob") as client:
        for suffix in ("", "/matches", "/feed.atom"):
            answer = client.get(path + suffix)
            assert answer.status_code == 404, (path + suffix, answer.text[:200])
            assert "alice v1" not in answer.text


# ---------------------------------------------------------------------- what answers hold


def test_no_page_or_answer_holds_a_token_key_path_or_another_owners_stderr(cup: Cup) -> None:
    """Every page and API answer, as a stranger and as bob (with a challenge of bob's
    against alice played): no token, key or path, none of alice's stderr."""
    with cup.client("bob") as client:
        made = client.post("/api/challenges", json={"opponents": ["alice", "house:random"]})
    assert made.status_code == 201, made.text
    number = made.json()["id"]

    def played() -> bool:
        shown = cup.server.get(f"/api/challenges/{number}", cup.tokens["bob"])
        return bool(shown["status"] == "finished")

    wait_until("bob's challenge", played)

    def public_match() -> str | None:
        """A match of alice's whose group has finished (its log is out)."""
        with cup.client("alice") as client:
            for row in cup.server.get("/api/participants/alice/matches")["matches"]:
                if client.get(f"/api/matches/{row['match_id']}/log").status_code == 200:
                    return str(row["match_id"])
        return None

    match_id = wait_until("a finished group of alice's", public_match)
    versions = [v["id"] for v in cup.server.get("/api/participants/alice")["versions"]]
    assert versions  # alice's, with her check's transcript (hers alone)
    challenge_match = cup.server.get(f"/api/challenges/{number}", cup.tokens["bob"])["matches"][0]
    paths = [
        "/",
        "/participants",
        "/p/alice",
        "/p/alice/matches",
        "/p/alice/feed.atom",
        "/p/bob/feed.atom",
        f"/matches/{match_id}",
        f"/matches/{match_id}/log",
        f"/matches/{challenge_match['match']}/log",
        f"/challenges/{number}",
        "/challenge",
        "/finals",
        "/status",
        "/metrics",
        "/leaderboard/ratings.svg",
        "/upload",
        "/api",
        "/api/leaderboard",
        "/api/leaderboard/head-to-head",
        "/api/participants",
        "/api/participants/alice",
        "/api/participants/alice/matches",
        "/api/me",
        f"/api/matches/{match_id}",
        f"/api/matches/{match_id}/log",
        f"/api/matches/{challenge_match['match']}/log",
        f"/api/challenges/{number}",
        "/api/challenges",
        "/api/phase",
        "/api/finals",
        "/api/openapi.json",
        *(f"/versions/{v}" for v in versions),
        *(f"/api/versions/{v}" for v in versions),
        f"/matches/{challenge_match['match']}",
        f"/api/matches/{challenge_match['match']}",
        "/no/such/page",
        "/matches/nothing",
        "/api/matches/nothing",
        "/organiser",
    ]
    secrets = cup.secrets()
    seen = 0
    for who in (None, "bob"):
        with cup.client(who) as client:
            for path in paths:
                answer = client.get(path)
                assert answer.status_code < 500, (who, path, answer.text[:300])
                seen += answer.status_code == 200
                for secret in secrets:
                    assert secret not in answer.text, (who, path, "holds a secret")
                assert SECRET not in answer.text, (who, path, "holds alice's stderr")
    assert seen > len(paths)  # most of them answered (the secrets were looked for)
    # The control: alice's own download of her match has her stderr, so the look above can
    # see it where it is.
    with cup.client("alice") as client:
        own = client.get(f"/api/matches/{match_id}/log")
    assert own.status_code == 200 and SECRET in own.text


# ---------------------------------------------------------------------- tokens


def test_a_feed_reader_with_a_wrong_token_is_told_not_given_the_public_feed(cup: Cup) -> None:
    """The feed is the one page that reads a bearer token (its owner's challenges are in it
    then).  A reader left with a rotated token was served the public feed, silently short
    of them, as the API's answers were before ``bad_tokens``."""
    path = "/p/bob/feed.atom"
    with cup.client() as client:
        public = client.get(path)
        wrong = client.get(path, headers={"Authorization": "Bearer rotated-long-ago"})
    assert public.status_code == 200
    assert wrong.status_code == 401, wrong.text[:200]
    assert "unknown token" in wrong.text and "<feed" not in wrong.text
    with cup.client("bob") as client:
        assert client.get(path).status_code == 200  # his own token is his


# ---------------------------------------------------------------------- a full disk


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """The server's whole data directory (database, uploads, logs) on a 32 MiB tmpfs."""
    with tmpfs(tmp_path / "cup-data", 32) as disk:
        yield disk


def test_a_full_disk_blames_no_participant(small_disk: Path, tmp_path: Path) -> None:
    """The server's disk filled to its last byte while it plays: alice's upload, bob's
    challenge and the ladder wait, and no version is rejected, suspended or faulted for it;
    once there is room, the challenge is played."""
    config = competition_file(
        tmp_path, house=("random", "tracker"), challenges="per_hour = 5", storage="min_free_mb = 4"
    )
    store = CompetitionStore.open(load_config(config).database)
    try:
        tokens = {}
        for name in ("alice", "bob"):
            row, tokens[name] = store.add_participant(name)
            version = store.add_version(row.id, "bundled", "random", "", 0)
            store.decide(version.id, "admitted", "ok", "", resolve_bot("random", name).to_json())
    finally:
        store.close()
    filler = small_disk / "filler"
    with running(config) as server:
        wait_until("a ladder match", lambda: server.get("/api/leaderboard")["matches"] > 0)
        fill(filler)
        sent = upload(server, tokens["alice"], BOTS / "plain.py", "python3")
        assert sent.status_code in (503, 507), sent.text
        assert "\n" not in sent.json()["error"]
        with server.client(tokens["bob"]) as client:
            asked = client.post("/api/challenges", json={"opponents": ["alice", "house:random"]})
        assert asked.status_code in (201, 503, 507), asked.text
        time.sleep(10)  # the tables meet the full disk meanwhile
        for path in ("/", "/api/leaderboard", "/status"):
            with server.client() as client:
                assert client.get(path).status_code < 500, path
        filler.unlink()
        if asked.status_code == 201:
            number = asked.json()["id"]

            def played() -> bool:
                shown = server.get(f"/api/challenges/{number}", tokens["bob"])
                assert shown["status"] != "failed", shown
                return bool(shown["status"] == "finished")

            wait_until("bob's challenge, once there is room", played)
        matches = server.get("/api/leaderboard")["matches"]
        wait_until("play to resume", lambda: server.get("/api/leaderboard")["matches"] > matches)
    database = load_config(config).database
    with sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True) as raw:
        statuses = {str(s) for (s,) in raw.execute("SELECT status FROM versions")}
        suspended = raw.execute("SELECT COUNT(*) FROM suspensions").fetchone()[0]
        faults = raw.execute("SELECT COUNT(*) FROM faults").fetchone()[0]
    assert statuses == {"admitted"}  # alice's refused upload left no rejected version
    assert (suspended, faults) == (0, 0)


def test_a_forged_client_address_does_not_buy_a_stranger_more_downloads(cup: Cup) -> None:
    """The per-address limit of a stranger's downloads ([server] downloads_per_minute, 30
    here) is the connection's address: X-Forwarded-For and X-Real-IP change nothing."""

    def public_match() -> str | None:
        for row in cup.server.get("/api/participants/bob/matches")["matches"]:
            with cup.client() as client:
                if client.get(f"/api/matches/{row['match_id']}").json().get("cards_public"):
                    return str(row["match_id"])
        return None

    match_id = wait_until("a finished group of bob's", public_match)
    statuses = []
    with cup.client() as client:
        for number in range(31):
            forged = f"198.51.100.{number}"
            answer = client.get(
                f"/api/matches/{match_id}/log",
                headers={"X-Forwarded-For": forged, "X-Real-IP": forged, "Forwarded": forged},
            )
            statuses.append(answer.status_code)
            if answer.status_code == 429:
                assert int(answer.headers["retry-after"]) > 0
                assert one_line(answer).startswith("too many log downloads: 30 a minute")
    assert set(statuses) <= {200, 429} and 429 in statuses, statuses


# ---------------------------------------------------------------------- second review's attacks


def finished_match(cup: Cup, owner: str) -> str:
    """A ladder match of ``owner``'s whose group has finished (its log is given)."""

    def found() -> str | None:
        with cup.client(owner) as client:
            for row in cup.server.get(f"/api/participants/{owner}/matches")["matches"]:
                if client.get(f"/api/matches/{row['match_id']}/log").status_code == 200:
                    return str(row["match_id"])
        return None

    return str(wait_until(f"a finished group of {owner}'s", found))


def patiently(client: httpx.Client, path: str) -> httpx.Response:
    """``GET path``, once more after the wait a 429 names: earlier looks of the same
    participant in this module may have spent its ``downloads_per_minute``."""
    answer = client.get(path)
    if answer.status_code == 429:
        time.sleep(int(answer.headers["retry-after"]) + 1)
        # On a new connection: the server closed the kept-alive one while we waited (its
        # header_timeout is shorter), and a request sent down it meets a reset.
        with httpx.Client(base_url=client.base_url, headers=client.headers, timeout=60) as new:
            answer = new.get(path)
    return answer


def played_challenge(cup: Cup, owner: str, opponents: list[str]) -> int:
    with cup.client(owner) as client:
        made = client.post("/api/challenges", json={"opponents": opponents})
    assert made.status_code == 201, made.text
    number = int(made.json()["id"])

    def played() -> bool:
        shown = cup.server.get(f"/api/challenges/{number}", cup.tokens[owner])
        return bool(shown["status"] == "finished")

    wait_until(f"{owner}'s challenge {number}", played)
    return number


def test_an_unknown_token_is_refused_on_every_kind_of_page(cup: Cup) -> None:
    """A wrong or rotated bearer token is a 401 in one line on the pages, the API, the
    feeds, /status, /metrics and the downloads: never an anonymous answer (the public
    data, silently short of the owner's), and never a secret in the refusal."""
    match_id = finished_match(cup, "alice")
    versions = [v["id"] for v in cup.server.get("/api/participants/alice")["versions"]]
    reads = [
        "/",
        "/p/alice",
        "/p/alice/matches",
        "/p/alice/feed.atom",
        "/p/bob/feed.atom",
        f"/matches/{match_id}",
        f"/matches/{match_id}/log",
        f"/versions/{versions[0]}",
        "/challenge",
        "/status",
        "/metrics",
        "/api/leaderboard",
        "/api/me",
        "/api/challenges",
        "/api/challenges/1",
        f"/api/matches/{match_id}",
        f"/api/matches/{match_id}/log",
        f"/api/versions/{versions[0]}",
        "/api/phase",
    ]
    secrets = cup.secrets()
    with cup.client() as client:
        bad = {"Authorization": "Bearer rotated-long-ago"}
        answers = [(path, client.get(path, headers=bad)) for path in reads]
        answers.append(
            (
                "POST /api/challenges",
                client.post(
                    "/api/challenges", json={"opponents": ["alice", "house:random"]}, headers=bad
                ),
            )
        )
        answers.append(
            (
                "POST /api/versions",
                client.post(
                    "/api/versions",
                    data={"runtime": "python3"},
                    files={"bot": ("main.py", b"print(1)\n")},
                    headers=bad,
                ),
            )
        )
    for path, answer in answers:
        assert answer.status_code == 401, (path, answer.status_code, answer.text[:200])
        assert "unknown token" in answer.text, path
        assert len(answer.text) < 300 and SECRET not in answer.text, path
        for secret in secrets:
            assert secret not in answer.text, (path, "holds a secret")


def test_a_second_account_cannot_read_anothers_challenge_its_logs_or_its_feed_entries(
    cup: Cup,
) -> None:
    """alice's challenge of two house bots: bob, who is not in it, gets the 404 of a
    challenge that does not exist on its page, its API answer and its matches' logs, does
    not find it in his list, and alice's feed read with his token says nothing of it."""
    number = played_challenge(cup, "alice", ["house:random", "house:tracker"])
    shown = cup.server.get(f"/api/challenges/{number}", cup.tokens["alice"])
    logs = [str(m["match"]) for m in shown["matches"]]
    assert logs
    with cup.client("alice") as client:  # the control: hers are there for her
        assert patiently(client, f"/api/matches/{logs[0]}/log").status_code == 200
        own_feed = client.get("/p/alice/feed.atom").text
    assert f"/challenges/{number}" in own_feed
    with cup.client("bob") as client:
        for path in (
            f"/api/challenges/{number}",
            f"/challenges/{number}",
            *(f"/api/matches/{mid}/log" for mid in logs),
            *(f"/matches/{mid}/log" for mid in logs),
            *(f"/api/matches/{mid}" for mid in logs),
            *(f"/matches/{mid}" for mid in logs),
        ):
            answer = patiently(client, path)
            assert answer.status_code == 404, (path, answer.text[:200])
            assert SECRET not in answer.text and "house:tracker" not in answer.text, path
        listed = client.get("/api/challenges").json()["challenges"]
        feed = client.get("/p/alice/feed.atom").text
    assert number not in [c["id"] for c in listed]
    assert f"/challenges/{number}" not in feed
    with cup.client() as client:
        assert f"/challenges/{number}" not in client.get("/p/alice/feed.atom").text


def test_a_register_form_sent_a_byte_a_second_is_cut_off_and_makes_nobody(cup: Cup) -> None:
    before = cup.server.get("/api/participants")
    body = b"name=mallory&csrf=" + b"x" * 200
    head = (
        "POST /register HTTP/1.1\r\nHost: cup\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    started = time.monotonic()
    got = slow_body(cup.server, head, body)
    assert got.startswith(b"HTTP/1.1 408"), got[:200]
    assert b"request body too slow" in got
    assert time.monotonic() - started < BODY_TIMEOUT + 10
    assert cup.server.get("/api/participants") == before


BUNDLED_NAMES = ["random", "lowest", "longest", "boodle", "tracker", "js", "c", "bash", "search"]
CYRILLIC = str.maketrans("aceopxy", "\u0430\u0441\u0435\u043e\u0440\u0445\u0443")


def test_every_bundled_bots_name_in_any_case_or_script_is_refused_at_registration(
    cup: Cup,
) -> None:
    """A participant named as a bundled bot (any of which may be a house bot) would pass for
    it: each name, in upper case, capitalised and with its Cyrillic look-alike letters, is
    refused in one line, and nobody is made."""
    assert sorted(BUNDLED) == sorted(BUNDLED_NAMES)  # a new bundled bot: add it above
    names = {
        form
        for name in BUNDLED_NAMES
        for form in (name, name.upper(), name.capitalize(), name.translate(CYRILLIC))
    }
    before = cup.server.get("/api/participants")
    with httpx.Client(base_url=cup.server.url, timeout=60) as browser:
        form = browser.get("/register")
        found = re.search(r'name="csrf" value="([^"]+)"', form.text)
        assert form.status_code == 200 and found is not None
        for name in sorted(names):
            made = browser.post("/register", data={"name": name, "csrf": found.group(1)})
            assert made.status_code == 400, (name, made.text[:300])
            assert "new-token" not in made.text, name
    assert cup.server.get("/api/participants") == before


@pytest.mark.parametrize("name", ["lowest", "Boodle", "JS", "c", "\u0441", "house:Search"])
def test_a_bundled_bots_name_is_nobody_to_challenge(cup: Cup, name: str) -> None:
    before = len(cup.challenges("bob"))
    with cup.client("bob") as client:
        answer = client.post("/api/challenges", json={"opponents": [name, "house:tracker"]})
    assert answer.status_code == 400, answer.text
    assert one_line(answer) == f"{name!r} has no current version to challenge (see /challenge)"
    assert len(cup.challenges("bob")) == before


def test_no_page_or_answer_holds_the_seed_of_a_group_still_in_play(cup: Cup) -> None:
    """A group's cards come from one seed at each of its rotations: while one is left to
    play, the seed of a finished one (and the group's) must be in no page or answer, nor in
    a download of that finished match."""
    database = load_config(cup.server.config).database

    def in_play() -> tuple[list[str], list[str]] | None:
        """The match ids of the groups in play, and their seeds (the groups' and each
        finished match's cards')."""
        with sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True) as raw:
            rows = raw.execute(
                "SELECT g.id, g.seed, m.match_id, m.result FROM groups g "
                "JOIN matches m ON m.group_id = g.id WHERE g.abandoned = 0 AND "
                "(SELECT COUNT(*) FROM matches x WHERE x.group_id = g.id) "
                "< json_array_length(g.versions)"
            ).fetchall()
        if not rows:
            return None
        seeds = {str(seed) for _g, seed, _m, _r in rows}
        seeds |= {str(unpack(result).seed) for *_, result in rows}
        return [str(mid) for _g, _s, mid, _r in rows], sorted(seeds)

    def looked() -> bool:
        found = in_play()
        if found is None:
            return False
        matches, seeds = found
        paths = [
            "/",
            "/p/alice",
            "/p/bob",
            "/p/alice/matches",
            "/p/bob/matches",
            "/p/alice/feed.atom",
            "/api/leaderboard",
            "/api/participants/alice/matches",
            "/api/participants/bob/matches",
            "/api/me",
            "/status",
            *(f"/matches/{mid}" for mid in matches),
            *(f"/matches/{mid}/log" for mid in matches),
            *(f"/api/matches/{mid}" for mid in matches),
            *(f"/api/matches/{mid}/log" for mid in matches),
        ]
        read = []
        for who in (None, "bob", "alice"):
            with cup.client(who) as client:
                for path in paths:
                    answer = client.get(path)
                    assert answer.status_code < 500, (who, path, answer.text[:200])
                    read.append((who, path, answer.text))
        # Looked at only if the groups were still in play when the last page was read (one
        # that finished meanwhile publishes its seeds, rightly): else another look.
        still = in_play()
        if still is None or not set(matches) <= set(still[0]):
            return False
        for who, path, text in read:
            for seed in seeds:
                assert seed not in text, (who, path, "holds a seed in play")
        return True

    wait_until("a look while a group is in play", looked)


# ---------------------------------------------------------------------- packed results


def test_a_matchs_api_answer_and_page_show_the_result_its_log_ends_with(cup: Cup) -> None:
    """Results are stored packed (zstd): what /api/matches/ID and the page show of a real
    match is the result line its log ends with, seat for seat."""
    match_id = finished_match(cup, "alice")
    with cup.client() as client:
        shown = patiently(client, f"/api/matches/{match_id}").json()
    with cup.client("alice") as client:
        log = patiently(client, f"/api/matches/{match_id}/log").text
        page = patiently(client, f"/matches/{match_id}").text
    last = json.loads(log.splitlines()[-1])
    assert last["type"] == "result"
    assert (shown["hands"], shown["reason"], shown["seed"]) == (
        last["hands"],
        last["reason"],
        last["seed"],
    )
    fields = ("seat", "place", "chips", "net_chips", "status")
    expected = [tuple(s[f] for f in fields) for s in last["seats"]]
    got = [tuple(s[f] for f in fields) for s in shown["seats"]]
    assert sorted(got) == sorted(expected)
    for seat in shown["seats"]:
        assert seat["label"] in page


def test_a_damaged_packed_result_is_a_one_line_500_not_a_traceback(cup: Cup) -> None:
    """One match's stored result overwritten with bytes that do not unpack: its page and its
    API answer are the server's one-line 500 (no traceback, no path), its log is still
    given whole, and every other page still answers."""
    match_id = finished_match(cup, "bob")
    database = load_config(cup.server.config).database
    with sqlite3.connect(database, timeout=60) as raw:
        (kept,) = raw.execute(
            "SELECT result FROM matches WHERE match_id = ?", (match_id,)
        ).fetchone()
        raw.execute("UPDATE matches SET result = ? WHERE match_id = ?", (b"\x01not zstd", match_id))
    try:
        with cup.client("bob") as client:
            api = patiently(client, f"/api/matches/{match_id}")
            page = patiently(client, f"/matches/{match_id}")
            log = patiently(client, f"/api/matches/{match_id}/log")
            others = [client.get(p) for p in ("/", "/api/leaderboard", "/p/bob", "/status")]
    finally:
        with sqlite3.connect(database, timeout=60) as raw:
            raw.execute("UPDATE matches SET result = ? WHERE match_id = ?", (kept, match_id))
    assert api.status_code == 500, api.text[:300]
    assert one_line(api) == "the server could not read its database; the organiser is told"
    assert page.status_code == 500 and "Traceback" not in page.text
    # The log does not need the result: it stays downloadable, the evidence to mend it by.
    assert log.status_code == 200, log.text[:300]
    assert json.loads(log.text.splitlines()[-1])["type"] == "result"
    for answer in (api, page, log):
        assert str(cup.data) not in answer.text and "Traceback" not in answer.text
    assert [a.status_code for a in others] == [200] * 4


@pytest.mark.parametrize(
    "path",
    [
        "/api/challenges/99999999999999999999999",
        "/challenges/99999999999999999999999",
        "/api/challenges/0",
        "/versions/99999999999999999999999",
        "/api/versions/99999999999999999999999",
        "/api/matches/c99999999999999999999999r0/log",
        "/api/matches/c1r99999999999999999999999",
        "/matches/g99999999999999999999999r0",
        "/api/matches/%00/log",
        "/api/participants/alice/matches?version=99999999999999999999999",
        "/api/participants/alice/matches?cursor=99999999999999999999999",
        "/api/participants/alice/matches?since=99999999999999999999999",
        "/p/alice/matches?opponent=99999999999999999999999",
        "/p/alice/feed.atom?limit=99999999999999999999999",
    ],
)
def test_an_id_past_sqlites_integers_is_a_4xx_in_one_line(cup: Cup, path: str) -> None:
    """Ids sqlite3 cannot even be asked for (OverflowError) or that name nothing: a 4xx with
    no traceback, as bob and as a stranger."""
    for who in (None, "bob"):
        with cup.client(who) as client:
            answer = client.get(path)
        assert answer.status_code < 500, (who, path, answer.text[:300])
        assert "Traceback" not in answer.text


@pytest.mark.parametrize(
    "path",
    [
        "/organiser",
        "/organiser/",
        "/api/organiser/operations",
        "/api/organiser/operations?limit=10000",
        "/api/organiser/operations/",
        "/api/organiser/audit",
        "/api/organiser/participants",
        "/api/organiser/contest",
        "//api/organiser/operations",
        "/api/./organiser/operations",
        "/api/organiser/%6Fperations",
    ],
)
def test_the_operations_log_and_the_organisers_pages_are_nobody_elses(cup: Cup, path: str) -> None:
    """The operations log holds the server's paths and every participant's doings: bob, a
    stranger and a wrong token get the 404 of a page that does not exist, and none of it."""
    secrets = [*cup.secrets(), "operations-log", '"kind"']
    for headers in (
        {},
        {"Authorization": f"Bearer {cup.tokens['bob']}"},
        {"Authorization": "Bearer x"},
    ):
        with cup.client() as client:
            # A trailing slash is redirected to the address without it: followed.
            answer = client.get(path, headers=headers, follow_redirects=True)
        assert answer.status_code == 404, (path, headers, answer.status_code, answer.text[:200])
        for secret in secrets:
            assert secret not in answer.text, (path, "holds", secret)
    if "organiser" in cup.tokens:  # the control: the organiser reads it
        with cup.client("organiser") as client:
            assert client.get("/api/organiser/operations").status_code == 200


HOUSE_STYLES = [
    "house tracker",
    "House Random",
    "house-tracker",
    "house_random",
    "house.tracker",
    "HOUSE-RANDOM",
    "h\u043euse-tracker",  # a Cyrillic o
    "house-",
]


def test_a_name_written_as_a_house_bots_with_another_separator_is_refused(cup: Cup) -> None:
    """``house:`` cannot be registered (``:`` is not a name's), but ``house tracker`` or
    ``house-tracker`` beside ``house:tracker v1`` on the leaderboard passes for the
    organiser's bot as well: each is refused in one line, and nobody is made."""
    before = cup.server.get("/api/participants")
    with httpx.Client(base_url=cup.server.url, timeout=60) as browser:
        form = browser.get("/register")
        found = re.search(r'name="csrf" value="([^"]+)"', form.text)
        assert form.status_code == 200 and found is not None
        for name in HOUSE_STYLES:
            made = browser.post("/register", data={"name": name, "csrf": found.group(1)})
            assert made.status_code == 400, (name, made.text[:300])
            assert "reserved" in made.text and "new-token" not in made.text, name
    assert cup.server.get("/api/participants") == before


def test_a_rotated_token_is_refused_on_the_pages_feeds_and_downloads(cup: Cup) -> None:
    """carol's token rotated by the organiser: the old one is a 401 on her feed, a match
    page and log, /status and the API, as an unknown one is; her new one is hers."""
    if "organiser" not in cup.tokens:
        pytest.skip("the server said no organiser token at its first start")
    old = add_old_participant(cup.server.config, "carol")
    with cup.client("organiser") as client:
        rotated = client.post("/api/organiser/rotate-token", json={"name": "carol"})
    assert rotated.status_code == 200, rotated.text
    new = rotated.json()["token"]
    match_id = finished_match(cup, "alice")
    with cup.server.client(old) as client:
        for path in (
            "/p/carol/feed.atom",
            f"/matches/{match_id}",
            f"/api/matches/{match_id}/log",
            "/status",
            "/api/me",
        ):
            answer = client.get(path)
            assert answer.status_code == 401, (path, answer.text[:200])
            assert "unknown token" in answer.text and old not in answer.text, path
    assert cup.server.get("/api/me", new)["name"] == "carol"


def test_a_damaged_log_leaves_the_match_page_showing_its_result(cup: Cup) -> None:
    """A match's kept log overwritten with a line no referee wrote (the platform's fault):
    its page and its API answer still show the result from the database, with no traceback
    or path, and the download gives what is kept (unverified: ``newmarket replay`` is the
    downloader's check)."""
    match_id = finished_match(cup, "bob")
    database = load_config(cup.server.config).database
    with sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True) as raw:
        (log_path,) = raw.execute(
            "SELECT log_path FROM matches WHERE match_id = ?", (match_id,)
        ).fetchone()
    log = Path(log_path)
    kept = log.read_bytes()
    log.write_bytes(b"not a log of any referee\n")
    try:
        with cup.client("bob") as client:
            api = patiently(client, f"/api/matches/{match_id}")
            page = patiently(client, f"/matches/{match_id}")
            download = patiently(client, f"/api/matches/{match_id}/log")
    finally:
        log.write_bytes(kept)
    assert api.status_code == 200, api.text[:300]
    assert [seat["label"] for seat in api.json()["seats"]]
    assert page.status_code == 200, page.text[:300]
    assert download.status_code == 200 and download.text == "not a log of any referee\n"
    for answer in (api, page):
        assert str(cup.data) not in answer.text and "Traceback" not in answer.text
        for seat in api.json()["seats"]:
            assert seat["label"] in page.text


def test_short_connections_one_after_another_are_never_refused_for_their_number(
    tmp_path: Path,
) -> None:
    """Each request on a connection of its own, closed before the next (a script, a
    crawler, many people behind one address): hypercorn kept each finished connection's
    task until its keep-alive timer ran out, and the address's count with it, so past
    ``connections_per_address`` in that time the address was refused with 503s.  A server
    of its own, at the default timeouts and limits."""
    config = competition_file(tmp_path, house=("random",))
    per_address = load_config(config).clients.connections_per_address
    codes = []
    with running(config) as server:
        for _ in range(2 * per_address):
            with server.client() as client:
                codes.append(client.get("/api/leaderboard").status_code)
    assert set(codes) == {200}, {code: codes.count(code) for code in set(codes)}
