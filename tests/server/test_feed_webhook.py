"""Knowing what happened: a participant's Atom feed and the organiser's webhook (no server).

The feed is read by feedparser, as a feed reader reads it (a parse error sets
``bozo``), and its Atom elements are checked with ElementTree.  The webhook
posts to a real HTTP receiver on this machine, which fails each event's first
delivery, under an injected clock.
"""

from __future__ import annotations

import http.server
import json
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import feedparser
import httpx
import pytest

from referee.match.result import FaultRecord
from referee.server.app import build_app
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.competition_file import load_config
from referee.server.events import decide, publish_event, record_match
from referee.server.webhook import deliver_due, post_json
from referee.settings.sections import ConfigError
from tests.server.inprocess import admitted_group, finished

ATOM = "{http://www.w3.org/2005/Atom}"


def _competition(tmp_path: Path, webhook: str = "") -> Competition:
    path = tmp_path / "cup.toml"
    path.write_text('[competition]\nname = "Winter cup"\nhouse_bots = []\n' + webhook)
    config = load_config(path)
    return Competition(config, CompetitionStore.open(config.database))


@pytest.fixture
def cup(tmp_path: Path) -> Iterator[Competition]:
    competition = _competition(tmp_path)
    try:
        yield competition
    finally:
        competition.store.close()


async def test_the_feed_tells_a_participant_what_happened_and_validates(cup: Competition) -> None:
    store = cup.store
    group = admitted_group(store)
    alice = store.participant_by_name("alice")
    assert alice is not None
    rejected = store.add_version(alice.id, "python3", "main.py", "", 1)
    where = cup.config.data / "versions" / "000004" / "main.py"
    decide(store, rejected.id, "rejected", f"check: step 2: crash fault: {where}\x1b[31m <b>x</b>")
    decide(store, group.versions[0], "admitted", "passed its check")
    result = finished("g1r0", 5)
    result.seats[0].faults.append(FaultRecord(kind="crash", hand=3, detail="exit 1"))
    record_match(store, group, 0, group.versions, result, None, identity=5)
    publish_event(store, None, "phase", "Submissions close in 24 hours", "/")
    transport = httpx.ASGITransport(app=build_app(cup))
    async with httpx.AsyncClient(transport=transport, base_url="http://cup.example") as client:
        answer = await client.get("/p/alice/feed.atom")
        page = await client.get("/p/alice")
        missing = await client.get("/p/nobody/feed.atom")
    assert answer.status_code == 200 and missing.status_code == 404
    assert answer.headers["content-type"].startswith("application/atom+xml")
    assert 'href="/p/alice/feed.atom"' in page.text

    feed = feedparser.parse(answer.content)
    assert not feed.bozo, feed.get("bozo_exception")
    assert feed.version == "atom10"
    assert feed.feed.title == "alice in Winter cup"
    assert [(e.title, e.link) for e in feed.entries] == [
        ("Submissions close in 24 hours", "http://cup.example/"),
        ("alice v1: its first crash, in match g1r0 (hand 3)", "http://cup.example/matches/g1r0"),
        ("alice v1 admitted", "http://cup.example/versions/1"),
        (
            "alice v2 rejected: check: step 2: crash fault: "
            "<data>/versions/000004/main.py\ufffd[31m <b>x</b>",
            "http://cup.example/versions/4",
        ),
    ]
    assert [e.tags[0].term for e in feed.entries] == ["phase", "crash", "admitted", "rejected"]
    assert len({e.id for e in feed.entries}) == 4
    assert str(cup.config.data) not in answer.text

    # RFC 4287's required elements, on the feed and on each entry.
    root = ET.fromstring(answer.content)
    assert root.tag == f"{ATOM}feed"
    for element in (root, *root.findall(f"{ATOM}entry")):
        for required in ("id", "title", "updated"):
            assert element.find(f"{ATOM}{required}") is not None, required
    assert root.find(f"{ATOM}author/{ATOM}name") is not None


class _Receiver(http.server.BaseHTTPRequestHandler):
    """Fails the first delivery of each event (500), takes the next (204)."""

    seen: list[dict[str, Any]]
    taken: list[dict[str, Any]]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        body["header"] = self.headers["X-Newmarket-Event"]
        first = all(seen["id"] != body["id"] for seen in self.seen)
        self.seen.append(body)
        if not first:
            self.taken.append(body)
        self.send_response(500 if first else 204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[str, type[_Receiver]]]:
    handler = type("Receiver", (_Receiver,), {"seen": [], "taken": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", handler
    finally:
        server.shutdown()
        server.server_close()


async def test_the_webhook_delivers_each_event_once_after_a_failure(
    tmp_path: Path, receiver: tuple[str, type[_Receiver]]
) -> None:
    url, handler = receiver
    cup = _competition(tmp_path, f'\n[webhook]\nurl = "{url}"\ntimeout = 30\n')
    store = cup.store
    try:
        alice = store.add_participant("alice")[0]
        first = publish_event(store, alice.id, "admitted", "alice v1 admitted", "/versions/1")
        second = publish_event(store, None, "phase", "Finals begin", "/")
        assert await deliver_due(cup, post_json, now=1000.0) == 0  # both refused (500)
        assert await deliver_due(cup, post_json, now=1004.0) == 0  # not due: no attempt
        assert len(handler.seen) == 2
        assert await deliver_due(cup, post_json, now=1005.0) == 2
        assert await deliver_due(cup, post_json, now=9999.0) == 0  # nothing left to send
    finally:
        store.close()
    assert [(b["id"], b["header"]) for b in handler.taken] == [
        (first, str(first)),
        (second, str(second)),
    ]
    assert handler.taken[0] | {"at": 0} == {
        "competition": "Winter cup",
        "participant": "alice",
        "id": first,
        "kind": "admitted",
        "title": "alice v1 admitted",
        "link": "/versions/1",
        "detail": "",
        "at": 0,
        "header": str(first),
    }
    assert handler.taken[1]["participant"] is None


def test_an_unreachable_receiver_is_one_line_and_a_bad_url_a_config_error(tmp_path: Path) -> None:
    refused = post_json("http://127.0.0.1:9/hook", b"{}", {}, 5.0)
    assert refused is not None and "\n" not in refused
    with pytest.raises(ConfigError, match=r"webhook\.url: 'ftp://x' is not an http"):
        _competition(tmp_path, '\n[webhook]\nurl = "ftp://x"\n')
