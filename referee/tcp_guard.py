"""Guards for a TCP listener that strangers can reach: tokens, handshake deadlines, pending limits.

A TCP port of the referee is open to anyone who can reach the host, not just
to the bot the operator meant.  Before a connection has sent a ``ready`` with
the right token it is *pending*, and a pending connection must cost the
referee little and learn nothing:

* **Nothing about any match** goes to a pending connection: the referee
  sends it ``hello`` (the protocol version and the referee's name) and, if it
  is refused, one ``fault`` saying why.  Seats, rules, names and cards come
  only after the handshake (``referee.session``).
* **A deadline per handshake.**  Every pending connection runs inside its own
  cancel scope with a deadline (``PendingConnections.admit``); a connection
  that says nothing, or one byte a second (slowloris), is closed when it
  passes.  The framer's cap bounds what a pending connection can make the
  referee buffer (64 KiB).
* **A limit on pending connections**, ``MAX_PENDING_CONNECTIONS``.  When one
  more arrives, the *oldest* pending connection is evicted, not the newcomer.
  Refusing newcomers would let anyone lock a seat out for its whole start-up
  limit by opening eight idle connections; evicting the oldest means an
  attacker must open connections faster than the real bot can send one line
  after connecting (a round trip), and cannot hold the port idle.
* **Tokens compared in constant time** (``token_matches``, ``find_token``):
  both sides are hashed first, so neither the content nor the length of the
  expected token shows in the comparison's timing, and ``find_token`` looks
  at every token whichever matches.
* **Wrong tokens are rate-limited, never the right one** (``WrongTokenLimit``,
  keyed by whatever the listener counts by: an address for a token that is
  no bot's).  A few in a minute, then further wrong tokens from there are
  refused at once with how long the block lasts, and not reported one by one.
  A connection is judged by its token, after ``ready``: a right token always
  gets in, whatever was sent from its address (a NAT, a campus, a shared
  host), so nobody can lock a bot out by guessing from beside it.  192-bit
  tokens cannot be guessed anyway; the limit keeps a guesser from filling the
  organiser's screen, and the pending limit above bounds what it costs.

The pieces are small on purpose: ``referee.session`` uses them for a seat's
own listener, and a listener shared by many remote bots (each with its own
token) can use the same ones.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import math
from collections.abc import Hashable, Iterator, Mapping
from typing import Final, Generic, TypeVar

import trio

MAX_PENDING_CONNECTIONS: Final = 8
"""Connections accepted on one listener whose handshake is not finished, at most."""

EVICTED_DETAIL: Final = (
    "closed before its ready: too many connections were waiting for their handshake "
    "and it was the oldest"
)

T = TypeVar("T")


def _digest(text: str | None) -> bytes:
    return hashlib.sha256((text or "").encode("utf-8", "surrogatepass")).digest()


def token_matches(given: str | None, expected: str) -> bool:
    """Whether ``given`` is exactly ``expected``, in time independent of both (hashes compared)."""
    return hmac.compare_digest(_digest(given), _digest(expected))


def find_token(given: str | None, tokens: Mapping[str, T]) -> T | None:
    """The value whose key is ``given``, comparing with every key so timing shows none of them.

    For a listener shared by several bots, each with its own token.  A
    missing or empty ``given`` matches nothing, even an empty key.
    """
    found: T | None = None
    given_digest = _digest(given)
    for token, value in tokens.items():
        if hmac.compare_digest(given_digest, _digest(token)) and given:
            found = value
    return found


WRONG_TOKEN_LIMIT: Final = 5
"""Wrong or missing tokens one key (an address) may send within ``WRONG_TOKEN_WINDOW``."""
WRONG_TOKEN_WINDOW: Final = 60.0
"""Seconds over which wrong tokens are counted."""
WRONG_TOKEN_BLOCK: Final = 300.0
"""Seconds a key's wrong tokens are refused at once after its ``WRONG_TOKEN_LIMIT``-th."""

