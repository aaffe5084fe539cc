"""The organiser's page in Chromium: one session of the organiser at work, and a participant.

A real ``newmarket serve`` (paused, so that no table plays) holds alice, bob,
carol and dave, a finished group of the first three with a fault in one of
its matches, and a suspended version of dave's.  The organiser signs in at
``/signin`` with the organiser token and, on one page, rotates alice's token
(alice, signed in elsewhere, is signed out), disables and enables bob,
re-runs the group, re-rates, unsuspends dave and revokes his token, withdraws a version and bans
carol with her results excluded (the organiser's token is the one the
server's first start printed); the audit log at the foot of the page lists
every action.  alice's browser meets a plain 404 at ``/organiser``.
Screenshots go to ``tests/server/artifacts/``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.bots import resolve_bot
from referee.match.result import FaultRecord
from referee.server.competition_db import CompetitionStore
from referee.server.competition_file import load_config
from tests.chromium import launched_chromium, needs_chromium, screenshot
from tests.server.inprocess import finished
from tests.server.serving import competition_file, running

ARTIFACTS = Path(__file__).parent / "artifacts"

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install '.[test]')"
)
pytestmark = needs_chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium(sync_api) as launched:
        yield launched


def prepared(config: Path) -> tuple[dict[str, str], dict[str, int]]:
    """The participants' tokens and their versions (by label)."""
    store = CompetitionStore.open(load_config(config).database)
    try:
        tokens: dict[str, str] = {}
        versions: dict[str, int] = {}
        for name, count in (("alice", 2), ("bob", 1), ("carol", 1), ("dave", 1)):
            participant, tokens[name] = store.add_participant(name)
            for number in range(1, count + 1):
                version = store.add_version(participant.id, "bundled", "random", "", 0)
                spec = resolve_bot("random", f"{name} v{number}").to_json()
                store.decide(version.id, "admitted", "ok", "", spec)
                versions[f"{name} v{number}"] = version.id
        store.suspend(versions["dave v1"], "its table failed 3 times", [])
        table = (versions["alice v1"], versions["bob v1"], versions["carol v1"])
        group = store.plan_group(11, table, "test")
        for rotation in range(3):
            result = finished(f"g{group.id}r{rotation}", 11)
            if rotation == 2:
                result.seats[0].faults.append(FaultRecord("timeout", 1, "no reply in 10 s"))
            store.record(group, rotation, table, result, None, identity=11)
        store.set_paused(True)  # no table plays: the page is what is tested
        return tokens, versions
    finally:
        store.close()


class Person:
    """One browser context (its own cookies), its page, and what went wrong on it."""

    def __init__(self, browser: Any, base: str) -> None:
        self.context = browser.new_context(viewport={"width": 1300, "height": 1000})
        self.page = self.context.new_page()
        self.page.set_default_timeout(60_000)
        self.base = base
        self.problems: list[str] = []
        self.page.on("pageerror", lambda error: self.problems.append(str(error)))
        self.page.on(
            "console",
            lambda message: self.problems.append(message.text) if message.type == "error" else None,
        )

    def sign_in(self, token: str) -> None:
        self.page.goto(self.base + "/signin")
        self.page.fill("#token", token)
        self.page.click("#signin")
        self.page.wait_for_load_state()

    def click(self, selector: str) -> str:
        """Press a button of the page; the line the page answers with."""
        self.page.click(selector)
        self.page.wait_for_selector("#done, #failed")
        return str(self.page.locator("#done, #failed").first.inner_text())


def test_the_organiser_manages_people_versions_and_results_on_one_page(
    browser: Any, tmp_path: Path
) -> None:
    config = competition_file(tmp_path, house=())
    tokens, versions = prepared(config)
    with running(config, "--jobs", "1") as server:  # paused: one idle table is enough
        # The first start makes the organiser's token and says it once, before it is ready.
        (said,) = [line for line in server.before_ready if "the organiser's token" in line]
        organiser_token = said.rsplit(": ", 1)[1].strip()
        base = server.url.replace("127.0.0.1", "localhost")
        alice, organiser = Person(browser, base), Person(browser, base)
        alice.sign_in(tokens["alice"])
        assert alice.page.locator("#me").inner_text() == "alice"
        hidden = alice.page.goto(base + "/organiser")
        assert hidden is not None and hidden.status == 404
        assert "organiser" not in alice.page.content().lower()
        # Chromium's console says so (the page, then the favicon a text page has not named).
        assert all("status of 404" in problem for problem in alice.problems), alice.problems
        alice.problems.clear()

        organiser.sign_in(organiser_token)
        assert organiser.page.url == base + "/organiser"
        row = 'tr[data-participant="{}"] '.format

        said = organiser.click(row("alice") + ".rotate-token")
        assert "'alice': new token" in said and "1 session(s) ended" in said
        new_token = organiser.page.locator("#new-token").inner_text().strip()
        alice.page.goto(base + "/p/alice")
        assert alice.page.locator("#me").count() == 0  # signed out by the rotation

        assert "disabled" in organiser.click(row("bob") + ".disable")
        assert organiser.page.locator(row("bob") + ".standing").inner_text() == "disabled"
        assert "enabled" in organiser.click(row("bob") + ".enable")

        group = organiser.page.locator("#failed-groups tr").last.get_attribute("data-group")
        said = organiser.click(f'#failed-groups tr[data-group="{group}"] .rerun-group')
        assert f"re-run group {group} as group" in said
        assert "refitted" in organiser.click("#rerate")
        dave = f'[data-version="{versions["dave v1"]}"] '
        assert "admitted again" in organiser.click(dave + ".unsuspend")
        assert "token revoked" in organiser.click(row("dave") + ".revoke-token")
        withdrawn = f'[data-version="{versions["alice v2"]}"] '
        assert "withdrawn" in organiser.click(withdrawn + ".withdraw")
        organiser.page.select_option(row("carol") + ".ban-results", "exclude")
        assert "its matches leave the fit" in organiser.click(row("carol") + ".ban")
        assert organiser.page.locator(row("carol") + ".standing").inner_text() == "banned"

        organiser.page.goto(base + "/organiser")
        actions = organiser.page.locator("#audit .audit-action").all_inner_texts()
        assert actions == [
            "ban",
            "withdraw",
            "revoke-token",
            "unsuspend",
            "rerate",
            "rerun",
            "enable",
            "disable",
            "rotate-token",
        ]
        screenshot(organiser.page, ARTIFACTS, "server-organiser")

        # What the participants meet: the new token signs alice in, carol's never again.
        alice.sign_in(new_token)
        assert alice.page.locator("#me").inner_text() == "alice"
        carol = Person(browser, base)
        carol.sign_in(tokens["carol"])
        assert carol.page.locator("#me").count() == 0
        assert "unknown token" in carol.page.locator("#error").inner_text()
        assert all("status of 403" in problem for problem in carol.problems), carol.problems
        carol.problems.clear()
        assert server.get("/api/versions/{}".format(versions["alice v2"]))["status"] == (
            "withdrawn"
        )
        for person in (alice, organiser, carol):
            assert not person.problems, person.problems
            person.context.close()
