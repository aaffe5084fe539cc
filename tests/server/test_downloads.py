"""Downloading a match's log: who gets what, when, and that it replays.

In-process cases (the rule: nothing while the group plays, stderr only for its seat's
owner, a pruned log a one-line 404) run against the app through httpx; one real server
plays a participant's bot against house bots, and its downloaded log goes through
``newmarket replay`` and ``--feed`` as a participant would use it.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from referee.match.result import FaultRecord
from referee.server.app import build_app
from referee.server.competition import Competition
from referee.server.competition_db import Group, hash_token
from referee.tools.replay import verify_log
from tests.match_logs import only_log
from tests.server.inprocess import admitted_group, finished, open_competition
from tests.server.serving import (
    NEWMARKET,
    REPO,
    Server,
    competition_file,
    running,
    wait_until,
)

STDERR_LINE = '{{"type":"stderr","seat":{seat},"text":"seat {seat} secret"}}'


def _fake_log(path: Path, data: Path) -> Path:
    lines = [
        json.dumps({"type": "header", "bots": [{"cwd": str(data / "versions" / "1")}]}),
        *(STDERR_LINE.format(seat=seat) for seat in range(3)),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


async def _get(competition: Competition, path: str, token: str | None = None) -> httpx.Response:
    transport = httpx.ASGITransport(app=build_app(competition))
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(transport=transport, base_url="http://cup") as client:
        return await client.get(path, headers=headers)


@pytest.fixture
def group_of_three(tmp_path: Path) -> Iterator[tuple[Competition, Group, Path]]:
    competition = open_competition(tmp_path)
    try:
        yield competition, admitted_group(competition.store), tmp_path
    finally:
        competition.store.close()


async def test_nothing_of_a_match_is_given_while_its_group_plays(
    group_of_three: tuple[Competition, Group, Path],
) -> None:
    competition, group, tmp = group_of_three
    log = _fake_log(tmp / "g1r0.jsonl", competition.config.data)
    competition.store.record(group, 0, group.versions, finished("g1r0", 5), log, identity=5)
    alice_token = competition.store.add_participant("zed")[1]  # anyone at all
    for path in ("/api/matches/g1r0/log", "/matches/g1r0/log"):
        answer = await _get(competition, path, alice_token)
        assert answer.status_code == 403
        assert "group 1 is still being played (1 of 3 matches finished)" in answer.text
        assert "secret" not in answer.text


async def test_a_seat_owner_gets_its_own_stderr_and_nobody_another_seats(
    group_of_three: tuple[Competition, Group, Path],
) -> None:
    competition, group, tmp = group_of_three
    store = competition.store
    for rotation in range(3):
        log = _fake_log(tmp / f"g1r{rotation}.jsonl", competition.config.data)
        store.record(
            group, rotation, group.versions, finished(f"g1r{rotation}", 5), log, identity=5
        )
    # bob sits at seat 1 of rotation 0 (``admitted_group``'s order); a fresh token for him.
    bob = store.participant_by_name("bob")
    assert bob is not None
    token = secrets.token_urlsafe(24)
    store.connection.execute(
        "UPDATE participants SET token_hash = ? WHERE id = ?", (hash_token(token), bob.id)
    )
    anonymous = await _get(competition, "/api/matches/g1r0/log")
    assert anonymous.status_code == 200
    assert anonymous.headers["content-disposition"] == 'attachment; filename="g1r0.jsonl"'
    assert "secret" not in anonymous.text
    assert str(competition.config.data) not in anonymous.text
    assert "<data>/versions/1" in anonymous.text
    owner = await _get(competition, "/api/matches/g1r0/log", token)
    assert [line for line in owner.text.splitlines() if "secret" in line] == [
        STDERR_LINE.format(seat=1)
    ]


async def test_a_log_no_longer_kept_is_a_one_line_404_and_the_page_still_shows(
    group_of_three: tuple[Competition, Group, Path],
) -> None:
    competition, group, tmp = group_of_three
    for rotation in range(3):
        log = _fake_log(tmp / f"g1r{rotation}.jsonl", competition.config.data)
        competition.store.record(
            group, rotation, group.versions, finished(f"g1r{rotation}", 5), log, identity=5
        )
    (tmp / "g1r2.jsonl").unlink()  # pruned by retention
    answer = await _get(competition, "/api/matches/g1r2/log")
    assert answer.status_code == 404
    assert answer.json() == {
        "error": "the log of match g1r2 is no longer kept (its result is, on its page)"
    }
    page = await _get(competition, "/matches/g1r2")
    assert page.status_code == 200 and "Download the log" not in page.text
    assert (await _get(competition, "/api/matches/g9r9/log")).status_code == 404


# ---------------------------------------------------------------- a real server


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    """A server of three house bots (they play at once, no admission to wait for) and the
    first of its matches whose group has finished."""
    tmp = tmp_path_factory.mktemp("downloads")
    config = competition_file(tmp, house=("random", "lowest", "tracker"))
    with running(config) as server:

        def public_match() -> str | None:
            for match in server.get("/api/participants/house:lowest/matches")["matches"]:
                if match["cards_public"]:
                    return str(match["match_id"])
            return None

        yield server, wait_until("a finished group", public_match)


def test_a_downloaded_server_log_verifies_and_feeds_a_bot(
    played: tuple[Server, str], tmp_path: Path
) -> None:
    server, match_id = played
    with server.client() as client:
        page = client.get(f"/matches/{match_id}")
        download = client.get(f"/api/matches/{match_id}/log")
    assert f'href="/matches/{match_id}/log"' in page.text
    assert download.status_code == 200
    assert download.headers["content-disposition"] == f'attachment; filename="{match_id}.jsonl"'
    assert str(server.config.parent / "cup-data") not in download.text
    assert '"type":"stderr"' not in download.text  # nobody's stderr for a stranger
    log = tmp_path / f"{match_id}.jsonl"
    log.write_text(download.text)
    verify_log(log)  # what `newmarket replay LOG` runs: a line that differs raises
    view = server.get(f"/api/matches/{match_id}")
    seat = next(s["seat"] for s in view["seats"] if s["participant"] == "house:lowest")
    fed = subprocess.run(
        [
            *NEWMARKET,
            "replay",
            str(log),
            "--seat",
            str(seat),
            "--feed",
            f"{sys.executable} -m bots.starters.lowest",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert fed.returncode == 0, fed.stdout[-2000:] + fed.stderr[-2000:]
    assert "as the recorded bot did" in fed.stdout


CRASHER = """import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "crasher", "protocol": 1}), flush=True)
    elif message["type"] == "request":
        sys.stderr.write("my hand is a secret\\n")
        sys.exit(3)
