"""The web pages in process (httpx's ASGI transport): self-registration, sessions, owner views."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from starlette.types import ASGIApp

from referee.server.app import build_app
from referee.server.competition import Competition
from referee.server.config import load_config
from referee.server.ratelimit import SlidingWindow
from referee.server.store import CompetitionStore


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
        assert out.status_code == 303
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
