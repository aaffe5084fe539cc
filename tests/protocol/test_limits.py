"""Time, faults and transports: the numbers and names a bot author lives by."""

from __future__ import annotations

import pytest

from protocol.faults import DEFAULT_MAX_FAULTS, FaultKind, disqualifies
from protocol.timing import DEFAULT_MARGIN_MS, charge, deadline_ms, time_left_ms
from protocol.transports import ENV_CONNECT, ENV_TOKEN, connect_address, parse_connect


def test_fault_kinds_are_the_eight_names_of_the_spec() -> None:
    assert {kind.value for kind in FaultKind} == {
        "startup",
        "timeout",
        "crash",
        "eof",
        "malformed",
        "line_too_long",
        "illegal",
        "protocol",
    }


@pytest.mark.parametrize("kind", ["startup", "crash", "eof", "line_too_long"])
def test_some_faults_disqualify_at_once(kind: str) -> None:
    assert disqualifies(FaultKind(kind), faults_in_match=1)


@pytest.mark.parametrize("kind", ["timeout", "malformed", "illegal", "protocol"])
def test_other_faults_disqualify_at_the_third(kind: str) -> None:
    assert DEFAULT_MAX_FAULTS == 3
    assert not disqualifies(FaultKind(kind), faults_in_match=1)
    assert not disqualifies(FaultKind(kind), faults_in_match=2)
    assert disqualifies(FaultKind(kind), faults_in_match=3)
    assert disqualifies(FaultKind(kind), faults_in_match=5, max_faults=5)


def test_time_left_is_move_time_plus_bank() -> None:
    assert time_left_ms(1000, 4000) == 5000
    assert deadline_ms(1000, 4000) == 5000 + DEFAULT_MARGIN_MS


def test_a_quick_reply_costs_the_bank_nothing() -> None:
    assert charge(999, 1000, 4000) == charge(0, 1000, 4000)
    assert charge(1000, 1000, 4000).bank_ms == 4000


def test_time_over_the_move_time_comes_out_of_the_bank() -> None:
    result = charge(1700, 1000, 4000)
    assert result.bank_ms == 3300 and not result.timed_out


def test_the_margin_accepts_a_reply_but_empties_the_bank() -> None:
    result = charge(5000 + DEFAULT_MARGIN_MS, 1000, 4000)
    assert result.bank_ms == 0 and not result.timed_out


def test_past_the_margin_is_a_timeout_and_the_bank_is_gone() -> None:
    result = charge(5001 + DEFAULT_MARGIN_MS, 1000, 4000)
    assert result.timed_out and result.bank_ms == 0
    assert charge(1001, 1000, 0, margin_ms=0).timed_out


def test_the_environment_names() -> None:
    assert (ENV_CONNECT, ENV_TOKEN) == ("NEWMARKET_CONNECT", "NEWMARKET_TOKEN")


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("127.0.0.1:9000", ("127.0.0.1", 9000)),
        ("localhost:1", ("localhost", 1)),
        ("[::1]:65535", ("::1", 65535)),
        (" host:80 ", ("host", 80)),
    ],
)
def test_connect_addresses_parse(text: str, address: tuple[str, int]) -> None:
    assert parse_connect(text) == address


@pytest.mark.parametrize("text", ["9000", "host:", ":80", "host:http", "::1:80", "h:0", "h:70000"])
def test_bad_connect_addresses_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match=ENV_CONNECT):
        parse_connect(text)


def test_no_address_means_stdio() -> None:
    assert connect_address({}) is None
    assert connect_address({ENV_CONNECT: ""}) is None
    assert connect_address({ENV_CONNECT: "h:5"}) == ("h", 5)
