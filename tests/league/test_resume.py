"""Real leagues in real processes: killed with SIGKILL at random moments, resumed, compared.

The bots are the bundled deterministic ones (``random`` is deterministic per
match too, tested in test_reproducible.py), with a move time far above what
they need, so a result can only depend on the seed.  Every assertion holds wherever the kills land;
the random moments change what is tested, never whether it passes.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from referee.match.packed_result import unpack
from referee.match.result import result_json
from tests.league.files import afresh

REPO = Path(__file__).resolve().parents[2]
BOTS = ("lowest", "longest", "boodle", "tracker", "c")


def league_file(tmp_path: Path, tag: str, *, bankroll: bool = False) -> Path:
    if bankroll:
        head = """
[league]
name = "bankroll test"
format = "bankroll"
seed = 31
table_size = 4
hand_limit = 6

[rules.options]
starting_chips = 16
"""
        bots: tuple[str, ...] = (*BOTS, "lowest", "boodle")
    else:
        head = """
[league]
name = "resume test"
seed = 17
table_size = 3
hand_limit = 12
"""
        bots = BOTS
    text = head + "\n[time_control]\nmove_time = 30.0\nstartup_time = 60.0\n"
    for index, command in enumerate(bots):
        text += (
            f'\n[[bots]]\nname = "{command}-{index}"\ncommand = "{command}"\n'
            f'env = {{ LEAGUE_TEST_TAG = "{tag}" }}\n'
        )
    path = tmp_path / "league.toml"
    path.write_text(text)
    return path


def command(config: Path, db: Path, jobs: int) -> list[str]:
    league = [sys.executable, "-m", "referee.cli", "league", str(config)]
    return [*league, "--db", str(db), "--concurrency", str(jobs), "--json"]


def finished(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True) as connection:
            return int(connection.execute("SELECT COUNT(*) FROM matches").fetchone()[0])
    except sqlite3.Error:
        return 0  # not created yet


def run_to_end(config: Path, db: Path, jobs: int) -> dict[str, object]:
    done = subprocess.run(
        command(config, db, jobs), capture_output=True, text=True, cwd=REPO, check=False
    )
    assert done.returncode == 0, done.stderr
    standings: dict[str, object] = json.loads(done.stdout)
    standings["stderr"] = done.stderr  # for a failure's message; not compared
    return standings


def stored_results(db: Path) -> dict[str, list[dict[str, object]]]:
    """Each finished match's seats as recorded, by match id."""
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT match_id, result FROM matches").fetchall()
    return {match_id: result_json(unpack(result))["seats"] for match_id, result in rows}


def differences(straight: Path, resumed: Path) -> list[str]:
    """Where two databases of one league disagree, seat by seat (for a failure's message)."""
    out = []
    a, b = stored_results(straight), stored_results(resumed)
    for match_id in sorted(a.keys() | b.keys()):
        if match_id not in a or match_id not in b:
            out.append(f"{match_id}: only in {'the straight' if match_id in a else 'the resumed'}")
            continue
        for one, other in zip(a[match_id], b[match_id], strict=True):
            for key in ("place", "chips", "status", "faults", "decisions", "defaults"):
                if one[key] != other[key]:
                    out.append(f"{match_id} seat {one['seat']} {key}: {one[key]} vs {other[key]}")
    return out


