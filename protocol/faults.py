"""Fault kinds and the disqualification rule: the referee's verdicts, named once.

A fault is what a bot did wrong; SPEC.md ("Faults") gives each kind its
meaning and consequence.  The names are data on the wire (``fault.kind`` and
``seat_disqualified.reason``), so they live here, beside the messages, where
the referee, the bot SDK, the tests and the spec all take them from.
"""

from __future__ import annotations

import enum
from typing import Final


class FaultKind(enum.StrEnum):
    STARTUP = "startup"  # no valid ready within the start-up limit (exit, timeout, bad line, token)
    TIMEOUT = "timeout"  # no reply within the time left for a request
    CRASH = "crash"  # the bot's process exited or was killed during a match
    EOF = "eof"  # the bot's output (stdout or its TCP connection) ended during a match
    MALFORMED = "malformed"  # not JSON, not a message, wrong fields or types, a mis-shaped choice
    LINE_TOO_LONG = "line_too_long"  # a line passed MAX_LINE_BYTES before its newline
    ILLEGAL = "illegal"  # a well-formed choice the rules forbid now
    PROTOCOL = "protocol"  # unknown or duplicate id, unexpected message, version mismatch


DISQUALIFY_AT_ONCE: Final = frozenset(
    {FaultKind.STARTUP, FaultKind.CRASH, FaultKind.EOF, FaultKind.LINE_TOO_LONG}
)
"""Kinds after which the bot cannot go on: its stream is gone or out of step.

A ``protocol`` fault for a version mismatch in ``ready`` also ends the
connection, but it is decided at the handshake, before any count matters.
"""

DEFAULT_MAX_FAULTS: Final = 3
"""A seat is disqualified at its third fault of a match (of any kinds)."""


def disqualifies(
    kind: FaultKind, faults_in_match: int, max_faults: int = DEFAULT_MAX_FAULTS
) -> bool:
    """Whether a fault disqualifies; ``faults_in_match`` counts it and every earlier one."""
    return kind in DISQUALIFY_AT_ONCE or faults_in_match >= max_faults
