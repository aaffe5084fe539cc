"""Time control: the limits a match is played under, and one seat's clock.

The arithmetic (what ``time_left_ms`` says, when a reply is a timeout, what
the bank is charged) is ``protocol.timing``'s, so the referee, the bot SDK and
SPEC.md agree on it to the millisecond.  This module adds the two things the
protocol does not own: the limits as one value a caller passes around
(``TimeControl``, in seconds, the unit of trio's clock and of the command
line), and a ``SeatClock`` that carries one seat's bank through a match.

The margin is waited for but never promised: a request says ``time_left_ms``
without it, the referee waits that long plus the margin before it calls a
timeout.  So a loaded host that wakes the referee a little late does not turn
an honest bot's reply into a fault.
"""

from __future__ import annotations

import dataclasses
import math

from protocol import timing
from protocol.faults import DEFAULT_MAX_FAULTS
from protocol.timing import charge, deadline_ms, time_left_ms


@dataclasses.dataclass(frozen=True)
class TimeControl:
    """The limits of a match, in seconds.

    ``move_time`` is each decision's allowance; ``time_bank`` is extra time for
    the whole match, drawn from when a decision takes longer; ``startup_time``
    bounds a bot's start and handshake; ``margin`` is added to every deadline
    to absorb host jitter; ``max_faults`` is the fault count that disqualifies.
    """

    # The defaults are SPEC.md's (section 12), from protocol.timing: one source.
    move_time: float = timing.DEFAULT_MOVE_TIME_MS / 1000
    time_bank: float = timing.DEFAULT_TIME_BANK_MS / 1000
    startup_time: float = timing.DEFAULT_STARTUP_MS / 1000
    margin: float = timing.DEFAULT_MARGIN_MS / 1000
    max_faults: int = DEFAULT_MAX_FAULTS

    def __post_init__(self) -> None:
        for field in ("move_time", "startup_time"):
            value = getattr(self, field)
            if not _is_number(value) or not 0 < value <= 86400:
                raise ValueError(f"{field}: must be a number of seconds > 0, got {value!r}")
        for field in ("time_bank", "margin"):
            value = getattr(self, field)
            if not _is_number(value) or not 0 <= value <= 86400:
                raise ValueError(f"{field}: must be a number of seconds >= 0, got {value!r}")
        if (
            not isinstance(self.max_faults, int)
            or isinstance(self.max_faults, bool)
            or self.max_faults < 1
        ):
            raise ValueError(f"max_faults: must be a whole number >= 1, got {self.max_faults!r}")

    @property
    def move_time_ms(self) -> int:
        return _ms(self.move_time)

    @property
    def time_bank_ms(self) -> int:
        return _ms(self.time_bank)

    @property
    def startup_ms(self) -> int:
        return _ms(self.startup_time)

    @property
    def margin_ms(self) -> int:
        return _ms(self.margin)

    def to_json(self) -> dict[str, object]:
        return {
            "move_time": self.move_time,
            "time_bank": self.time_bank,
            "startup_time": self.startup_time,
            "margin": self.margin,
            "max_faults": self.max_faults,
        }


class SeatClock:
    """One seat's time bank for one match."""

    __slots__ = ("_margin_ms", "_move_ms", "_move_time", "bank_ms", "control")

    def __init__(self, control: TimeControl) -> None:
        self.control = control
        self.bank_ms = control.time_bank_ms
        # In milliseconds once (the control is frozen): read at every decision.
        self._move_ms = control.move_time_ms
        self._margin_ms = control.margin_ms
        self._move_time = control.move_time

    @property
    def time_left_ms(self) -> int:
        """What the next request tells the bot: its move time plus the bank."""
        return time_left_ms(self._move_ms, self.bank_ms)

    @property
    def deadline(self) -> float:
        """Seconds the referee waits for the next reply before it calls a timeout."""
        return deadline_ms(self._move_ms, self.bank_ms, self._margin_ms) / 1000

    def charge(self, elapsed: float) -> None:
        """Charge a reply that came ``elapsed`` seconds after its request.

        Whether it was in time is the caller's cancel scope's verdict (the
        deadline above), not recomputed here: rounding could otherwise call a
        reply late that the scope accepted.  Milliseconds round down for the
        same reason.

        A reply within the move time leaves the bank as it is, and most replies
        are: that case returns before the arithmetic.  It is the rule's own
        answer, not an approximation: ``elapsed <= move_time`` gives
        ``int(elapsed * 1000) <= round(move_time * 1000)`` (multiplication and
        truncation never reverse an order), for which ``charge`` takes nothing.
        """
        if elapsed <= self._move_time:
            return
        result = charge(int(elapsed * 1000), self._move_ms, self.bank_ms, self._margin_ms)
        self.bank_ms = result.bank_ms

    def expire(self) -> None:
        """A timeout empties the bank (the bot used all of it)."""
        self.bank_ms = 0


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _ms(seconds: float) -> int:
    return round(seconds * 1000)
