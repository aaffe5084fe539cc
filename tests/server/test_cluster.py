"""``newmarket serve --cluster``: the tables on Dask workers, the roster growing as it plays.

``local:1`` starts a Dask worker process beside the server, as the league's
cluster tests do: the three house bots play from the start, and a version
admitted later plays on the same worker's tables (each match names the specs
of the versions at its table, so a worker learns a new version when it is
first seated).
"""

from __future__ import annotations

import subprocess
from functools import partial
from pathlib import Path

from tests.clirun import newmarket
from tests.server.serving import (
    BOTS,
    Server,
    add_participant,
    competition_file,
    running,
    uploaded,
    version_status,
    wait_until,
)


def played(server: Server, participant: str) -> int:
    rows = server.get("/api/leaderboard")["rows"]
    return sum(int(row["matches"]) for row in rows if row["participant"] == participant)


def test_a_local_cluster_plays_the_house_and_then_a_new_version(tmp_path: Path) -> None:
    config = competition_file(tmp_path, house=("random", "lowest", "tracker"))
    token = add_participant(config, "alice")
    with running(config, "--cluster", "local:1", "--jobs", "1") as server:
        assert "1 tables on the Dask cluster local:1)" in server.log[0]
        wait_until("the house's first group", lambda: played(server, "house:random") >= 3)
        version = uploaded(server, token, BOTS / "plain.py")
        assert wait_until("admission", partial(version_status, server, version)) == "admitted"
        wait_until("alice's first group on the cluster", lambda: played(server, "alice") >= 3)
        # No table worker runs in the server's own process tree: the cluster's workers play.
        children = subprocess.run(
            ["ps", "-o", "args=", "--ppid", str(server.process.pid)],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        assert "referee.tables.worker" not in children


def test_a_bad_cluster_option_is_one_line_and_exit_2(tmp_path: Path) -> None:
    config = competition_file(tmp_path)
    # In this process, as the console script runs it (tests.clirun): refused before serving.
    code, _out, err = newmarket("serve", str(config), "--port", "0", "--cluster", "local:zero")
    assert code == 2
    assert err.strip() == (
        "error: --cluster local:zero: local:N needs a whole number of workers >= 1"
    )
