"""End to end in Chromium: an organiser's competition as two participants live it.

The organiser starts a server (``newmarket serve``) and adds alice and bob
(``add-participant``).  In a real browser (Debian's ``/usr/bin/chromium``
through Playwright, as tests/report/test_browser.py launches it; no browser
download) each signs in with the token, alice uploads a Python bot and bob
a C bot through the upload form.  Both pass the check and appear on the
leaderboard, which updates without a reload.  alice uploads a broken version
and reads its rejection transcript; a replay opens and steps.  Session
cookies are ``Secure`` here (Chromium treats http://localhost as secure).
Screenshots go to ``tests/server/artifacts/`` (ignored by git).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.chromium import launched_chromium, needs_chromium, screenshot
from tests.server.serving import (
    BOTS,
    NEWMARKET,
    REPO,
    Server,
    competition_file,
    newmarket,
    running,
    version_status,
    wait_until,
)

ARTIFACTS = Path(__file__).parent / "artifacts"

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install '.[test]')"
)
pytestmark = needs_chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium(sync_api) as launched:
        yield launched


class Participant:
    """One person's browser: its own context (cookies), page, and what went wrong on it."""

    def __init__(self, browser: Any, base: str) -> None:
        self.context = browser.new_context(viewport={"width": 1100, "height": 1000})
        self.page = self.context.new_page()
        self.page.set_default_timeout(60_000)
        self.base = base
        self.problems: list[str] = []
        self.page.on("pageerror", lambda error: self.problems.append(str(error)))
        self.page.on("dialog", lambda dialog: self.problems.append("dialog: " + dialog.message))
        self.page.on(
            "console",
            lambda message: self.problems.append(message.text) if message.type == "error" else None,
        )

    def sign_in(self, token: str) -> None:
        self.page.goto(self.base + "/signin")
        self.page.fill("#token", token)
        self.page.click("#signin")
        self.page.wait_for_selector("#versions")

    def upload(self, path: Path, runtime: str) -> int:
        self.page.goto(self.base + "/upload")
        self.page.select_option("#runtime", runtime)
        self.page.set_input_files("#bot", str(path))
        self.page.click("#submit")
        self.page.wait_for_url("**/versions/*")
        return int(self.page.url.rsplit("/", 1)[1])


def test_two_participants_upload_play_and_watch(browser: Any, tmp_path: Path) -> None:
    config = competition_file(tmp_path, secure=True)
    # The organiser's way: the command prints each token.
    tokens = {
        name: newmarket("serve", "add-participant", name, str(config)) for name in ("alice", "bob")
    }
    server: Server
    with running(config) as server:
        base = server.url.replace("127.0.0.1", "localhost")
        alice, bob = Participant(browser, base), Participant(browser, base)
        alice.sign_in(tokens["alice"])
        bob.sign_in(tokens["bob"])
        assert alice.page.locator("#me").inner_text() == "alice"
        first = alice.upload(BOTS / "plain.py", "python3")
        screenshot(alice.page, ARTIFACTS, "server-version-pending")
        second = bob.upload(REPO / "bots" / "c" / "bot.c", "c")
        for version in (first, second):
            decided = wait_until("admission", partial(version_status, server, version))
            assert decided == "admitted"

        # The leaderboard, opened once, fills in by itself as the first matches end.
        alice.page.goto(base + "/")
        alice.page.wait_for_function(
            """() => {
                const text = document.querySelector('#board tbody').innerText;
                return text.includes('alice v1') && text.includes('bob v1')
                    && Number(document.body.dataset.matches || 0) >= 6;
            }""",
            timeout=240_000,
        )
        screenshot(alice.page, ARTIFACTS, "server-leaderboard")

        # A broken version is rejected, and its owner reads why.
        broken = alice.upload(BOTS / "broken.py", "python3")
        assert wait_until("the check", partial(version_status, server, broken)) == "rejected"
        alice.page.reload()
        assert "rejected" in alice.page.locator("#version-status").inner_text()
        transcript = alice.page.locator("#transcript").inner_text()
        assert "FAIL" in transcript and "not-a-card" in transcript
        screenshot(alice.page, ARTIFACTS, "server-rejected")
        bob.page.goto(f"{base}/versions/{broken}")
        assert bob.page.locator("#transcript").count() == 0  # alice's alone

        # A replay opens from alice's page and steps: a match of a finished group (until
        # its group ends a match shows nothing of its cards).
        alice.page.goto(base + "/p/alice")
        finished = '#matches tr[data-cards="public"] a'
        wait_until(
            "a match of a finished group",
            lambda: alice.page.reload() or alice.page.locator(finished).count(),
        )
        screenshot(alice.page, ARTIFACTS, "server-participant")
        alice.page.locator(finished).first.click()
        alice.page.wait_for_selector("#replay")
        start = alice.page.locator("#position").inner_text()
        alice.page.click("#next")
        alice.page.click("#next")
        assert alice.page.locator("#position").inner_text() != start
        assert alice.page.locator("#table .card").count() > 0
        screenshot(alice.page, ARTIFACTS, "server-replay")
        for person in (alice, bob):
            assert not person.problems, person.problems
            person.context.close()


def test_a_remote_bot_registered_in_the_browser_connects_and_is_shown_connected(
    browser: Any, tmp_path: Path
) -> None:
    config = competition_file(
        tmp_path, house=("random", "lowest"), secure=True, remote="port = 0\nwait = 5"
    )
    token = newmarket("serve", "add-participant", "carol", str(config))
    with running(config) as server:
        found = re.search(r"remote bots on (\S+)\)", server.log[0])
        assert found is not None, server.log[0]
        base = server.url.replace("127.0.0.1", "localhost")
        carol = Participant(browser, base)
        carol.sign_in(token)
        carol.page.goto(base + "/upload")
        carol.page.click("#register-remote")
        carol.page.wait_for_url("**/versions/*")
        assert carol.page.locator("#remote-state").inner_text() == "remote bot · not connected"
        bot_token = carol.page.locator("#bot-token").inner_text().strip()
        command = carol.page.locator("#connect-command").inner_text()
        assert command.startswith(f"newmarket connect {found.group(1)} --token {bot_token}")
        screenshot(carol.page, ARTIFACTS, "server-remote-registered")
        bot = [sys.executable, "-m", "bots.starters.tracker"]
        bridge = subprocess.Popen(
            [*NEWMARKET, "connect", found.group(1), "--token", bot_token, "--", *bot],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            carol.page.goto(base + "/")
            carol.page.wait_for_function(
                """() => document.querySelector('#board tbody').innerText
                    .includes('remote (connected)')
                    && Number(document.body.dataset.matches || 0) >= 3""",
                timeout=240_000,
            )
            screenshot(carol.page, ARTIFACTS, "server-remote-leaderboard")
        finally:
            bridge.terminate()
            bridge.wait(60)
        carol.page.wait_for_function(  # the live leaderboard notices the drop by itself
            """() => document.querySelector('#board tbody').innerText
                .includes('remote (not connected)')""",
            timeout=240_000,
        )
        assert not carol.problems, carol.problems
        carol.context.close()