K = TypeVar("K", bound=Hashable)


class WrongTokenLimit(Generic[K]):
    """Wrong-token attempts per key: at most ``limit`` per ``window`` seconds, then a block.

    The key is the caller's: an address for tokens that are no bot's.  A block
    says how long the key's *wrong* tokens are refused; a caller never asks it
    about a right token.  Pure bookkeeping on ``trio.current_time()``, so a
    test drives it with a ``MockClock``.  Memory stays bounded by forgetting
    keys whose attempts and block are over (``_forget``), checked on every call.
    """

    def __init__(
        self,
        limit: int = WRONG_TOKEN_LIMIT,
        window: float = WRONG_TOKEN_WINDOW,
        block: float = WRONG_TOKEN_BLOCK,
    ) -> None:
        if limit < 1 or window <= 0 or block <= 0:
            raise ValueError("limit must be at least 1, window and block positive")
        self.limit = limit
        self.window = window
        self.block = block
        self._attempts: dict[K, list[float]] = {}
        self._blocked_until: dict[K, float] = {}

    def refused(self, key: K) -> float | None:
        """Seconds left of ``key``'s block, or None if it may try."""
        now = trio.current_time()
        self._forget(now)
        until = self._blocked_until.get(key)
        return None if until is None else until - now

    def wrong(self, key: K) -> int:
        """Count a wrong token from ``key``; how many in the window (the limit-th blocks)."""
        now = trio.current_time()
        self._forget(now)
        attempts = self._attempts.setdefault(key, [])
        attempts.append(now)
        if len(attempts) >= self.limit:
            self._blocked_until[key] = now + self.block
            del self._attempts[key]
            return self.limit
        return len(attempts)

    def _forget(self, now: float) -> None:
        for key in [k for k, until in self._blocked_until.items() if until <= now]:
            del self._blocked_until[key]
        for key, attempts in list(self._attempts.items()):
            attempts[:] = [at for at in attempts if at > now - self.window]
            if not attempts:
                del self._attempts[key]


class Admission:
    """One pending connection's handshake: its cancel scope, and whether it was evicted."""

    __slots__ = ("evicted", "scope")

    def __init__(self, deadline: float) -> None:
        self.scope = trio.CancelScope(deadline=deadline)
        self.evicted = False

    @property
    def timed_out(self) -> bool:
        """The handshake was cut short by its deadline (not by an eviction)."""
        return self.scope.cancelled_caught and not self.evicted

    @property
    def refusal(self) -> str | None:
        """Why the handshake was cut short, or None if it was not."""
        if not self.scope.cancelled_caught:
            return None
        return EVICTED_DETAIL if self.evicted else "no ready before the handshake deadline"


class PendingConnections:
    """The handshakes in progress on one listener: at most ``limit``, each under its deadline.

    Wrap each handshake in ``admit``::

        with pending.admit(deadline) as admission:
            ...  # send hello, read ready
        if admission.refusal is not None:
            ...  # too slow, or evicted to make room: close it

    Admitting a connection when ``limit`` are pending cancels the oldest one's
    scope.  Everything is synchronous bookkeeping on trio cancel scopes, so it
    works on any clock (a test's virtual one included).
    """

    def __init__(self, limit: int = MAX_PENDING_CONNECTIONS) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit = limit
        self._pending: dict[Admission, None] = {}  # oldest first
        self.evictions = 0

    def __len__(self) -> int:
        return len(self._pending)

    @contextlib.contextmanager
    def admit(self, deadline: float = math.inf) -> Iterator[Admission]:
        """Run a handshake in a cancel scope ending at ``deadline`` (trio time) or at eviction."""
        while len(self._pending) >= self.limit:
            oldest = next(iter(self._pending))
            del self._pending[oldest]
            oldest.evicted = True
            oldest.scope.cancel()
            self.evictions += 1
        admission = Admission(deadline)
        self._pending[admission] = None
        try:
            with admission.scope:
                yield admission
        finally:
            self._pending.pop(admission, None)
