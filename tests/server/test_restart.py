"""kill -9 of the server mid-match, then a restart: nothing lost, nothing doubled.

As the league's resume is tested (tests/league/test_resume.py): a real
server in a real process, killed with SIGKILL while its tables play, then
started again on the same competition.  Every match recorded before the
kill is still there, unchanged; the groups it had begun are finished (their
missing rotations only); no match id or seat is stored twice.
"""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path

from tests.server.serving import (
    BOTS,
    add_participant,
    competition_file,
    running,
    start,
    uploaded,
    version_status,
    wait_until,
)


def snapshot(db: Path) -> dict[str, str]:
    with sqlite3.connect(db) as connection:
        return dict(connection.execute("SELECT match_id, result FROM matches"))


def test_a_restart_after_kill_9_loses_and_doubles_nothing(tmp_path: Path) -> None:
    config = competition_file(tmp_path, house=("lowest", "random"))
    token = add_participant(config, "alice")
    db = tmp_path / "cup-data" / "competition.sqlite"
    server = start(config)
    try:
        version = uploaded(server, token, BOTS / "plain.py")
        assert wait_until("admission", lambda: version_status(server, version)) == "admitted"
        wait_until("a dozen matches", lambda: server.get("/api/leaderboard")["matches"] >= 12)
        wait_until("a table mid-match", lambda: server.get("/api/leaderboard")["tables_playing"])
    finally:
        server.kill(signal.SIGKILL)
    before = snapshot(db)
    assert len(before) >= 12
    # Uploads the kill cut mid-write: their request's `finally` never ran.
    incoming = db.parent / "incoming"
    incoming.mkdir(exist_ok=True)
    for name in ("4f2a9c0d11e3b7a5", "a0b1c2d3e4f50617"):
        (incoming / name).write_bytes(b"x" * 4096)

    with running(config) as again:
        assert list(incoming.iterdir()) == []  # cleared before the server said it was ready
        assert (
            "newmarket serve: removed 2 temporary upload file(s) that an earlier stop cut "
            f"short, from {incoming}\n"
        ) in again.before_ready
        wait_until(
            "matches after the restart",
            lambda: again.get("/api/leaderboard")["matches"] >= len(before) + 9,
        )
    after = snapshot(db)
    for match_id, result in before.items():
        assert after[match_id] == result  # nothing lost or rewritten
    with sqlite3.connect(db) as connection:
        doubled = connection.execute(
            "SELECT match_id, seat, COUNT(*) FROM seats GROUP BY match_id, seat HAVING COUNT(*) > 1"
        ).fetchall()
        assert doubled == []
        groups = connection.execute(
            "SELECT g.id, COUNT(m.match_id), json_array_length(g.versions) FROM groups g "
            "LEFT JOIN matches m ON m.group_id = g.id GROUP BY g.id ORDER BY g.id"
        ).fetchall()
    # Every group begun before the kill was finished after it (the last two may be in
    # progress when the second server stopped: one per table).
    begun_before = {int(mid[1:].split("r")[0]) for mid in before}
    for gid, played, seats in groups:
        if gid in begun_before:
            assert played == seats, f"group {gid}: {played} of {seats} rotations"
    assert sum(1 for _gid, played, seats in groups if played < seats) <= 2
