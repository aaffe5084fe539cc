"""A seat's bank is charged by SPEC.md's rule (``protocol.timing.charge``) to the millisecond.

``SeatClock.charge`` skips the arithmetic for a reply within the move time
(most replies); these tests hold that shortcut to the rule itself at the
boundary, where float seconds meet whole milliseconds.
"""

from __future__ import annotations

import math

import pytest

from protocol.timing import charge
from referee.transport.timecontrol import SeatClock, TimeControl

MOVE_TIMES = [0.001, 0.0015, 0.0025, 0.1, 0.3, 0.7, 1.0, 1.2345, 2.9999]


def around(move_time: float) -> list[float]:
    """Replies just inside, at and just past the move time, and a millisecond either side."""
    return [
        move_time - 0.001,
        math.nextafter(move_time, 0.0),
        move_time,
        math.nextafter(move_time, math.inf),
        move_time + 0.0005,
        move_time + 0.001,
        move_time + 0.0015,
    ]


@pytest.mark.parametrize("move_time", MOVE_TIMES)
def test_the_bank_after_a_reply_near_the_move_time_is_the_rule_s(move_time: float) -> None:
    control = TimeControl(move_time=move_time, time_bank=2.0)
    for elapsed in around(move_time):
        clock = SeatClock(control)
        clock.charge(elapsed)
        rule = charge(
            int(elapsed * 1000), control.move_time_ms, control.time_bank_ms, control.margin_ms
        )
        assert clock.bank_ms == rule.bank_ms, (move_time, elapsed)


def test_a_reply_within_the_move_time_leaves_the_bank_and_one_past_it_draws_on_it() -> None:
    control = TimeControl(move_time=1.0, time_bank=2.0)
    clock = SeatClock(control)
    clock.charge(1.0)
    assert clock.bank_ms == 2000
    clock.charge(1.0015)  # 1 ms past, rounded down
    assert clock.bank_ms == 1999
    clock.charge(3.5)  # more than the bank: emptied, never below zero
    assert clock.bank_ms == 0