"""


async def test_a_crash_quoting_its_stderr_is_hidden_from_others_and_the_log_still_verifies(
    group_of_three: tuple[Competition, Group, Path],
) -> None:
    competition, group, tmp = group_of_three
    store = competition.store
    bot = tmp / "crasher.py"
    bot.write_text(CRASHER)
    subprocess.run(
        [
            *NEWMARKET,
            "match",
            *("--bot", f"{sys.executable} {bot}", "--bot", "random", "--bot", "lowest"),
            *("--hands", "1", "--sandbox", "none", "--log-dir", str(tmp / "crash")),
        ],
        cwd=REPO,
        capture_output=True,
        check=True,
        timeout=120,
    )
    log = only_log(tmp / "crash")
    assert "stderr: my hand is a secret" in log.read_text()  # the crash's detail quotes it
    result = finished("g1r0", 5)
    result.seats[0].faults.append(
        FaultRecord(
            kind="crash", hand=1, detail="exited with status 3; stderr: my hand is a secret"
        )
    )
    for rotation in range(3):
        store.record(group, rotation, group.versions, result, log, identity=5)
    alice = store.participant_by_name("alice")
    assert alice is not None
    token = secrets.token_urlsafe(24)
    store.connection.execute(
        "UPDATE participants SET token_hash = ? WHERE id = ?", (hash_token(token), alice.id)
    )
    public = await _get(competition, "/api/matches/g1r0/log")
    owned = await _get(competition, "/api/matches/g1r0/log", token)
    page = await _get(competition, "/matches/g1r0")
    assert "my hand is a secret" not in public.text
    assert "my hand is a secret" not in page.text
    assert "stderr: (shown to its owner only)" in page.text
    assert "my hand is a secret" in owned.text
    for name, text in (("public", public.text), ("owned", owned.text)):
        (tmp / f"{name}.jsonl").write_text(text)
        verify_log(tmp / f"{name}.jsonl")  # what `newmarket replay` runs: raises if it differs
