"""SPEC.md section 13: arrays and objects nested more than 32 deep are a malformed line.

The bound is checked by ``nesting_depth`` before any decoder runs, with two
roads: a line with at most 32 opening brackets is passed on a count, and a
longer one is scanned (strings dropped, one level per pass).  These tests put
lines on both roads, on each side of the bound, so neither road can drift
from the promise; the hostile fuzz properties check it over random lines.
"""

from __future__ import annotations

import pytest

from protocol.messages import (
    MAX_NESTING,
    MalformedMessageError,
    decode_bot_message,
    decode_json,
    decode_referee_message,
    nesting_depth,
)


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def test_the_bound_is_the_spec_s_32() -> None:
    assert MAX_NESTING == 32


def test_32_deep_is_json_and_33_is_too_deep() -> None:
    assert decode_json(_nested(MAX_NESTING)) is not None
    with pytest.raises(MalformedMessageError) as caught:
        decode_json(_nested(MAX_NESTING + 1))
    assert caught.value.problem == "too_deep"
    assert "nested more than 32 deep" in str(caught.value)


@pytest.mark.parametrize("depth", [0, 1, 5, 31, 32, 33, 40])
def test_many_shallow_brackets_take_the_scan_and_count_exactly(depth: int) -> None:
    # 50 sibling arrays: more opening brackets than the bound, so the line is scanned.
    siblings = b",".join([b"[1]"] * 50)
    line = b"[" * depth + b"[" + siblings + b"]" + b"]" * depth
    assert nesting_depth(line) == min(depth + 2, MAX_NESTING + 1)


def test_brackets_inside_strings_do_not_count() -> None:
    # Escaped quotes and backslashes do not end a string early on the scan.
    text = b'"' + b"[{" * 40 + b'\\"\\\\' + b"[" * 40 + b'"'
    line = b'{"type":"reply","id":1,"choice":' + text + b"}"
    assert nesting_depth(line) == 1
    reply = decode_bot_message(line)  # the message decodes; the choice is just a string
    assert getattr(reply, "choice", None) == "[{" * 40 + '"\\' + "[" * 40


def test_a_deep_bot_line_is_a_named_fault_not_a_recursion_error() -> None:
    line = b'{"type":"reply","id":1,"choice":' + _nested(10_000) + b"}"
    with pytest.raises(MalformedMessageError) as caught:
        decode_bot_message(line)
    assert caught.value.problem == "too_deep"


def test_a_deep_referee_line_is_refused_by_the_bot_s_decoder_too() -> None:
    line = b'{"type":"events","events":[' + b"{" * 40 + b"}" * 40 + b"]}"
    with pytest.raises(MalformedMessageError) as caught:
        decode_referee_message(line)
    assert caught.value.problem == "too_deep"


def test_an_unbalanced_line_is_counted_one_bracket_at_a_time() -> None:
    assert nesting_depth(b"]" * 40 + _nested(3)) == 3
    assert nesting_depth(b"[" * 40) == MAX_NESTING + 1
