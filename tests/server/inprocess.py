"""A competition in this process (no server): its store, its app through httpx, a result.

For tests that inject a fault where the server writes (a full disk, a locked
database) and look at what a participant or the store sees.  A real server in
a child process is ``tests.server.serving``'s.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from referee.bots import BotSpec
from referee.match.result import MatchResult, SeatResult
from referee.server.app import build_app
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore, Group
from referee.server.competition_file import load_config
from referee.server.operations import OperationsLog, set_operations_log

PLAIN_BOT = b"print('hello')\n"
START = 1_795_867_200.0  # 2026-11-28 12:00:00 UTC: a fake wall clock's first reading


class FakeTime:
    """Stands in for the ``time`` module where a store stamps its rows (``finished_at``)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now


def fake_wall_clock(monkeypatch: pytest.MonkeyPatch, *modules: ModuleType) -> FakeTime:
    """A wall clock at ``START`` that ``modules`` read as ``time``; a test moves it on."""
    fake = FakeTime(START)
    for module in modules:
        monkeypatch.setattr(module, "time", fake)
    return fake


@contextlib.contextmanager
def operations_said(at: float = START) -> Iterator[io.StringIO]:
    """The operations log's lines written meanwhile, each stamped ``at``."""
    out = io.StringIO()
    previous = set_operations_log(OperationsLog(stream=out, clock=lambda: at))
    try:
        yield out
    finally:
        set_operations_log(previous)


def open_competition(
    tmp_path: Path, busy_timeout: float = 10.0, *, sections: str = ""
) -> Competition:
    """A competition with no house bots and the competition file's other ``sections``
    (TOML), its store open (the caller closes it)."""
    config_path = tmp_path / "cup.toml"
    config_path.write_text('[competition]\nname = "x"\nhouse_bots = []\n' + sections)
    config = load_config(config_path)
    return Competition(config, CompetitionStore.open(config.database, busy_timeout=busy_timeout))


async def api_upload(competition: Competition, token: str) -> httpx.Response:
    """A one-file python3 upload to ``POST /api/versions``, as a participant's script sends it."""
    transport = httpx.ASGITransport(app=build_app(competition))
    async with httpx.AsyncClient(transport=transport, base_url="http://cup") as client:
        return await client.post(
            "/api/versions",
            headers={"Authorization": f"Bearer {token}"},
            data={"runtime": "python3"},
            files={"bot": ("main.py", PLAIN_BOT)},
        )


def finished(match_id: str, seed: int, players: int = 3) -> MatchResult:
    """A finished match of ``players`` seats, nobody up or down."""
    seats = [
        SeatResult(
            seat=i,
            name=f"b{i}",
            place=i + 1,
            chips=20,
            status="ok",
            faults=[],
            net_chips=0,
            boodle_chips=0,
            hands_won=0,
        )
        for i in range(players)
    ]
    return MatchResult(
        match_id=match_id,
        seed=seed,
        rules={},
        hands=3,
        seats=seats,
        log_path=None,
        reason="hand_limit",
    )


def admitted_group(
    store: CompetitionStore, names: tuple[str, ...] = ("alice", "bob", "carol")
) -> Group:
    """A participant and an admitted version for each name, and a group of them planned."""
    versions = []
    for name in names:
        participant, _token = store.add_participant(name)
        version = store.add_version(participant.id, "python3", "main.py", "", 1)
        store.decide(version.id, "admitted", "ok", "", BotSpec(name, ("x",)).to_json())
        versions.append(version.id)
    return store.plan_group(5, tuple(versions), "test")
