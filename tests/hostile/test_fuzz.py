"""Protocol fuzzing in the test suite: the properties of ``fuzz_properties``, a few hundred
cases each, so the suite stays fast.  ``benchmarks/fuzz.py`` runs the same ones for long.

No deadline per example: the machine may be loaded, and a slow example is not a failure.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hostile.fuzz_properties import (
    DECODER_INPUTS,
    PATHOLOGICAL,
    check_bot_decoder,
    check_framer,
    check_json_decoder,
    check_referee,
    check_referee_decoder,
    framer_cases,
)

FAST = settings(max_examples=300, deadline=None, derandomize=True)
SLOW = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@FAST
@given(framer_cases())
def test_the_framer_cuts_any_chunks_like_the_reference_and_never_holds_more_than_the_cap(
    case: tuple[list[bytes], int],
) -> None:
    check_framer(*case)


@FAST
@given(DECODER_INPUTS)
def test_the_bot_decoder_gives_a_message_or_a_named_malformed_error(line: bytes) -> None:
    check_bot_decoder(line)


@FAST
@given(DECODER_INPUTS)
def test_the_lenient_decoder_never_fails_otherwise(line: bytes) -> None:
    check_referee_decoder(line)


@FAST
@given(PATHOLOGICAL)
def test_pathological_shapes_are_named_errors_in_every_decoder_even_deep_in_the_stack(
    line: bytes,
) -> None:
    # Deep nesting, huge numbers, NaN, long strings, duplicate keys, bad UTF-8, lone
    # surrogates, BOM, NUL; and the same again with most of the stack already used,
    # since a recursive decoder's limit is what is left of the caller's stack.
    for check in (check_bot_decoder, check_referee_decoder, check_json_decoder):
        check(line)
        _with_little_stack_left(check, line)


def _with_little_stack_left(check: Callable[[bytes], None], line: bytes) -> None:
    def descend(levels: int) -> None:
        if levels:
            descend(levels - 1)
        else:
            check(line)

    descend(sys.getrecursionlimit() - 120)


@SLOW
@given(st.data())
def test_the_referee_judges_any_stream_of_replies_as_the_spec_says(data: st.DataObject) -> None:
    check_referee(data)
