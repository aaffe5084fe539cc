"""A verified replay covers the whole log: every kind of line, changed, fails at its line.

One real ``play_match`` on the virtual clock writes a log with every kind of
line: a bot that makes each mistake the referee judges from a line it sent
(a malformed line, one that is not UTF-8, an illegal card, a timeout and its
late reply, a second reply, an unknown id, a ``ready`` mid-match), and one
that is disqualified in the last hand and hangs up, so telling it the end
fails (a ``lost`` line).  Then each line of each kind is changed as a
careless or dishonest hand would, and the replay must fail naming that line,
or, for what no line can confirm, list the line as not verifiable.  A
``newmarket match`` of real processes adds a ``stderr`` line, and the same
log without its transcript is a format 1 log, which still replays.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from engine import preset
from referee.match.log import LogError
from referee.match.referee import play_match
from referee.tools.replay import Replay, verify_log
from referee.transport.timecontrol import TimeControl
from tests.match_logs import only_log
from tests.referee.fakes import FakeWire, Message, fake_table, randomly

RULES = preset("boodle").with_options({"hand_limit": 4})
CONTROL = TimeControl(max_faults=12)
ROOT = Path(__file__).resolve().parents[2]


async def troublemaker(wire: FakeWire, request: Message) -> None:
    """Each request a different mistake, then (mostly) a proper reply."""
    number, rid = wire.requests, request["id"]
    default = request["default"]
    if number == 2:
        await wire.raw(b"{oops\n")  # malformed: settles the request; the reply is late
    elif number == 3:
        await wire.raw(b"\xff\xfe not utf-8\n")
    elif number == 4:
        # A timeout (past the time left and the margin); its reply comes late.
        await trio.sleep((request["time_left_ms"] + CONTROL.margin_ms + 50) / 1000)
    elif number == 5:
        await wire.reply(request, default)  # a second reply, judged at the next request
    elif number == 6:
        await wire.send({"type": "ready", "name": "again", "protocol": 1})
    elif number == 7:
        await wire.send({"type": "reply", "id": rid + 100, "choice": default})
    elif (
        number >= 8
        and request["decision"] == "lead"
        and "2C" not in request["legal"]
        and not any(fault["kind"] == "illegal" for fault in wire.of_type("fault"))
    ):
        await wire.reply(request, "2C")  # a card it may not lead: illegal (once)
        return
    await wire.reply(request, default)


async def quitter(wire: FakeWire, request: Message) -> None:
    """Plays the default until the last hand; there, a dozen ``ready`` lines get it
    disqualified, and once told so it hangs up: telling it the end then fails."""
    hands = [e for e in wire.events() if e["type"] == "hand_started"]
    if not hands or hands[-1]["hand_number"] < RULES.hand_limit:
        await wire.reply(request, request["default"])
        return
    ready = json.dumps({"type": "ready", "name": "q", "protocol": 1}).encode() + b"\n"
    await wire.raw(ready * CONTROL.max_faults)
    seen = b""
    while b'"disqualified":true' not in seen:
        seen += await wire.stream.receive_some(65536)
    await wire.close()


async def write_log(path: Path, seed: int) -> None:
    policies = [randomly(1), troublemaker, quitter, randomly(3)]
    async with fake_table(policies, CONTROL) as (sessions, _wires):
        await play_match(sessions, RULES, seed, time_control=CONTROL, match_id="w", log_path=path)


def kinds_of(path: Path) -> dict[str, list[int]]:
    """Each record type's line numbers (from 1)."""
    found: dict[str, list[int]] = {}
    for number, line in enumerate(path.read_bytes().splitlines(), start=1):
        found.setdefault(json.loads(line)["type"], []).append(number)
    return found