def tagged_processes(tag: str) -> list[int]:
    """Live processes whose environment carries ``tag`` (the league's bots)."""
    needle = f"LEAGUE_TEST_TAG={tag}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environ = handle.read()
            with open(f"/proc/{entry}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in environ.split(b"\0") and state != b"Z":
            found.append(int(entry))
    return found


def wait_gone(tag: str, seconds: float = 15.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := tagged_processes(tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


# A real league on a machine the rest of the suite loads: generous, it is not a speed test.
PROGRESS_LIMIT = 300.0


def pause(db: Path, seconds: float, *, most: int) -> None:
    """Wait ``seconds``, or less once more than ``most`` matches are finished.

    A kill's moment is random in time, but bounded in matches: a quiet, quick
    machine plays dozens of matches a second, and a plain sleep let the league
    run on to its end before the last kill (then ``finished(db) < 30`` failed,
    or the run ended by itself), while a loaded one played none.
    """
    end = time.monotonic() + seconds
    while time.monotonic() < end and finished(db) <= most:
        time.sleep(0.005)


def kill_at_random_moments(config: Path, db: Path, rng: random.Random, kills: int) -> None:
    """Start the league ``kills`` times and SIGKILL it each time at a random moment.

    Each run must still be running when it is killed: one that stopped by
    itself (the test's own reads of the database beside it, say) is a failure
    shown with its stderr, not a shorter run that hides it.
    """
    for attempt in range(kills):
        before = finished(db)
        stderr = db.with_name(f"kill-{attempt}.stderr")
        with stderr.open("wb") as errors:
            process = subprocess.Popen(
                command(config, db, 2),
                cwd=REPO,
                stdout=subprocess.DEVNULL,
                stderr=errors,
                start_new_session=True,
            )
        if attempt == 0:
            pause(db, rng.uniform(0.0, 1.5), most=before + 1)  # anywhere, start-up included
        else:
            target = before + rng.randint(1, 4)
            deadline = time.monotonic() + PROGRESS_LIMIT
            while finished(db) < target and process.poll() is None:
                assert time.monotonic() < deadline, "the league made no progress"
                time.sleep(0.02)
            pause(db, rng.uniform(0.0, 0.4), most=target)  # a match may be half played here
        process.kill()
        process.wait()
        assert process.returncode == -signal.SIGKILL, (
            f"run {attempt} ended by itself ({process.returncode}) before it was killed:\n"
            + stderr.read_text(errors="replace")
        )


def test_round_robin_killed_at_random_moments_resumes_to_identical_standings(
    tmp_path: Path,
) -> None:
    tag = uuid.uuid4().hex
    config = league_file(tmp_path, tag)
    db = tmp_path / "killed.db"
    kill_at_random_moments(config, db, random.Random(20240601), kills=3)
    assert finished(db) < 30

    # The same league (its secret deal key) played straight through, from a fresh copy.
    afresh(db, tmp_path / "straight.db")
    expected = run_to_end(config, tmp_path / "straight.db", jobs=1)
    assert expected["finished"] is True and expected["matches_done"] == 30
    resumed = run_to_end(config, db, jobs=2)
    why = resumed.pop("stderr"), expected.pop("stderr")
    assert resumed == expected, (differences(tmp_path / "straight.db", db), why)
    with sqlite3.connect(db) as connection:
        ids = [row[0] for row in connection.execute("SELECT match_id FROM matches")]
    assert len(ids) == len(set(ids)) == 30
    # A killed referee's bots see their stdin close and exit.
    assert wait_gone(tag) == []


def test_bankroll_league_runs_to_its_survivors_and_resumes_after_kill(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    config = league_file(tmp_path, tag, bankroll=True)
    expected = run_to_end(config, tmp_path / "straight.db", jobs=2)
    assert expected["finished"] is True
    rows = expected["standings"]
    assert isinstance(rows, list)
    survivors = [row for row in rows if row["out_round"] is None]
    out = [row for row in rows if row["out_round"] is not None]
    assert 1 <= len(survivors) <= 2 and len(out) >= 5  # the rules' end_players is 2
    # Survivors first by chips, then the rest by the round they went out in.
    assert rows[: len(survivors)] == sorted(survivors, key=lambda r: -r["bankroll"])
    rounds = [row["out_round"] for row in out]
    assert rounds == sorted(rounds, reverse=True)
    with sqlite3.connect(tmp_path / "straight.db") as connection:
        seated = connection.execute(
            "SELECT m.round, COUNT(DISTINCT m.match_id), COUNT(*) FROM matches m "
            "JOIN seats s ON s.match_id = m.match_id GROUP BY m.round ORDER BY m.round"
        ).fetchall()
    assert seated[0] == (1, 2, 7)  # seven bots at tables of 4: a table of 4 and one of 3
    # Rebalanced every round as bots drop out: as few tables of 4 as the survivors need,
    # five at one table of 5 (no table of 2).  How many drop out when is the secret
    # deals' luck; the seating rule is not.
    sizes = {3: 1, 4: 1, 5: 1, 6: 2, 7: 2}  # tables of 4 (3 to 5 seats) for 3 to 7 bots
    assert all(tables == sizes[bots] for _, tables, bots in seated), seated
    assert [bots for _, _, bots in seated] == sorted((bots for _, _, bots in seated), reverse=True)

    db = tmp_path / "killed.db"
    afresh(tmp_path / "straight.db", db)  # the same league: the same secret deals
    kill_at_random_moments(config, db, random.Random(7), kills=2)
    resumed = run_to_end(config, db, jobs=2)
    why = resumed.pop("stderr"), expected.pop("stderr")
    assert resumed == expected, (differences(tmp_path / "straight.db", db), why)


def test_ctrl_c_stops_cleanly_and_standings_can_be_read_while_it_runs(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    config = league_file(tmp_path, tag)
    db = tmp_path / "league.db"
    process = subprocess.Popen(
        command(config, db, 2),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + PROGRESS_LIMIT
    while finished(db) < 3:
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    # Freeze the league (and its bots) while the standings are read, so a quick
    # machine cannot finish all 30 matches before the reader has started.
    os.killpg(process.pid, signal.SIGSTOP)
    try:
        reading = subprocess.run(
            [sys.executable, "-m", "referee.cli", "standings", "--db", str(db), "--json"],
            capture_output=True,
            text=True,
            cwd=REPO,
            check=False,
        )
    finally:
        os.killpg(process.pid, signal.SIGCONT)
    assert reading.returncode == 0, reading.stderr
    midway = json.loads(reading.stdout)
    assert midway["finished"] is False and 3 <= midway["matches_done"] < 30

    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    kept = finished(db)
    assert f"stopped: {kept} matches are finished and kept" in stderr
    assert json.loads(stdout)["matches_done"] == kept
    assert wait_gone(tag, seconds=5.0) == []  # every bot process tree was ended

    resumed = run_to_end(config, db, jobs=2)
    assert resumed["matches_done"] == 30 and resumed["finished"] is True


@pytest.mark.trio
async def test_a_bot_that_crashes_is_warned_about_and_disqualified(tmp_path: Path) -> None:
    from referee.league.league_db import LeagueStore
    from referee.league.league_file import parse_config
    from referee.league.runner import SilentReporter, run_league
    from referee.league.standings import standings_of

    text = """
[league]
seed = 3
table_size = 3
hand_limit = 4
logs = false

[[bots]]
name = "a"
command = "lowest"

[[bots]]
name = "b"
command = "longest"

[[bots]]
name = "dies"
command = ["python3", "-c", "import sys; sys.exit(3)"]
"""
    path = tmp_path / "crash.toml"
    path.write_text(text)
    config = parse_config(text, path)
    reporter = SilentReporter()
    with LeagueStore.for_league(tmp_path / "crash.db", config) as store:
        run = await run_league(config, store, jobs=1, reporter=reporter, handle_signals=False)
        standings = standings_of(store)
    assert run.done == run.total == 3
    # Said once, when its first match ends, and its three matches counted once at the end.
    assert [w for w in reporter.warnings if "dies" in w] == [
        f"{reporter.results[0].match_id}: dies could not start: exited with status 3 before "
        "ready; disqualified here and in each match it cannot start "
        "(one line at the end counts them)",
        "dies could not start in 3 matches of this run, each a disqualification with its "
        f"seat played by the default policy (the first: {reporter.results[0].match_id})",
    ]
    rows = {row.name: row for row in standings.rows}
    assert rows["dies"].disqualifications == 3 and rows["dies"].average_place == 3.0
    assert standings.rows[-1].name == "dies"


def test_a_league_stopped_midway_has_played_every_bot_alike(tmp_path: Path) -> None:
    """Tables are interleaved: stopped anywhere, no bot is far ahead of another.

    The tables of a round robin used to be played in the order they are built,
    every combination holding the first bot first: a league of 9 stopped at 108
    of 504 matches had played 108 of its matches and 38 to 42 of every other's.
    """
    tag = uuid.uuid4().hex
    text = "[league]\nname = 'midway'\nseed = 8\n"
    text += "table_size = 3\nhand_limit = 6\n"
    text += "\n[time_control]\nmove_time = 30.0\nstartup_time = 60.0\n"
    for index, bot in enumerate(("lowest", "longest", "boodle", "tracker", "random") * 2):
        text += (
            f'\n[[bots]]\nname = "{bot}-{index}"\ncommand = "{bot}"\n'
            f'env = {{ LEAGUE_TEST_TAG = "{tag}" }}\n'
        )
    config = tmp_path / "midway.toml"
    config.write_text(text)
    total = 120 * 3  # C(10, 3) tables, 3 rotations each
    db = tmp_path / "midway.db"
    process = subprocess.Popen(
        command(config, db, 2),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + PROGRESS_LIMIT
    while finished(db) < total // 3:
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    standings = json.loads(stdout)
    assert total // 3 <= standings["matches_done"] < total
    played = {row["name"]: row["matches"] for row in standings["standings"]}
    assert len(played) == 10
    # Each table worker plays its own rotations' passes over the same interleaved order
    # (``referee.tables.local_pool``), and a pass keeps every bot within 2 matches of every
    # other wherever it stops (``tests/league/test_schedule.py``).  How far each of the two
    # workers got depends on the machine, so what holds at any stop is 2 per worker.
    assert max(played.values()) - min(played.values()) <= 2 * 2, played
    counted: dict[str, int] = {}
    for seats in stored_results(db).values():
        for seat in seats:
            counted[str(seat["name"])] = counted.get(str(seat["name"]), 0) + 1
    assert counted == played
    assert wait_gone(tag, seconds=5.0) == []
