"""An organiser's data under /opt or /etc is out of every bot's view, and private on disk.

A league or a competition installed under ``/opt`` or ``/etc`` (where an
organiser may well put one) was in every bot's view: the sandbox showed both
trees whole, and a bot read the competition file, the database with the
server's signing secret, another participant's upload and the match logs.
Here each is installed there for real (and removed after) and attacked from
inside its bots under ``--sandbox auto``: the league by the attack bots of
``test_isolation`` (league file, database, tokens, another bot's directory,
the live logs), the competition by an uploaded bot (competition file,
database, another participant's upload, logs).  Every read is refused, the
installation's name is not even in a listing of ``/opt`` or ``/etc``, and
what the league and the server created is 0700 (directories) / 0600 (files).
As root (each bot its own uid) and, for the league, as an unprivileged
operator (``nobody``, where this machine can run the referee so).
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import secrets
import shutil
import sqlite3
import stat
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from referee.sandbox.isolation import ETC_ACCOUNTS, ETC_SHOWN
from tests.hostile.test_isolation import (
    NEEDS_ISOLATION,
    UNPRIVILEGED,
    check_attacks,
    play_attack_league,
    refused,
    unprivileged_wrapper,
)
from tests.match_logs import kept_logs, log_text
from tests.server.serving import (
    BOTS,
    add_participant,
    competition_file,
    running,
    uploaded,
    version_status,
    wait_until,
)

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes"),
    NEEDS_ISOLATION,
]
BASES = ("/opt", "/etc")


@contextlib.contextmanager
def installed(base: str, owner: int | None = None) -> Iterator[Path]:
    """A fresh directory under ``base`` (owned by ``owner``), removed afterwards whatever happens.

    Skips, saying why, where this user cannot write ``base``.
    """
    if not os.path.isdir(base) or not os.access(base, os.W_OK):
        pytest.skip(f"cannot install under {base} as this user (needs root)")
    home = Path(base) / f"newmarket-test-{secrets.token_hex(4)}"
    home.mkdir(mode=0o755)
    try:
        if owner is not None:
            os.chown(home, owner, owner)
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def assert_private(paths: list[Path]) -> None:
    """Every directory 0700, every file 0600 (and at least one of each was checked)."""
    assert any(path.is_dir() for path in paths) and any(path.is_file() for path in paths)
    for path in paths:
        assert mode(path) == (0o700 if path.is_dir() else 0o600), (path, oct(mode(path)))


def assert_listing(said: str, directory: Path | str, shown: set[str]) -> None:
    """Each listing of ``directory`` the bot made names nothing but ``shown``.

    A bot's view has its working directory at its real path, so the directories on
    the way there appear, each holding just the next one and nothing of the host's.
    """
    listed = re.findall(rf"^listed {re.escape(str(directory))}: (.*)$", said, re.MULTILINE)
    assert listed or re.search(rf"^TRIED list {re.escape(str(directory))}: refused", said, re.M)
    for names in listed:
        assert set(ast.literal_eval(names)) <= shown, (directory, names)


def shown_of(base: str) -> set[str]:
    """What a (Python) bot's view shows in ``base`` besides the way to its own directory."""
    if base != "/etc":
        return set()
    return {Path(name).relative_to(base).parts[0] for name in (*ETC_SHOWN, *ETC_ACCOUNTS)}


def league_files(home: Path) -> list[Path]:
    logs = home / "league-logs"
    return [
        home / "league.db",
        home / "league.db.lock",
        logs,
        logs / "stderr",
        *kept_logs(logs),
        *(logs / "stderr").iterdir(),
    ]


@pytest.mark.skipif(os.geteuid() != 0, reason="the root variant needs a root referee")
@pytest.mark.parametrize("base", BASES)
def test_a_league_under_opt_or_etc_is_out_of_its_root_referees_bots_view(base: str) -> None:
    with installed(base) as home:
        outcome = play_attack_league(home, [], also_list=[base])
        check_attacks(outcome, home)
        assert "own uid per bot" in outcome["referee"]
        said = outcome["stderr"]["read_files"]
        assert_listing(said, base, {home.name, *shown_of(base)})  # the way to its cwd...
        assert_listing(said, home, set())  # ...which shows nothing of the league
        assert_private(league_files(home))


@pytest.mark.parametrize("base", BASES)
def test_a_league_under_opt_or_etc_is_out_of_an_unprivileged_referees_bots_view(
    base: str,
) -> None:
    with installed(base, owner=UNPRIVILEGED if os.geteuid() == 0 else None) as home:
        wrapper, why = unprivileged_wrapper(home)
        if why:
            pytest.skip(why)
        outcome = play_attack_league(home, wrapper, also_list=[base])
        check_attacks(outcome, home)
        assert "the referee is not root" in outcome["referee"]
        said = outcome["stderr"]["read_files"]
        assert_listing(said, base, {home.name, *shown_of(base)})  # the way to its cwd...
        assert_listing(said, home, set())  # ...which shows nothing of the league
        assert_private(league_files(home))


