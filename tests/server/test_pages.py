"""The web pages in process (httpx's ASGI transport): self-registration, sessions, owner views."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from referee.server.app import build_app
from referee.server.competition import Competition
from referee.server.config import load_config
from referee.server.store import CompetitionStore


def csrf(page: httpx.Response) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found is not None
    return found.group(1)


async def test_self_registration_shows_the_token_once_and_signs_in(tmp_path: Path) -> None:
    path = tmp_path / "cup.toml"
    path.write_text(
        '[competition]\nname = "Open cup"\nself_registration = true\n'
        "[server]\nsecure_cookies = false\n"
    )
    config = load_config(path)
    store = CompetitionStore.open(config.database)
    app = build_app(Competition(config, store))
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
