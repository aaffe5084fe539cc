"""The admission check's matches as a table plays them: a bot cannot tell them from real ones.

Real processes play (bundled bots as the other versions; the version under
test is a Python script), without isolation so the observer can write down
what it saw, with generous limits.  What a bot can look at (SPEC.md's
``match_start``, its process, its parent, its environment) is compared
between the check and a real group played by the server's own table code.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import trio

from referee.bots import BotSpec, resolve_bot
from referee.server import play
from referee.server.admission import admit, play_as_a_table, version_dir
from referee.server.competition import Competition
from referee.server.config import load_config
from referee.server.store import CompetitionStore, Version

OBSERVER = """
import json, os, sys
played = 0
for line in sys.stdin:
    message = json.loads(line)
    kind = message["type"]
    if kind == "hello":
        print(json.dumps({"type": "ready", "name": "eve", "protocol": 1}), flush=True)
    elif kind == "match_start":
        played += 1
        parent = open("/proc/%d/cmdline" % os.getppid(), "rb").read().split(b"\\0")
        seen = {key: message[key] for key in message if key != "type"}
        seen.update(
            nice=os.nice(0),
            parent=[part.decode() for part in parent if part],
            env=sorted(os.environ),
            cwd=os.getcwd(),
            played_before=played - 1,
        )
        with open(SEEN, "a") as out:
            out.write(json.dumps(seen) + "\\n")
    elif kind == "request":
        reply = {"type": "reply", "id": message["id"], "choice": message["default"]}
        print(json.dumps(reply), flush=True)
    elif kind == "shutdown":
        break
"""

# A bot that looks for every sign of a check it can see, behaves when it finds one, and
# answers nonsense otherwise (in what it takes for real play).  The competition's rules
# and seat count are public, so it knows them.
CHECK_AWARE = """
import json, os, re, sys
SCRIPTED = ("by-default", "random-policy", "auctioneer", "hang-up")
checked = False
for line in sys.stdin:
    message = json.loads(line)
    kind = message["type"]
    if kind == "hello":
        print(json.dumps({"type": "ready", "name": "mallory", "protocol": 1}), flush=True)
    elif kind == "match_start":
        names = [name for seat, name in enumerate(message["names"]) if seat != message["seat"]]
        checked = (
            not re.fullmatch(r"g\\d+r\\d+", message["match_id"])
            or any(name.startswith(SCRIPTED) for name in names)
            or message["players"] != 3
            or message["rules"].get("hand_limit") != 3
            or message["move_time_ms"] != 10000
            or os.nice(0) == 0
        )
    elif kind == "request":
        choice = message["default"] if checked else "not-a-card"
        print(json.dumps({"type": "reply", "id": message["id"], "choice": choice}), flush=True)
    elif kind == "shutdown":
        break
"""


def _competition(tmp_path: Path) -> Competition:
    path = tmp_path / "cup.toml"
    path.write_text(
        '[competition]\nname = "Cup"\nhouse_bots = ["random"]\n'
        "[server]\njobs = 2\n"
        "[tables]\nplayers = 3\nhand_limit = 3\n"
        "[time_control]\nmove_time = 10.0\nstartup_time = 30.0\n"
        '[sandbox]\nlevel = "none"\n'
    )
    config = load_config(path)
    competition = Competition(config, CompetitionStore.open(config.database))
    competition.ensure_house_bots(config.house_bots)
    alice, _token = competition.store.add_participant("alice")
    version = competition.store.add_version(alice.id, "python3", "main.py", "", 1)
    spec = resolve_bot("lowest", "alice-v1").to_json()
    competition.store.decide(version.id, "admitted", "a bundled bot", "", spec)
    return competition


def _upload(competition: Competition, name: str, source: str) -> tuple[Version, BotSpec]:
    """A participant's version whose files are ``main.py`` (as unpacked), pending."""
    store = competition.store
    participant, _token = store.add_participant(name)
    version = store.add_version(participant.id, "python3", "main.py", "", len(source))
    files = version_dir(competition.config, version)
    files.mkdir(parents=True)
    (files / "main.py").write_text(source)
    return version, BotSpec(f"{name}-v1", (sys.executable, "main.py"), cwd=files)


async def test_a_bot_sees_the_same_in_the_checks_table_play_as_at_a_real_table(
    tmp_path: Path,
) -> None:
    competition = _competition(tmp_path)
    store = competition.store
    seen = tmp_path / "seen.jsonl"
    version, spec = _upload(competition, "eve", OBSERVER.replace("SEEN", repr(str(seen))))
    with trio.fail_after(300):
        checked = await play_as_a_table(competition.config, store, version, spec)
    assert checked.failure is None and len(checked.matches) == 3
    in_check = [json.loads(line) for line in seen.read_text().splitlines()]
    seen.unlink()

    store.decide(version.id, "admitted", "ok", "", spec.to_json())
    queue = play.GroupQueue(competition)
    group, done = await queue.next_group()
    assert version.id in group.versions
    table = await play.local_tables(competition)(1)
    try:
        with trio.fail_after(300):
            await play.play_group(competition, table, 1, group, done)
    finally:
        await table.aclose()
    in_play = [json.loads(line) for line in seen.read_text().splitlines()]
    assert len(in_check) == len(in_play) == 3

    def looks(observations: list[dict[str, object]], key: str) -> list[str]:
        return sorted({json.dumps(seen[key], sort_keys=True) for seen in observations})

    for key in (
        "players",
        "rules",
        "chips",
        "move_time_ms",
        "time_bank_ms",
        "nice",
        "parent",
        "env",
        "cwd",
        "played_before",
        "seat",
    ):
        assert looks(in_check, key) == looks(in_play, key), key
    for observed in (*in_check, *in_play):
        assert re.fullmatch(r"g\d+r\d+", str(observed["match_id"]))
        names = observed["names"]
        assert isinstance(names, list) and names[int(str(observed["seat"]))] == "eve-v1"
        assert sorted(names) == ["alice-v1", "eve-v1", "house:random"]
    # The check's match ids are the ones a table could be about to play.
    check_group = int(re.findall(r"\d+", str(in_check[0]["match_id"]))[0])
    assert 1 <= check_group <= group.id + competition.config.jobs
    store.close()


async def test_a_check_aware_bot_is_rejected_at_the_checks_table_play(tmp_path: Path) -> None:
    competition = _competition(tmp_path)
    store = competition.store
    version, _spec = _upload(competition, "mallory", CHECK_AWARE)
    with trio.fail_after(600):
        assert not await admit(competition.config, store, version)
    decided = store.version(version.id)
    assert decided is not None and decided.status == "rejected"
    # It saw through newmarket check's scripted matches and behaved there...
    assert "PASS:" in decided.transcript
    # ...and took the table play for real play: its first match there is its fault.
    assert re.fullmatch(r"check: play: g\d+r0: \w+ fault: .+", decided.detail), decided.detail
    assert store.check_play(version.id) is None
    store.close()
