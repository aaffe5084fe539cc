"""The web pages in process (httpx's ASGI transport): self-registration, sessions, owner views."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import httpx
from starlette.types import ASGIApp

from referee.match.result import FaultRecord
from referee.server.app import build_app
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.competition_file import load_config
from referee.server.ratelimit import SlidingWindow
from tests.clirun import newmarket
from tests.server.inprocess import admitted_group, finished, open_competition
from tests.server.serving import REPO


def csrf(page: httpx.Response) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found is not None
    return found.group(1)


def open_cup(tmp_path: Path, server: str = "") -> tuple[CompetitionStore, ASGIApp]:
    """A competition that allows self-registration, its store and its app (no server)."""
    path = tmp_path / "cup.toml"
    path.write_text(
        '[competition]\nname = "Open cup"\nself_registration = true\n'
        f"[server]\nsecure_cookies = false\n{server}"
    )
    config = load_config(path)
    store = CompetitionStore.open(config.database)
    return store, build_app(Competition(config, store))


async def test_self_registration_shows_the_token_once_and_signs_in(tmp_path: Path) -> None:
    store, app = open_cup(tmp_path)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://cup") as browser:
        form = await browser.get("/register")
        assert form.status_code == 200
        made = await browser.post("/register", data={"name": "zoe", "csrf": csrf(form)})
        token = re.search(r'<pre id="new-token">([^<]+)</pre>', made.text)
        assert token is not None
        participant = store.participant_by_token(token.group(1))
        assert participant is not None and participant.name == "zoe"
        mine = await browser.get("/p/zoe")
        assert 'href="/upload"' in mine.text and "sign out" in mine.text
        taken = await browser.post("/register", data={"name": "zoe", "csrf": csrf(form)})
        assert taken.status_code == 400 and "is taken" in taken.text
        out = await browser.post("/signout", data={"csrf": csrf(mine)})
        assert out.status_code == 303 and out.headers["location"] == "/?notice=signed-out"
        assert "sign out" not in (await browser.get("/p/zoe")).text
        upload = await browser.get("/upload")
        assert upload.status_code == 303 and upload.headers["location"] == "/signin"
    store.close()


async def test_self_registration_is_rate_limited_per_client_address(tmp_path: Path) -> None:
    store, app = open_cup(tmp_path, "registrations_per_hour = 2\n")

    def browser_at(address: str) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=app, client=(address, 40000))
        return httpx.AsyncClient(transport=transport, base_url="http://cup")

    async with browser_at("192.0.2.7") as browser:
        form = await browser.get("/register")
        for name in ("ann", "bea"):
            made = await browser.post("/register", data={"name": name, "csrf": csrf(form)})
            assert made.status_code == 200, made.text
        refused = await browser.post("/register", data={"name": "cat", "csrf": csrf(form)})
        assert refused.status_code == 429
        reason = re.search(r'<p id="error">([^<]+)</p>', refused.text)
        assert reason is not None, refused.text
        assert reason.group(1) == (
            "too many registrations from 192.0.2.7 (2 an hour); try again in 60 min"
        )
        assert store.participant_by_name("cat") is None
    async with browser_at("192.0.2.8") as elsewhere:  # another address has its own count
        form = await elsewhere.get("/register")
        made = await elsewhere.post("/register", data={"name": "cat", "csrf": csrf(form)})
        assert made.status_code == 200
    store.close()


def test_the_registration_window_slides() -> None:
    now = [0.0]
    window = SlidingWindow(2, 3600.0, clock=lambda: now[0])
    window.record("a")
    now[0] = 600.0
    window.record("a")
    assert window.wait("a") == 3000.0 and window.wait("b") == 0.0
    now[0] = 3600.0  # the first has left the window
    assert window.wait("a") == 0.0
    window.record("a")
    assert window.wait("a") == 600.0


async def test_a_cookie_copied_before_sign_out_is_dead_after_it(tmp_path: Path) -> None:
    store, app = open_cup(tmp_path)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://cup") as browser:
        form = await browser.get("/register")
        await browser.post("/register", data={"name": "zoe", "csrf": csrf(form)})
        copied = browser.cookies["nm_session"]  # what a thief, or a shared machine, kept
        mine = await browser.get("/p/zoe")
        assert "sign out" in mine.text
        await browser.post("/signout", data={"csrf": csrf(mine)})
    async with httpx.AsyncClient(transport=transport, base_url="http://cup") as thief:
        thief.cookies.set("nm_session", copied)
        page = await thief.get("/p/zoe")
        assert "sign out" not in page.text and 'href="/upload"' not in page.text
        refused = await thief.post("/upload", data={"runtime": "python3"})
        assert refused.status_code == 403 and "sign in to upload" in refused.text
    store.close()


async def test_the_organiser_signs_a_participant_out_of_every_browser(tmp_path: Path) -> None:
    store, app = open_cup(tmp_path)
    transport = httpx.ASGITransport(app=app)
    _zoe, token = store.add_participant("zoe")
    browsers = [httpx.AsyncClient(transport=transport, base_url="http://cup") for _ in range(2)]
    for browser in browsers:
        form = await browser.get("/signin")
        signed = await browser.post("/signin", data={"token": token, "csrf": csrf(form)})
        assert signed.status_code == 303
        assert "sign out" in (await browser.get("/p/zoe")).text
    code, _out, err = newmarket("serve", "revoke-sessions", "zoe", str(tmp_path / "cup.toml"))
    assert code == 0 and "'zoe': 2 session(s) ended" in err
    for browser in browsers:
        assert "sign out" not in (await browser.get("/p/zoe")).text
        await browser.aclose()
    # The token itself still signs in: the organiser ended sessions, not the account.
    async with httpx.AsyncClient(transport=transport, base_url="http://cup") as again:
        form = await again.get("/signin")
        await again.post("/signin", data={"token": token, "csrf": csrf(form)})
        assert "sign out" in (await again.get("/p/zoe")).text
    unknown = newmarket("serve", "revoke-sessions", "nobody", str(tmp_path / "cup.toml"))
    assert unknown[0] == 2 and unknown[2].startswith("error: no participant named 'nobody'")
    store.close()


async def test_no_page_prints_text_from_its_address(tmp_path: Path) -> None:
    store, app = open_cup(tmp_path)
    transport = httpx.ASGITransport(app=app)
    hostile = "<script>alert(1)</script> The organiser says: send your token to evil.example"
    async with httpx.AsyncClient(transport=transport, base_url="http://cup") as browser:
        for path in ("/", "/participants", "/signin", "/register", "/api", "/nowhere"):
            for key in ("message", "notice", "error", "reason"):
                page = await browser.get(path, params={key: hostile})
                assert "alert(1)" not in page.text and "evil.example" not in page.text, path
                assert 'id="notice"' not in page.text
        shown = await browser.get("/", params={"notice": "signed-out"})
        assert '<p class="notice" id="notice">You are signed out.</p>' in shown.text
    store.close()


async def test_a_huge_or_malformed_id_in_any_address_is_404(tmp_path: Path) -> None:
    store, app = open_cup(tmp_path)
    transport = httpx.ASGITransport(app=app)
    huge = str(2**70)
    paths = [
        f"/versions/{huge}",
        f"/api/versions/{huge}",
        f"/versions/{2**63}",
        "/versions/0",
        "/versions/00000000000000000000000000000001",
        "/versions/-1",
        "/versions/1e9",
        f"/matches/g{huge}r0",
        "/matches/%00",
        f"/api/matches/g{huge}r{huge}",
        "/p/%00",
        "/p/%ff%fe",
        f"/api/participants/{'x' * 5000}",
    ]
    async with httpx.AsyncClient(transport=transport, base_url="http://cup") as client:
        for path in paths:
            response = await client.get(path)
            assert response.status_code == 404, (path, response.status_code, response.text[:200])
            assert "Traceback" not in response.text
    store.close()


async def test_no_page_or_api_answer_names_the_servers_directories(tmp_path: Path) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    data = competition.config.data
    group = admitted_group(store)
    alice = store.participant_by_name("alice")
    assert alice is not None
    # What a bot prints of itself, a traceback of the check, a fault's detail: the server's
    # own places, as they reach its database.
    version = store.add_version(alice.id, "python3", "main.py", "", 1)
    store.decide(
        version.id,
        "rejected",
        f"check: stderr: RuntimeError: boom {data / 'versions' / '000004' / 'files' / 'main.py'}",
        f'File "{sys.prefix}/lib/python3/json/decoder.py", line 3; cwd {Path.cwd()}',
    )
    result = finished("g1r0", 5)
    result.seats[0].faults.append(FaultRecord("crash", 1, f"wrote {REPO}/referee/server/app.py"))
    store.record(group, 0, group.versions, result, None, identity=group.seed)
    competition.status = f"admission waits: cannot write {data}/incoming"
    _alice, token = store.add_participant("zed")
    transport = httpx.ASGITransport(app=build_app(competition))
    places = {str(data), str(tmp_path), sys.prefix, str(REPO), str(Path.cwd()), str(Path.home())}
    async with httpx.AsyncClient(transport=transport, base_url="http://cup") as client:
        client.headers["authorization"] = f"Bearer {token}"
        paths = ["/", "/participants", "/p/alice", f"/versions/{version.id}", "/matches/g1r0"]
        paths += [f"/api{path}" for path in ("/leaderboard", f"/versions/{version.id}")]
        paths += ["/api/participants/alice", "/api/matches/g1r0", "/api/openapi.json", "/api"]
        for path in paths:
            text = (await client.get(path)).text
            for place in places:
                assert place not in text, (path, place)
        shown = (await client.get(f"/api/versions/{version.id}")).json()
        assert shown["detail"].endswith("boom <data>/versions/000004/files/main.py")
    store.close()
