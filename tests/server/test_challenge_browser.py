"""A challenge end to end in Chromium: asked for on the page, played at once, never ranked.

alice (an admitted version written to the store: admission has its own browser
test) signs in, opens **challenge**, picks the two house bots and presses
*Play now*; the challenge's page shows the three versions' chips once its
three matches are played.  The ladder is paused, so the leaderboard's zero
matches for alice say the challenge never reached it; its matches are not
ladder matches (404 at ``/api/matches``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.bots import resolve_bot
from referee.server.competition_db import CompetitionStore
from referee.server.competition_file import load_config
from tests.chromium import launched_chromium, needs_chromium, screenshot
from tests.server.serving import competition_file, running, wait_until

ARTIFACTS = Path(__file__).parent / "artifacts"

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install '.[test]')"
)
pytestmark = needs_chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium(sync_api) as launched:
        yield launched


def test_a_challenge_from_the_page_is_played_and_never_ranked(browser: Any, tmp_path: Path) -> None:
    config = competition_file(tmp_path, house=("random", "tracker"), secure=True)
    store = CompetitionStore.open(load_config(config).database)
    try:
        alice, token = store.add_participant("alice")
        version = store.add_version(alice.id, "bundled", "random", "", 0)
        store.decide(version.id, "admitted", "ok", "", resolve_bot("random", "alice").to_json())
        store.set_paused(True)  # the ladder plays nothing: only the challenge can
    finally:
        store.close()
    with running(config) as server:
        base = server.url.replace("127.0.0.1", "localhost")
        context = browser.new_context(viewport={"width": 1100, "height": 900})
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(base + "/signin")
        page.fill("#token", token)
        page.click("#signin")
        page.wait_for_selector("#versions")
        page.goto(base + "/challenge")
        page.select_option("#opponent1", "house:random")
        page.select_option("#opponent2", "house:tracker")
        page.click("#challenge-submit")
        page.wait_for_url("**/challenges/*")
        number = int(page.url.rsplit("/", 1)[1])

        def finished() -> bool:
            page.reload()
            return bool(
                page.locator("#challenge-status").get_attribute("data-status") == "finished"
            )

        wait_until("the challenge's three matches", finished)
        table = page.locator("#challenge-table tbody").inner_text()
        assert "alice v1" in table and "house:random v1" in table and "house:tracker v1" in table
        assert "3 of 3 matches played" in page.locator("main").inner_text()
        screenshot(page, ARTIFACTS, "server-challenge")
        # Never ranked: alice played no ladder match, and the challenge's are not ladder ones.
        board = server.get("/api/leaderboard")
        mine = next(row for row in board["rows"] if row["label"] == "alice v1")
        assert mine["matches"] == 0
        with server.client() as client:
            assert client.get(f"/api/matches/c{number}r0").status_code == 404
            # Only alice and her opponents may look: nobody signed in gets a 404.
            assert client.get(f"/api/challenges/{number}").status_code == 404
        seen = server.get(f"/api/challenges/{number}", token)
        assert seen["status"] == "finished" and len(seen["matches"]) == 3
        context.close()