@pytest.fixture(scope="module")
def full_log(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("whole") / "w.jsonl"
    trio.run(write_log, path, 11, clock=trio.testing.MockClock(autojump_threshold=0))
    return path.read_bytes()


def written(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "w.jsonl"
    path.write_bytes(data)
    return path


def test_the_log_has_every_kind_of_line_and_verifies_listing_what_it_cannot(
    full_log: bytes, tmp_path: Path
) -> None:
    path = written(tmp_path, full_log)
    kinds = kinds_of(path)
    every = {"header", "chance", "event", "request", "reply", "late", "fault", "decision"}
    assert every | {"sent", "received", "lost", "result"} <= set(kinds), sorted(kinds)
    records = [json.loads(line) for line in full_log.splitlines()]
    faults = [record for record in records if record["type"] == "fault"]
    assert {f["kind"] for f in faults} >= {"malformed", "protocol", "timeout", "illegal"}
    assert any(b'"line_base64"' in line for line in full_log.splitlines())
    replay = verify_log(path)
    assert replay.transcript
    listed = {(item.line, item.kind) for item in replay.unverifiable}
    assert (1, "header") in listed and (kinds["result"][0], "result") in listed
    assert (kinds["lost"][0], "lost") in listed
    # Everything else on a line of its own was checked: only these kinds are listed by line.
    assert {kind for line, kind in listed if line is not None} <= {
        "header",
        "result",
        "lost",
        "received",  # the non-UTF-8 line's bytes, beyond what the fault quotes
    }


# --------------------------------------------------------------------------- tampering


def _edit_record(edit: Callable[[dict[str, Any]], None]) -> Callable[[bytes], bytes]:
    def change(raw: bytes) -> bytes:
        record = json.loads(raw)
        edit(record)
        return msgspec.json.encode(record) + b"\n"

    return change


def _sent(raw: bytes) -> bytes:
    """Change what the seat was sent: a byte of its message, or an event of its batch."""
    record = msgspec.json.decode(raw, type=dict[str, Any])
    text = raw.decode()
    last = record["lines"][-1]
    if isinstance(last, dict):  # a message, kept as the bytes sent: a space into them
        at = text.index('{"type":"', text.index('"lines":'))
        return (text[: at + 1] + " " + text[at + 1 :]).encode()
    # An events batch, each event by its number: name the next event instead of the last.
    numbers = [item for item in last if isinstance(item, int)]
    assert numbers, text
    old = f"{numbers[-1]}]"
    at = text.rindex(old)
    return (text[:at] + f"{numbers[-1] + 1}]" + text[at + len(old) :]).encode()


def _received(raw: bytes) -> bytes:
    record = json.loads(raw)
    if "line" in record:
        record["line"] = "x" + record["line"]
    else:
        record["line_base64"] = base64.b64encode(b"x" + base64.b64decode(record["line_base64"]))
        record["line_base64"] = record["line_base64"].decode()
    return msgspec.json.encode(record) + b"\n"


def _request(record: dict[str, Any]) -> None:
    record["time_left_ms"] += 1


def _reply(record: dict[str, Any]) -> None:
    record["id"] += 1


def _late(record: dict[str, Any]) -> None:
    record["choice"] = "XX" if record["choice"] != "XX" else "YY"


def _fault(record: dict[str, Any]) -> None:
    record["detail"] += "!"


def _decision(record: dict[str, Any]) -> None:
    record["by"] = "default" if record["by"] == "bot" else "bot"


def _event(record: dict[str, Any]) -> None:
    record["n"] += 1


def _chance(record: dict[str, Any]) -> None:
    record["dead"] = record["dead"][::-1] if len(set(record["dead"])) > 1 else ["2C"]


def _result(record: dict[str, Any]) -> None:
    record["seats"][0]["net_chips"] += 1


CHANGES: dict[str, Callable[[bytes], bytes]] = {
    "sent": _sent,
    "received": _received,
    "request": _edit_record(_request),
    "reply": _edit_record(_reply),
    "late": _edit_record(_late),
    "fault": _edit_record(_fault),
    "decision": _edit_record(_decision),
    "event": _edit_record(_event),
    "chance": _edit_record(_chance),
    "result": _edit_record(_result),
}


def names_line(error: LogError, number: int) -> bool:
    """The error is at ``number``, or names it as the line it disagrees with."""
    return error.line == number or re.search(rf"\bline {number}\b", str(error)) is not None


@pytest.mark.parametrize("kind", sorted(CHANGES))
def test_a_changed_line_of_each_kind_fails_naming_its_line(
    full_log: bytes, tmp_path: Path, kind: str
) -> None:
    lines = full_log.splitlines(keepends=True)
    numbers = kinds_of(written(tmp_path, full_log))[kind]
    # Every line of the rarer kinds; a spread of the common ones (each a whole replay).
    chosen = numbers if len(numbers) <= 12 else numbers[:: len(numbers) // 12]
    for number in chosen:
        changed = [*lines]
        changed[number - 1] = CHANGES[kind](lines[number - 1])
        assert changed != lines
        path = written(tmp_path, b"".join(changed))
        with pytest.raises(LogError) as caught:
            verify_log(path)
        assert names_line(caught.value, number), (number, str(caught.value))


def test_a_time_that_goes_back_fails_at_its_line(full_log: bytes, tmp_path: Path) -> None:
    lines = full_log.splitlines(keepends=True)
    numbers = kinds_of(written(tmp_path, full_log))
    for number in [numbers["sent"][5], numbers["received"][3]]:
        changed = [*lines]
        changed[number - 1] = _edit_record(lambda record: record.update(t=-1.0))(lines[number - 1])
        with pytest.raises(LogError, match="before the previous line's") as caught:
            verify_log(written(tmp_path, b"".join(changed)))
        assert caught.value.line == number


def test_a_removed_received_line_fails_where_it_was(full_log: bytes, tmp_path: Path) -> None:
    lines = full_log.splitlines(keepends=True)
    number = kinds_of(written(tmp_path, full_log))["received"][4]
    path = written(tmp_path, b"".join(lines[: number - 1] + lines[number:]))
    with pytest.raises(LogError, match="with no line received from it before") as caught:
        verify_log(path)
    assert caught.value.line == number  # the reply now sits on the missing line


def test_what_no_line_confirms_changes_nothing_but_is_listed(
    full_log: bytes, tmp_path: Path
) -> None:
    lines = full_log.splitlines(keepends=True)
    kinds = kinds_of(written(tmp_path, full_log))
    changed = [*lines]
    lost = kinds["lost"][0]
    changed[lost - 1] = _edit_record(lambda r: r.update(detail="a story"))(lines[lost - 1])
    replay = verify_log(written(tmp_path, b"".join(changed)))
    assert any(item.line == lost and item.kind == "lost" for item in replay.unverifiable)


def test_a_format_1_log_without_its_transcript_still_replays(
    full_log: bytes, tmp_path: Path
) -> None:
    kept = []
    for line in full_log.splitlines(keepends=True):
        record = json.loads(line)
        if record["type"] in ("sent", "received", "lost"):
            continue
        if record["type"] == "header":
            record["format"] = 1
            line = msgspec.json.encode(record) + b"\n"
        kept.append(line)
    replay: Replay = verify_log(written(tmp_path, b"".join(kept)))
    assert not replay.transcript
    assert any(item.kind == "transcript" for item in replay.unverifiable)


def test_a_real_match_with_stderr_verifies_and_lists_its_stderr_line(tmp_path: Path) -> None:
    closer = f"{sys.executable} -m tests.hostile.proto_bots.reply_then_close"
    subprocess.run(
        [sys.executable, "-m", "referee.cli", "match", "--bot", "random", "--bot", "lowest",
         "--bot", closer, "--seed", "4", "--hands", "3", "--sandbox", "none",
         "--log-dir", str(tmp_path / "real")],
        cwd=ROOT, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    log = only_log(tmp_path / "real")
    kinds = kinds_of(log)
    assert "stderr" in kinds, sorted(kinds)
    replay = verify_log(log)
    listed = {(item.line, item.kind) for item in replay.unverifiable}
    assert (kinds["stderr"][0], "stderr") in listed
    eof = [n for n in kinds["fault"] if b'"kind":"eof"' in log.read_bytes().splitlines()[n - 1]]
    assert eof and (eof[0], "fault") in listed  # what the OS said of the closed stream
    out = subprocess.run(
        [sys.executable, "-m", "referee.cli", "replay", str(log)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert f"  line {kinds['stderr'][0]} (stderr): what seat 2 wrote to its stderr" in out.stdout


def test_a_value_swapped_for_an_equal_one_or_a_field_added_fails_at_its_line(
    full_log: bytes, tmp_path: Path
) -> None:
    lines = full_log.splitlines(keepends=True)
    kinds = kinds_of(written(tmp_path, full_log))
    edits: list[tuple[int, Callable[[dict[str, Any]], None]]] = [
        (kinds["decision"][3], lambda r: r.update(seat=r["seat"] == 1)),  # true == 1
        (kinds["fault"][0], lambda r: r.update(count=float(r["count"]))),  # 1.0 == 1
        (kinds["request"][2], lambda r: r.update(hand=r["hand"] + 1)),  # another hand
        (kinds["reply"][1], lambda r: r.update(note="fine")),  # a field of its own
        (kinds["received"][2], lambda r: r.update(t=int(r["t"]))),  # 0 == 0.0
    ]
    for number, edit in edits:
        changed = [*lines]
        changed[number - 1] = _edit_record(edit)(lines[number - 1])
        with pytest.raises(LogError) as caught:
            verify_log(written(tmp_path, b"".join(changed)))
        assert caught.value.line == number, str(caught.value)
    # Respelled, the same record: not as the referee writes it.
    number = kinds["event"][4]
    changed = [*lines]
    changed[number - 1] = lines[number - 1].replace(b'":', b'": ', 1)
    with pytest.raises(LogError, match="not as the referee writes a line") as caught:
        verify_log(written(tmp_path, b"".join(changed)))
    assert caught.value.line == number
