"""The JSON API against a real server, with an HTTP client, as a participant's script uses it.

One server for the module: alice uploads a Python bot, bob a C bot (compiled
by the server), and the house's ``random`` bot fills the third seat.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from functools import partial
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from referee.server.operations import read_operations
from tests.server.serving import (
    BOTS,
    NEWMARKET,
    REPO,
    Server,
    add_old_participant,
    add_participant,
    competition_file,
    running,
    upload,
    uploaded,
    version_status,
    wait_until,
)


@pytest.fixture(scope="module")
def cup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    tmp = tmp_path_factory.mktemp("api")
    config = competition_file(tmp, uploads="per_hour = 3\nmax_kb = 256")
    tokens = {name: add_participant(config, name) for name in ("alice", "bob", "carol", "dave")}
    tokens["xss"] = add_old_participant(config, "<img src=x onerror=alert(1)>")
    with running(config) as server:
        yield server, tokens


@pytest.fixture(scope="module")
def playing(cup: tuple[Server, dict[str, str]]) -> dict[str, int]:
    server, tokens = cup
    ids = {
        "alice": uploaded(server, tokens["alice"], BOTS / "plain.py"),
        "bob": uploaded(server, tokens["bob"], REPO / "bots" / "c" / "bot.c", "c"),
    }
    for version in ids.values():
        decided = wait_until("a decision", partial(version_status, server, version))
        shown = server.get(f"/api/versions/{version}", tokens["alice"])
        assert decided == "admitted", (shown["detail"], server.log[-5:])

    def both_played() -> bool:
        rows = server.get("/api/leaderboard")["rows"]
        played: dict[str, int] = {row["participant"]: row["matches"] for row in rows}
        return played.get("alice", 0) >= 3 and played.get("bob", 0) >= 3

    wait_until("both versions' first matches", both_played)
    return ids


def test_a_second_server_on_the_same_competition_is_refused_in_one_line(
    cup: tuple[Server, dict[str, str]],
) -> None:
    # Two servers on one data directory both admitted the same pending versions (unpacking
    # one directory at once) and both planned and played groups: refused before it starts.
    server, _tokens = cup
    second = subprocess.Popen(
        [*NEWMARKET, "serve", str(server.config), "--port", "0"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert second.stderr is not None
    # An upload the first server is receiving: the refused second must not clear it away.
    receiving = server.config.parent / "cup-data" / "incoming" / "0123456789abcdef"
    receiving.parent.mkdir(parents=True, exist_ok=True)
    receiving.write_bytes(b"half an upload")
    said = []
    try:
        for line in second.stderr:  # until it ends, or says it is serving (the failure)
            said.append(line)
            if " at http://" in line:
                break
    finally:
        second.kill()
        second.wait(timeout=60)
    assert second.returncode == 2, said
    pid = server.process.pid
    database = server.config.parent / "cup-data" / "competition.sqlite"
    assert said == [
        f"error: {database}: already in use by the server process {pid} "
        "(lock competition.sqlite.lock); one server per competition\n"
    ]
    assert server.get("/api/leaderboard")["competition"] == "Test cup"  # the first serves on
    assert receiving.read_bytes() == b"half an upload"
    receiving.unlink()


def test_the_openapi_description_names_every_route(cup: tuple[Server, dict[str, str]]) -> None:
    server, _ = cup
    spec = server.get("/api/openapi.json")
    assert spec["openapi"].startswith("3.")
    assert {"/api/leaderboard", "/api/versions", "/api/matches/{match_id}"} <= set(spec["paths"])
    assert spec["paths"]["/api/versions"]["post"]["security"] == [{"token": []}]


def test_both_versions_are_admitted_and_ranked_with_intervals(
    cup: tuple[Server, dict[str, str]], playing: dict[str, int]
) -> None:
    server, _ = cup
    board = server.get("/api/leaderboard")
    rows = {row["participant"]: row for row in board["rows"]}
    assert {"alice", "bob", "house:random"} <= set(rows)
    assert rows["bob"]["runtime"] == "c" and rows["alice"]["playing"]
    ranks = sorted(row["rank"] for row in board["rows"])
    assert ranks == list(range(1, len(ranks) + 1))
    scored = wait_until(
        "score intervals",
        lambda: [r for r in server.get("/api/leaderboard")["rows"] if r["low"] is not None],
    )
    for row in scored:
        assert row["low"] <= row["score"] <= row["high"]
        assert row["rank_low"] <= row["rank"] + 2 and row["rank_low"] <= row["rank_high"]


def test_an_upload_needs_a_token_and_an_allowed_runtime(
    cup: tuple[Server, dict[str, str]],
) -> None:
    server, tokens = cup
    anonymous = upload(server, None, BOTS / "plain.py", "python3")
    assert anonymous.status_code == 401 and "Bearer" in anonymous.json()["error"]
    wrong = upload(server, "not-a-token", BOTS / "plain.py", "python3")
    assert wrong.status_code == 401
    cobol = upload(server, tokens["carol"], BOTS / "plain.py", "cobol")
    assert cobol.status_code == 400 and "runtime 'cobol' is not allowed" in cobol.json()["error"]


def test_a_broken_version_is_rejected_with_a_transcript_for_its_owner_only(
    cup: tuple[Server, dict[str, str]], playing: dict[str, int]
) -> None:
    server, tokens = cup
    version = uploaded(server, tokens["alice"], BOTS / "broken.py")
    assert wait_until("the check", lambda: version_status(server, version)) == "rejected"
    mine = server.get(f"/api/versions/{version}", tokens["alice"])
    assert "FAIL" in mine["transcript"] and 'got "not-a-card"' in mine["transcript"]
    assert "Match log:" not in mine["transcript"]  # a path on the server, deleted anyway
    assert "transcript" not in server.get(f"/api/versions/{version}", tokens["bob"])
    assert "transcript" not in server.get(f"/api/versions/{version}")
    # The newest *admitted* version plays on.
    rows = {row["label"]: row for row in server.get("/api/leaderboard")["rows"]}
    assert rows["alice v1"]["playing"]


def test_stderr_of_a_match_is_shown_to_its_owner_only(
    cup: tuple[Server, dict[str, str]], playing: dict[str, int]
) -> None:
    server, tokens = cup
    # A match whose group has finished: until then nothing of its cards is shown.
    match_id = wait_until(
        "a match of a finished group",
        lambda: next(
            (
                m["match_id"]
                for m in server.get("/api/participants/alice")["matches"]
                if m["cards_public"]
            ),
            None,
        ),
    )
    public = server.get(f"/api/matches/{match_id}")
    assert public["stderr"] == {} and public["replay"]["frames"]
    owner: dict[str, Any] = wait_until(
        "a match log with alice's stderr",
        lambda: next(
            (
                view
                for m in server.get("/api/participants/alice")["matches"]
                if (view := server.get(f"/api/matches/{m['match_id']}", tokens["alice"]))["stderr"]
            ),
            None,
        ),
    )
    assert any("secret strategy" in text for text in owner["stderr"].values())
    assert server.get(f"/api/matches/{owner['match_id']}", tokens["bob"])["stderr"] == {}


def test_the_upload_rate_limit_says_429_with_a_reason(
    cup: tuple[Server, dict[str, str]],
) -> None:
    server, tokens = cup
    sent = [upload(server, tokens["carol"], BOTS / "plain.py", "python3") for _ in range(4)]
    statuses = [r.status_code for r in sent]
    assert statuses == [201, 201, 201, 429], ([r.text for r in sent], server.log[-30:])
    refused = upload(server, tokens["carol"], BOTS / "plain.py", "python3")
    assert refused.json()["error"].startswith("upload limit: 3 uploads per hour")


def test_forms_without_the_csrf_token_are_refused(cup: tuple[Server, dict[str, str]]) -> None:
    server, tokens = cup
    with server.client() as client:
        assert client.get("/register").status_code == 403  # this file allows no registration
        page = client.get("/signin")
        token = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert token is not None
        forged = client.post("/signin", data={"token": tokens["alice"]})
        assert forged.status_code == 403 and "CSRF" in forged.text
        other = httpx.post(
            server.url + "/signin", data={"token": tokens["alice"], "csrf": token.group(1)}
        )
        assert other.status_code == 403  # the token belongs to another browser
        signed = client.post("/signin", data={"token": tokens["alice"], "csrf": token.group(1)})
        assert signed.status_code == 303 and "nm_session" in signed.headers["set-cookie"]


def test_every_page_has_a_strict_csp_and_escapes_names(
    cup: tuple[Server, dict[str, str]],
) -> None:
    server, _ = cup
    with server.client() as client:
        for path in ("/", "/participants", "/api/leaderboard", "/nowhere"):
            response = client.get(path)
            csp = response.headers["content-security-policy"]
            assert "default-src 'none'" in csp and "script-src 'self'" in csp
            assert response.headers["x-content-type-options"] == "nosniff"
        listing = client.get("/participants").text
    assert "<img src=x" not in listing
    assert "&lt;img src=x onerror=alert(1)&gt;" in listing


def test_fault_transcripts_are_shown_to_their_owner_only(
    cup: tuple[Server, dict[str, str]], playing: dict[str, int]
) -> None:
    server, tokens = cup
    version = uploaded(server, tokens["dave"], BOTS / "sloppy.py")
    assert wait_until("admission", partial(version_status, server, version)) == "admitted"
    faults = wait_until(  # of a finished group: until then its transcripts wait too
        "a fault in a match",
        lambda: [f for f in server.get("/api/participants/dave")["faults"] if f["cards_public"]],
    )
    match_id = faults[0]["match_id"]
    mine = server.get(f"/api/matches/{match_id}", tokens["dave"])
    assert mine["transcripts"] and any(
        "not-a-card" in line["text"] for t in mine["transcripts"] for line in t["lines"]
    )
    assert server.get(f"/api/matches/{match_id}")["transcripts"] == []
    assert server.get(f"/api/matches/{match_id}", tokens["alice"])["transcripts"] == []
    public = server.get(f"/api/matches/{match_id}")["seats"]
    assert any(f["kind"] for seat in public for f in seat["faults"])  # the fault itself is public


def test_the_operations_log_has_the_start_each_upload_and_each_admission(
    cup: tuple[Server, dict[str, str]], playing: dict[str, int]
) -> None:
    server, _tokens = cup
    said = "".join(server.before_ready + server.log)
    assert re.search(r"newmarket serve: \S+Z start competition=", said)
    for name, version in playing.items():
        assert f"upload participant={name} version={version} " in said
        assert re.search(rf"admission version={version} participant={name} ", said)
    # The same lines, as JSON, in the data directory's file (what a management command adds to).
    records = read_operations(server.config.parent / "cup-data" / "operations.log")
    kinds = {(r["kind"], r.get("version")) for r in records}
    assert ("start", None) in kinds
    assert {("upload", v) for v in playing.values()} <= kinds
    assert {("admission", v) for v in playing.values()} <= kinds


def test_metrics_and_the_status_page_of_a_running_server(
    cup: tuple[Server, dict[str, str]], playing: dict[str, int]
) -> None:
    server, _tokens = cup
    with server.client() as client:  # no token: both are public
        metrics = client.get("/metrics")
        status = client.get("/status")
    assert metrics.status_code == 200 and status.status_code == 200
    values = {
        sample.name: sample.value
        for family in text_string_to_metric_families(metrics.text)
        for sample in family.samples
    }
    assert values["newmarket_matches_total"] >= 3  # both versions played three at least
    assert values["newmarket_disk_free_bytes"] > 0
    assert values["newmarket_record_bytes"] >= 0  # the retention pass at the start ran
    assert values["newmarket_settled"] in (0.0, 1.0)
    assert "Pace: " in status.text and "matches played" in status.text
    assert " retention pruned=0 " in "".join(server.log)  # nothing is a week old yet
