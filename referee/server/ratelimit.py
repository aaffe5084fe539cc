"""A sliding-window count per key: how many times in the last ``window`` seconds.

Self-registration is open to anyone who can reach the server, so each client
address may register at most ``limit`` participants an hour.  The count is
kept in memory: a restart forgets it, which costs an abuser nothing a
restart would not cost the organiser anyway (the server is restarted by hand,
rarely).  Uploads have their own limit per participant, counted in the store.
"""

from __future__ import annotations

import collections
import math
import time
from collections.abc import Callable


class SlidingWindow:
    """At most ``limit`` events per key in any ``window`` seconds."""

    def __init__(
        self, limit: int, window: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self._events: dict[str, collections.deque[float]] = {}

    def _recent(self, key: str) -> collections.deque[float]:
        events = self._events.setdefault(key, collections.deque())
        cutoff = self.clock() - self.window
        while events and events[0] <= cutoff:
            events.popleft()
        if not events:
            del self._events[key]  # the table holds only keys active in the window
            return collections.deque()
        return events

    def wait(self, key: str) -> float:
        """0 if ``key`` may act now, else the seconds until it may."""
        events = self._recent(key)
        if len(events) < self.limit:
            return 0.0
        return max(0.0, events[0] + self.window - self.clock())

    def record(self, key: str) -> None:
        self._events.setdefault(key, collections.deque()).append(self.clock())

    @staticmethod
    def minutes(seconds: float) -> int:
        return max(1, math.ceil(seconds / 60))
