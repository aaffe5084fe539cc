"""Protocol fuzzing in the test suite: the properties of ``fuzz_properties``, a few hundred
cases each, so the suite stays fast.  ``benchmarks/fuzz.py`` runs the same ones for long.

No deadline per example: the machine may be loaded, and a slow example is not a failure.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hostile.fuzz_properties import (
    DECODER_INPUTS,
    check_bot_decoder,
    check_framer,
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


@SLOW
@given(st.data())
def test_the_referee_judges_any_stream_of_replies_as_the_spec_says(data: st.DataObject) -> None:
    check_referee(data)
