"""The site in a real headless browser: Debian's chromium, driven by Playwright.

Playwright's Python wheel brings its own driver; the browser is the system's
``/usr/bin/chromium`` (no browser download: there is no internet here).  The
tests skip, saying why, where either is missing.  Screenshots of each page
type are saved to ``tests/report/artifacts/`` (ignored by git); the path is
printed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.rules import Rules
from engine.state import Match
from referee.match.convert import apply_choice, build_request
from referee.match.log import read_log
from referee.report.data import load_league, log_path_of
from referee.report.site import SiteBuilder
from tests.chromium import launched_chromium, needs_chromium, screenshot
from tests.report.conftest import BOTS, MISCHIEF
from tests.report.replay_steps import frames_of

ARTIFACTS = Path(__file__).parent / "artifacts"

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install '.[test]')"
)
pytestmark = needs_chromium


@pytest.fixture(scope="module")
def site(league_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report-site") / "site"
    SiteBuilder(league_db, out).build()
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium(sync_api) as launched:
        yield launched


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 1200})
    opened = context.new_page()
    opened.set_default_timeout(60_000)
    dialogs: list[str] = []
    errors: list[str] = []

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    opened.on("dialog", on_dialog)
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.dialogs = dialogs
    opened.errors = errors
    yield opened
    context.close()
    assert not dialogs, f"a bot's text ran as script: {dialogs}"
    assert not errors, f"script errors on the page: {errors}"


def test_the_standings_page_shows_every_bot(site: Path, page: Any) -> None:
    page.goto((site / "index.html").as_uri())
    shown = page.locator("table.standings a.bot").all_inner_texts()
    assert sorted(shown) == sorted(BOTS)
    assert page.locator("svg.chart polyline").count() == len(BOTS)
    # The page's own stylesheet applies (allowed by its hash; nothing else may load).
    nav = page.locator("nav").evaluate("nav => getComputedStyle(nav).backgroundColor")
    assert nav == "rgb(27, 58, 43)"
    screenshot(page, ARTIFACTS, "standings")


def test_a_bot_page_shows_faults_and_stderr_as_text(site: Path, page: Any) -> None:
    page.goto((site / "bots" / f"{BOTS.index(MISCHIEF)}.html").as_uri())
    assert page.locator("h1").inner_text() == MISCHIEF
    assert page.locator(".fault").count() > 0
    assert "illegal fault" in page.locator(".fault pre").first.inner_text()
    assert "</pre><b>nobody</b> notices" in page.locator("pre.stderr").first.inner_text()
    screenshot(page, ARTIFACTS, "bot")


def test_a_bot_page_has_a_summary_its_opponents_and_a_plot(
    league_db: Path, site: Path, page: Any
) -> None:
    league = load_league(league_db)
    index = BOTS.index("tracker")
    mine = [m for m in league.matches if index in m.key.bots]
    page.goto((site / "bots" / f"{index}.html").as_uri())
    summary = page.locator("p.summary").inner_text()
    assert summary.startswith("Rank ") and f"{len(mine)} matches" in summary
    rows = page.locator("table.results tbody tr")
    assert rows.count() == len(mine)
    for number, match in enumerate(mine):
        opponents = rows.nth(number).locator("td").nth(1).locator("a.bot").all_inner_texts()
        assert opponents == [league.bots[b] for b in match.key.bots if b != index]
    dots = page.locator("svg.results circle.result")
    assert dots.count() == len(mine)
    assert dots.first.locator("title").text_content().startswith(mine[0].key.match_id)
    # An opponent's link leads to that bot's page.
    rows.first.locator("a.bot").first.click()
    assert page.locator("h1").inner_text() in BOTS
    screenshot(page, ARTIFACTS, "bot-summary")


def test_a_match_page_links_its_log_where_the_league_keeps_it(
    league_db: Path, site: Path, page: Any
) -> None:
    league = load_league(league_db)
    match = league.matches[0]
    page.goto((site / "matches" / f"{match.key.match_id}.html").as_uri())
    link = page.locator("p.download a[download]")
    # The link leads to the league's own file (a compact record), not to a copy in the site.
    target = link.evaluate("a => a.href")
    original = log_path_of(league, match)
    assert original is not None and original.suffix == ".nmr"
    assert target == original.resolve().as_uri()
    assert not list(site.rglob("*.nmr")) and not list(site.rglob("*.jsonl"))


def test_every_page_reads_at_400_pixels(league_db: Path, site: Path, browser: Any) -> None:
    """No page scrolls sideways on a phone; a wide table scrolls in its own box, whole."""
    context = browser.new_context(viewport={"width": 400, "height": 900})
    narrow = context.new_page()
    league = load_league(league_db)
    pages = {
        "standings": site / "index.html",
        "bot": site / "bots" / f"{BOTS.index(MISCHIEF)}.html",
        "match": site / "matches" / f"{league.matches[0].key.match_id}.html",
    }
    try:
        for name, path in pages.items():
            narrow.goto(path.as_uri())
            width = narrow.evaluate("document.documentElement.scrollWidth")
            assert width <= 400, f"the {name} page is {width} px wide at 400"
            screenshot(narrow, ARTIFACTS, f"{name}-400px")
        narrow.goto(pages["standings"].as_uri())
        table = narrow.locator("table.standings")
        assert table.evaluate("t => getComputedStyle(t).overflowX") == "auto"
        # Its last column is there, reached by scrolling the table (not the page).
        table.evaluate("t => { t.scrollLeft = t.scrollWidth; }")
        last = narrow.locator("table.standings thead th").last
        assert last.is_visible()
        box = last.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 400 + 1
    finally:
        context.close()


def test_one_log_viewed_without_a_league(league_db: Path, tmp_path: Path, page: Any) -> None:
    """``newmarket view LOG``: the match page and its replay for one log, no database needed."""
    league = load_league(league_db)
    match = next(m for m in league.matches if BOTS.index(MISCHIEF) in m.key.bots)
    log = log_path_of(league, match)
    assert log is not None
    out = tmp_path / "one-match"
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "view", str(log), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(out / "index.html")
    page.goto((out / "index.html").as_uri())
    assert page.locator("h1").inner_text() == f"Match {match.key.match_id}"
    names = page.locator("table.result tbody td:nth-child(2)").all_inner_texts()
    assert sorted(names) == sorted(league.bots[b] for b in match.key.bots)
    assert "The log verifies" in page.locator("main").inner_text()
    assert page.locator("#position").inner_text().startswith("before the first hand ·")
    page.keyboard.press("End")
    final = page.locator("#table tr[data-seat] td.chips").all_inner_texts()
    assert [int(c) for c in final] == [seat.chips for seat in match.result.seats]
    href = page.locator("p.download a[download]").get_attribute("href")
    assert (out / href).read_bytes() == log.read_bytes()
    screenshot(page, ARTIFACTS, "view")


def _engine_states(log: Path) -> dict[int, tuple[list[int], list[list[str]]]]:
    """The engine's chips and hands at every decision, replayed from the log's decisions."""
    records = [record for _, record in read_log(log)]
    header = records[0]
    match = Match(
        Rules.from_dict(header["rules"]),
        int(header["players"]),
        int(header["seed"]),
        chips=header.get("chips"),  # each seat's own (bankroll leagues); else the rules'
    )
    states = {}

    def snapshot() -> None:
        hands = [sorted(str(c) for c in match.hand_of(s)) for s in range(match.players)]
        states[len(match.events(viewer=None))] = (list(match.chips), hands)

    snapshot()
    for record in records:
        if record["type"] == "decision":
            request = build_request(match, 1, time_left_ms=0, time_bank_ms=0)
            assert apply_choice(match, request, record["choice"]) is None
            snapshot()
    return states


def _shown(page: Any) -> tuple[list[int], list[list[str]]]:
    rows = page.locator("#table tr[data-seat]")
    chips, hands = [], []
    for index in range(rows.count()):
        row = rows.nth(index)
        chips.append(int(row.locator("td.chips").inner_text()))
        hands.append(
            sorted(
                row.locator("td.hand .card").evaluate_all(
                    "cards => cards.map(card => card.dataset.card)"
                )
            )
        )
    return chips, hands


def test_stepping_the_replay_shows_the_cards_and_chips_of_the_log(
    league_db: Path, site: Path, page: Any
) -> None:
    league = load_league(league_db)
    mischief = BOTS.index(MISCHIEF)
    match = next(m for m in league.matches if mischief in m.key.bots and m.result.hands >= 3)
    log = log_path_of(league, match)
    assert log is not None
    states = _engine_states(log)
    page_file = site / "matches" / f"{match.key.match_id}.html"
    data_text = re.search(
        r'<script type="application/json" id="match-data">(.*?)</script>',
        page_file.read_text(),
        re.S,
    )
    assert data_text is not None
    frames = frames_of(json.loads(data_text.group(1)))
    page.goto(page_file.as_uri())
    assert (
        page.locator("#table tr[data-seat] td.name")
        .nth(match.key.bots.index(mischief))
        .inner_text()
        .startswith(MISCHIEF)
    )
    compared = 0
    seen_hands = set()
    for step, frame in enumerate(frames):
        if step:
            page.keyboard.press("ArrowRight")
        assert page.locator("#replay").get_attribute("data-step") == str(step)
        chips, hands = _shown(page)
        seen_hands.add(json.dumps(hands))
        expected = states.get(frame["events"])
        if expected is not None and frame["kind"] not in ("hand_ended", "match_ended"):
            assert (chips, hands) == expected, f"step {step}: {frame['lines']}"
            compared += 1
        if step == 6:
            screenshot(page, ARTIFACTS, "match")
    assert compared >= 10
    assert len(seen_hands) > 10  # the shown cards really change as the replay steps
    final = [seat.chips for seat in match.result.seats]
    assert _shown(page)[0] == final  # the last step shows the result's chips
    before = _shown(page)
    page.keyboard.press("ArrowLeft")
    assert page.locator("#replay").get_attribute("data-step") == str(len(frames) - 2)
    page.keyboard.press("ArrowRight")
    assert _shown(page) == before
    page.keyboard.press("Home")
    assert page.locator("#replay").get_attribute("data-step") == "0"
    page.keyboard.press("PageDown")  # the first step of the next hand
    step = int(page.locator("#replay").get_attribute("data-step"))
    assert frames[step]["hand"] != frames[step - 1]["hand"]
    assert page.locator("#position").inner_text().startswith(f"hand {frames[step]['hand']} ")
    page.keyboard.press("End")
    assert page.locator("#replay").get_attribute("data-step") == str(len(frames) - 1)
