"""Time limits and the time bank: the arithmetic of SPEC.md, "Time", in one pure function.

The referee owns the clock; this module owns the rule, so the referee, the
bot SDK and the tests agree on it to the millisecond.  Every decision has
``move_time_ms``; time beyond it is drawn from the seat's bank for the match;
the referee waits ``margin_ms`` more (host jitter) before it calls a timeout,
and never charges that margin beyond emptying the bank.
"""

from __future__ import annotations

from typing import Final

import msgspec

DEFAULT_MOVE_TIME_MS: Final = 1000
DEFAULT_TIME_BANK_MS: Final = 10_000
DEFAULT_STARTUP_MS: Final = 10_000
DEFAULT_MARGIN_MS: Final = 100
DEFAULT_SHUTDOWN_GRACE_MS: Final = 2000
DEFAULT_STDERR_CAP_BYTES: Final = 1 << 20


class Charge(msgspec.Struct, frozen=True):
    """The bank after a decision, and whether the decision timed out."""

    bank_ms: int
    timed_out: bool


def time_left_ms(move_time_ms: int, bank_ms: int) -> int:
    """What a request's ``time_left_ms`` says: the move time plus the bank."""
    return move_time_ms + bank_ms


def deadline_ms(move_time_ms: int, bank_ms: int, margin_ms: int = DEFAULT_MARGIN_MS) -> int:
    """How long the referee waits for a reply before it declares a timeout."""
    return move_time_ms + bank_ms + margin_ms


def charge(
    elapsed_ms: int, move_time_ms: int, bank_ms: int, margin_ms: int = DEFAULT_MARGIN_MS
) -> Charge:
    """Charge a reply that took ``elapsed_ms`` (from the request written to the reply read).

    >>> charge(400, 1000, 5000)
    Charge(bank_ms=5000, timed_out=False)
    >>> charge(2500, 1000, 5000)
    Charge(bank_ms=3500, timed_out=False)
    >>> charge(6050, 1000, 5000)  # inside the margin: accepted, bank empty
    Charge(bank_ms=0, timed_out=False)
    >>> charge(6101, 1000, 5000)
    Charge(bank_ms=0, timed_out=True)
    """
    if elapsed_ms > deadline_ms(move_time_ms, bank_ms, margin_ms):
        return Charge(0, True)
    return Charge(max(0, bank_ms - max(0, elapsed_ms - move_time_ms)), False)