# The competition's attacker: it knows where everything is (the test tells it, as a
# participant who guessed the layout from the docs would), reads and lists it all before its
# handshake (in the admission check, and at every table: its stderr there is in the logs),
# then plays each default.
ATTACKER = """
import json, os, sys

TARGETS = json.loads({targets!r})


def say(text):
    sys.stderr.write(text + "\\n")
    sys.stderr.flush()


for path in TARGETS["files"]:
    try:
        with open(path, "rb") as handle:
            data = handle.read(1 << 20)
    except OSError as error:
        say(f"TRIED read {{path}}: refused: {{error.strerror}}")
    else:
        say(f"TRIED read {{path}}: succeeded: {{data[:4000]!r}}")
for path in TARGETS["dirs"]:
    try:
        names = os.listdir(path)
    except OSError as error:
        say(f"TRIED list {{path}}: refused: {{error.strerror}}")
    else:
        say(f"TRIED list {{path}}: succeeded")
        say(f"listed {{path}}: {{sorted(names)}}")
say("ATTACK DONE")
for line in sys.stdin:
    message = json.loads(line)
    kind = message.get("type")
    if kind == "hello":
        print(json.dumps({{"type": "ready", "name": "snoop", "protocol": 1}}), flush=True)
    elif kind == "request":
        reply = {{"type": "reply", "id": message["id"], "choice": message["default"]}}
        print(json.dumps(reply), flush=True)
    elif kind == "shutdown":
        break
"""


def kept_stderr(logs: Path) -> str:
    """Everything the server kept of its bots' stderr: the capped ``stderr`` record of each
    match log (the server keeps no stderr file of its own per bot process)."""
    texts = []
    for log in kept_logs(logs, recursive=True):
        for line in log_text(log).splitlines():
            record = json.loads(line)
            if record.get("type") == "stderr":
                texts.append(record["text"])
    return "\n".join(texts)


@pytest.mark.skipif(os.geteuid() != 0, reason="the root variant needs a root server")
@pytest.mark.parametrize("base", BASES)
def test_a_competition_under_opt_or_etc_is_out_of_its_bots_view(base: str, tmp_path: Path) -> None:
    planted = f"NMSECRET-{secrets.token_hex(8)}"
    with installed(base) as home:
        config = competition_file(home, house=("random",), extra=f"# {planted}\n")
        data = home / "cup-data"
        tokens = {name: add_participant(config, name) for name in ("alice", "mallory")}
        with running(config) as server:
            alice_bot = tmp_path / "main.py"
            alice_bot.write_text((BOTS / "plain.py").read_text() + f"# {planted}\n")
            alice = uploaded(server, tokens["alice"], alice_bot)
            assert wait_until("alice's admission", partial(version_status, server, alice)) == (
                "admitted"
            )
            theirs = data / "versions" / f"{alice:06d}"
            targets = {
                "files": [
                    str(config),
                    str(data / "competition.sqlite"),
                    str(data / "competition.sqlite-wal"),
                    str(theirs / "files" / "main.py"),
                    str(theirs / "upload"),
                ],
                "dirs": [str(data / "logs"), str(data / "versions"), str(data), str(home), base],
            }
            snoop = tmp_path / "snoop" / "main.py"
            snoop.parent.mkdir()
            snoop.write_text(ATTACKER.format(targets=json.dumps(targets)))
            mallory = uploaded(server, tokens["mallory"], snoop)
            assert wait_until(
                "the snoop's admission", partial(version_status, server, mallory)
            ) == ("admitted")

            def snoop_played() -> bool:
                rows = server.get("/api/leaderboard")["rows"]
                return any(row["version"] == mallory and row["matches"] > 0 for row in rows)

            wait_until("the snoop's first match", snoop_played)
        said = kept_stderr(data / "logs")
        assert "ATTACK DONE" in said
        with sqlite3.connect(data / "competition.sqlite") as db:
            (secret,) = db.execute("SELECT value FROM meta WHERE key = 'secret'").fetchone()
        assert planted not in said and secret not in said
        for path in targets["files"]:
            refused(said, f"read {path}")
        refused(said, f"list {data / 'logs'}")
        # The way to its own directory, and nothing else of the competition's.
        assert_listing(said, data / "versions", {f"{mallory:06d}"})
        assert_listing(said, data, {"versions"})
        assert_listing(said, home, {"cup-data"})
        assert_listing(said, base, {home.name, *shown_of(base)})
        # On disk: the data directory and all of the server's own files are the organiser's
        # alone; a version's unpacked files stay readable to the uid its bot runs as.
        logs = data / "logs"
        assert_private(
            [
                data,
                data / "competition.sqlite",
                data / "versions",
                theirs,
                theirs / "upload",
                logs,
                *logs.rglob("*"),
            ]
        )
        assert mode(theirs / "files") == 0o755 and mode(theirs / "files" / "main.py") == 0o644
