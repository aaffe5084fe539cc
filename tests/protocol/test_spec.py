"""SPEC.md cannot drift: every example in it is checked against the message types.

A bot author reads SPEC.md and nothing else, so each JSON example there must
be exactly what a referee sends or accepts: every ``json`` block is decoded as
messages or events and compared with its canonical form (so an unknown or
missing field shows up), the generated sections must match the engine, the
transcript must be what the engine plays, and the awk bot of section 1 must
really answer every request of that transcript.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from typing import Any

import msgspec
import pytest

from engine import Rules
from protocol.events import EVENT_TAGS, Event
from protocol.faults import FaultKind
from protocol.framing import MAX_LINE_BYTES
from protocol.messages import (
    BOT_MESSAGE_TYPES,
    PROTOCOL_VERSION,
    REFEREE_MESSAGE_TYPES,
    BotMessage,
    RefereeMessage,
    Request,
    decode_bot_message,
    decode_referee_message,
)
from protocol.timing import (
    DEFAULT_MARGIN_MS,
    DEFAULT_MOVE_TIME_MS,
    DEFAULT_SHUTDOWN_GRACE_MS,
    DEFAULT_STARTUP_MS,
    DEFAULT_TIME_BANK_MS,
)
from tests.protocol.spec_sections import SECTIONS, SPEC_PATH, generated_sections
from tests.protocol.transcript import play

SPEC = SPEC_PATH.read_text(encoding="utf-8")
FENCE = re.compile(r"^```(?P<info>[a-z]*)\n(?P<body>.*?)^```$", re.DOTALL | re.MULTILINE)
BLOCKS = [(m["info"], m["body"]) for m in FENCE.finditer(SPEC)]
JSON_BLOCKS = [body for info, body in BLOCKS if info == "json"]


def _values_in(body: str) -> list[Any]:
    """A json block is one JSON value, or one JSON value per non-blank line."""
    try:
        return [msgspec.json.decode(body)]
    except msgspec.DecodeError:
        return [msgspec.json.decode(line) for line in body.splitlines() if line.strip()]


EXAMPLES = [value for body in JSON_BLOCKS for value in _values_in(body)]


def _canonical(value: dict[str, Any]) -> Any:
    """``value`` read as the message or event its type names, then written back as plain data."""
    tag = value["type"]
    target: Any
    if tag in REFEREE_MESSAGE_TYPES:
        target = RefereeMessage
    elif tag in BOT_MESSAGE_TYPES:
        target = BotMessage
    elif tag in EVENT_TAGS:
        target = Event
    else:
        raise AssertionError(f"SPEC.md example of unknown type {tag!r}: {value}")
    return msgspec.json.decode(msgspec.json.encode(msgspec.convert(value, target, strict=True)))


def test_spec_states_the_protocol_version() -> None:
    assert f"**Protocol version {PROTOCOL_VERSION}.**" in SPEC


def test_every_fenced_block_is_of_a_known_kind() -> None:
    kinds = {info for info, _ in BLOCKS}
    assert kinds <= {"json", "awk", "text", "transcript"}, kinds
    assert len(JSON_BLOCKS) >= 30


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: str(e.get("type")))
def test_every_json_example_is_a_valid_message_or_event(example: Any) -> None:
    assert isinstance(example, dict)
    assert _canonical(example) == example, "the example has unknown, missing or extra fields"


def test_every_message_and_event_type_has_an_example() -> None:
    shown = {example["type"] for example in EXAMPLES}
    assert shown >= REFEREE_MESSAGE_TYPES | BOT_MESSAGE_TYPES | EVENT_TAGS


def test_every_decision_kind_has_a_request_example() -> None:
    shown = {e["decision"] for e in EXAMPLES if e["type"] == "request"}
    assert shown == {"stake", "dead_hand", "bid", "lead"}


def test_request_examples_keep_their_promises() -> None:
    for example in EXAMPLES:
        if example["type"] != "request":
            continue
        request = msgspec.convert(example, Request)
        assert request.time_left_ms >= request.time_bank_ms
        if request.decision == "lead":
            assert request.default == request.legal[0]
            assert set(request.legal) <= set(request.hand)
        if request.decision == "dead_hand":
            assert request.default == "keep" and "keep" in request.legal


def test_match_start_examples_carry_every_real_rule_option() -> None:
    starts = [e for e in EXAMPLES if e["type"] == "match_start"]
    assert starts
    for start in starts:
        assert start["rules"] == Rules.from_dict(start["rules"]).to_dict()
        assert set(start["rules"]) == set(Rules().to_dict())


def test_every_fault_kind_is_in_the_fault_table() -> None:
    for kind in FaultKind:
        assert f"| `{kind.value}` |" in SPEC, kind


def test_the_spec_states_the_limits_the_code_uses() -> None:
    assert f"{MAX_LINE_BYTES:,}".replace(",", " ") in SPEC
    for label, value in [
        ("move time", DEFAULT_MOVE_TIME_MS),
        ("time bank", DEFAULT_TIME_BANK_MS),
        ("margin", DEFAULT_MARGIN_MS),
        ("start-up limit", DEFAULT_STARTUP_MS),
        ("shutdown grace", DEFAULT_SHUTDOWN_GRACE_MS),
    ]:
        assert f"| {label} | {value} ms |" in SPEC, label


# ------------------------------------------------------------ generated sections


def test_generated_sections_are_current() -> None:
    found = generated_sections(SPEC)
    assert set(found) == set(SECTIONS)
    for name, build in SECTIONS.items():
        assert found[name] == build(), (
            f"SPEC.md's generated section {name!r} is stale: run "
            "`.venv/bin/python -m tests.protocol.spec_sections` and commit SPEC.md"
        )


def _transcript() -> list[tuple[str, bytes]]:
    body = next(body for info, body in BLOCKS if info == "transcript")
    lines = []
    for line in body.splitlines():
        arrow, _, data = line.partition(" ")
        lines.append((arrow, data.encode()))
    return lines


def test_the_transcript_lines_decode_in_their_direction() -> None:
    lines = _transcript()
    assert lines[0][0] == "<" and lines[-1] == ("<", b'{"type":"shutdown"}')
    for arrow, data in lines:
        assert arrow in ("<", ">")
        assert len(data) <= MAX_LINE_BYTES
        if arrow == "<":
            message = decode_referee_message(data)
            assert message is not None
        else:
            decode_bot_message(data)
        assert _canonical(msgspec.json.decode(data)) == msgspec.json.decode(data)


def test_the_transcript_answers_every_request_once_in_order() -> None:
    pending: int | None = None
    for _arrow, message in play():
        if isinstance(message, Request):
            assert pending is None
            pending = message.id
        elif type(message).__name__ == "Reply":
            assert message.id == pending  # type: ignore[union-attr]
            pending = None
    assert pending is None


@pytest.mark.skipif(shutil.which("awk") is None, reason="no awk on this machine")
def test_the_awk_bot_of_section_1_answers_every_request_with_its_default() -> None:
    program = next(body for info, body in BLOCKS if info == "awk")
    referee_lines = [data for arrow, data in _transcript() if arrow == "<"]
    result = subprocess.run(
        ["awk", program],
        input=b"".join(line + b"\n" for line in referee_lines),
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode().splitlines()
    assert decode_bot_message(out[0].encode()).__class__.__name__ == "Ready"
    requests = [decode_referee_message(line) for line in referee_lines]
    replies = [decode_bot_message(line.encode()) for line in out[1:]]
    expected = [(r.id, r.default) for r in requests if isinstance(r, Request)]
    assert [(r.id, r.choice) for r in replies] == expected  # type: ignore[union-attr]


@pytest.mark.skipif(shutil.which("awk") is None, reason="no awk on this machine")
def test_the_awk_bot_refuses_another_protocol_version() -> None:
    program = next(body for info, body in BLOCKS if info == "awk")
    result = subprocess.run(
        ["awk", program],
        input=b'{"type":"hello","protocol":2,"referee":"future"}\n',
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 2
    assert b"unsupported protocol" in result.stderr
