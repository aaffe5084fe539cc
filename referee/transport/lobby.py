"""The lobby of a league with remote bots: one listener, every registered bot's token.

A remote bot is one the organiser does not start: its owner runs it on their
own machine and it connects to the league's host and port (``newmarket
connect`` bridges any stdio bot; the Python SDK connects by itself).  The
lobby is the league-wide listener they connect to:

* **Identified by token.**  Each registered bot has its own token
  (``newmarket tokens``); the ``ready`` of a connection names the bot by its
  token alone, looked up with ``referee.transport.tcp_guard.find_token`` (constant time,
  every token compared).  A wrong token, a second connection of a bot that is
  connected, or a connection too slow to say ``ready`` is refused with one
  ``fault`` line and closed; nothing about the league goes to it first.
* **Wrong tokens are limited per address, the right one never.**  Tokens
  that are no bot's, five in a minute from one address, make that address's
  wrong tokens refused at once for five minutes (``tcp_guard.WrongTokenLimit``)
  and no longer reported one by one; a ``ready`` with a right token gets in
  whatever its address sent, so a guesser behind the same NAT as a bot cannot
  lock it out.
* **Pending connections are guarded** by ``tcp_guard.PendingConnections``: a
  deadline per handshake, at most eight pending, one more evicts the oldest.
* **Absence has a deadline.**  A bot that has not connected since the league
  started, or since its connection dropped, is *absent*; ``absent_deadline``
  is when the league stops waiting for it (``wait`` seconds later).  What to
  do about it is the pool's business (``referee.tables.remote_pool``).
* **A reconnect replaces a dead session.**  A dropped connection makes that
  bot's session dead (a fault in the match it was in, for that bot only); its
  next connection with the same token becomes its new session.  A bot that
  restarts between matches may reconnect before the league has noticed the
  old connection is gone, so a new connection with the token of a bot that is
  *not playing* replaces its old one; one that comes while the bot plays a
  match (``busy``) is refused, and the match goes on.
* **A bot that keeps the tables waiting is benched** (``Bench``).  When
  every table left needs a bot that was connected and is gone, the tables
  wait for it: that time is counted against it.  A bot the tables waited for
  more than ``WAIT_BUDGET`` seconds in all within ``WAIT_WINDOW`` seconds,
  over two absences or more, is benched: its connections are refused,
  saying for how long and why, and no table waits for it (its seat plays by
  the default policy), so one participant reconnecting in a loop cannot hold
  the remote table.  The first bench is ``BENCH_FIRST`` seconds, each next
  one twice as long (at most ``BENCH_LONGEST``), until it goes
  ``BENCH_LONGEST`` without keeping a table waiting after its bench.  One
  absence alone never benches a bot (``wait`` says how long it is waited
  for), nor do restarts between matches that cost the tables little.

The lobby owns the sessions it accepted and closes them (``shutdown``) when
it is left.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from protocol.conversation import Conversation, HandshakeError, Loss
from protocol.faults import FaultKind
from protocol.framing import LineTooLongError
from referee.bots import BotSpec
from referee.storage.private_files import private_dir
from referee.transport.connection import Connection, ConnectionBrokenError, ConnectionClosedError
from referee.transport.session import (
    TELL_TIMEOUT,
    BotLostError,
    BotSession,
    referee_version,
    startup_fault,
)
from referee.transport.tcp_guard import PendingConnections, WrongTokenLimit, find_token
from referee.transport.timecontrol import TimeControl

TOKEN_BYTES = 24  # 192 random bits, 32 characters of URL-safe base64

WAIT_BUDGET = 60.0
"""Seconds the tables may wait for a bot that left, within ``WAIT_WINDOW``, before a bench."""
WAIT_WINDOW = 900.0
"""Seconds over which the tables' waits for a bot are added up."""
BENCH_FIRST = 60.0
"""Seconds of a bot's first bench; each next one is twice as long."""
BENCH_LONGEST = 3600.0
"""The longest bench; a bot this long without a wait starts again from ``BENCH_FIRST``."""


class TokenFileError(ValueError):
    """The tokens file cannot be read or does not fit the league: one line, naming the file."""


# ---------------------------------------------------------------------- tokens


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def read_tokens(path: Path) -> dict[str, str]:
    """The tokens file: ``{"tokens": {"bot name": "token", ...}}`` (JSON, written by us)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TokenFileError(
            f"{path}: no tokens file; issue the remote bots' tokens with `newmarket tokens`"
        ) from None
    except (OSError, ValueError) as error:
        raise TokenFileError(f"{path}: cannot read the tokens: {error}") from None
    tokens = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(tokens, dict) or not all(
        isinstance(name, str) and isinstance(token, str) and token for name, token in tokens.items()
    ):
        raise TokenFileError(f'{path}: expected {{"tokens": {{"bot name": "token", ...}}}}')
    return dict(tokens)


def write_tokens(path: Path, tokens: Mapping[str, str]) -> None:
    """Write the tokens readable by the owner only (they are the bots' passwords)."""
    private_dir(path.parent)
    text = json.dumps({"tokens": dict(tokens)}, indent=2) + "\n"
    temporary = path.with_name(path.name + ".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text)
    os.replace(temporary, path)


def issue_tokens(path: Path, names: Sequence[str], *, renew: Sequence[str] = ()) -> dict[str, str]:
    """Every name's token, keeping those already in ``path`` (except ``renew``); saved there."""
    existing: dict[str, str] = {}
    if path.exists():
        existing = read_tokens(path)
    tokens = {
        name: existing[name] if name in existing and name not in renew else new_token()
        for name in names
    }
    if tokens != existing:
        write_tokens(path, tokens)
    return tokens


def league_tokens(path: Path, bots: Sequence[BotSpec]) -> dict[int, str]:
    """The token of every remote bot (by index); ``TokenFileError`` if one has none."""
    tokens = read_tokens(path)
    out: dict[int, str] = {}
    for index, spec in enumerate(bots):
        if not spec.remote:
            continue
        token = tokens.get(spec.name)
        if token is None:
            raise TokenFileError(
                f"{path}: no token for remote bot {spec.name!r}; run `newmarket tokens` again"
            )
        out[index] = token
    return out


# ---------------------------------------------------------------------- the bench


class Bench:
    """The tables' waits for each bot, and the benches they earn (the module docstring).

    Pure bookkeeping on trio's clock: ``waited`` records a wait, ``left_of``
    says how much of the budget a wait going on now leaves (the caller benches
    at zero), ``bench`` benches, ``left`` says how long a bench still runs.  A
    test drives it with a ``MockClock``.
    """

    def __init__(
        self,
        budget: float = WAIT_BUDGET,
        window: float = WAIT_WINDOW,
        first: float = BENCH_FIRST,
        longest: float = BENCH_LONGEST,
    ) -> None:
        self.budget = budget
        self.window = window
        self.first = first
        self.longest = longest
        self._waits: dict[int, list[tuple[float, float, float]]] = {}  # (from, to, absence)
        self._benched: dict[int, tuple[float, float]] = {}  # bot -> (began, until)
        self._benches: dict[int, int] = {}  # bot -> benches so far (the next doubles)
        self._quiet_since: dict[int, float] = {}  # its last wait, or the end of its bench

    def waited(self, bot: int, start: float, end: float, absence: float) -> None:
        """The tables waited for ``bot`` from ``start`` to ``end``, in its absence that
        began at ``absence`` (trio times)."""
        if end <= start:
            return
        if start - self._quiet_since.get(bot, -math.inf) >= self.longest:
            self._benches.pop(bot, None)  # long enough without a wait (or a bench): forgiven
        self._quiet_since[bot] = max(end, self._quiet_since.get(bot, -math.inf))
        self._waits.setdefault(bot, []).append((start, end, absence))

    def left_of(self, bot: int, absence: float, since: float) -> tuple[float, float, int]:
        """(seconds of budget left, seconds waited, absences) if a wait for ``bot`` in its
        absence ``absence`` goes on from ``since`` until now; the budget left is inf while
        there has been one absence only."""
        now = trio.current_time()
        horizon = now - self.window
        waits = [wait for wait in self._waits.get(bot, ()) if wait[1] > horizon]
        self._waits[bot] = waits
        total = sum(end - max(start, horizon) for start, end, _ in waits) + max(0.0, now - since)
        absences = len({wait[2] for wait in waits} | {absence})
        if absences < 2:
            return math.inf, total, absences
        return self.budget - total, total, absences

    def bench(self, bot: int) -> float:
        """Bench ``bot`` now; how long (each bench twice the last, at most ``longest``)."""
        now = trio.current_time()
        benches = self._benches.get(bot, 0)
        length = min(self.longest, self.first * (1 << min(benches, 30)))
        self._benches[bot] = benches + 1
        self._benched[bot] = (now, now + length)
        self._quiet_since[bot] = now + length
        self._waits.pop(bot, None)  # the bench settles them
        return length

    def left(self, bot: int) -> float | None:
        """Seconds left of ``bot``'s bench, or None if it is not benched."""
        bench = self._benched.get(bot)
        if bench is None:
            return None
        left = bench[1] - trio.current_time()
        if left <= 0:
            del self._benched[bot]
            return None
        return left

    def began(self, bot: int) -> float:
        """When ``bot``'s current bench began (trio time); call only while it is benched."""
        return self._benched[bot][0]


# ---------------------------------------------------------------------- the lobby


class RemoteLobby:
    """The listener remote bots connect to; see the module docstring."""

    def __init__(
        self,
        bots: Sequence[BotSpec],
        tokens: Mapping[int, str],
        control: TimeControl,
        *,
        wait: float,
        note: Callable[[str], None] = lambda _text: None,
    ) -> None:
        self.bots = list(bots)
        self.control = control
        self.wait = wait
        self.note = note  # what the organiser is told as it happens (a bot connected)
        self._by_token = {token: bot for bot, token in tokens.items()}
        self.sessions: dict[int, BotSession] = {}
        self._absent_since: dict[int, float] = {}
        self._changed = trio.Event()
        self.pending = PendingConnections()
        self.wrong_tokens: WrongTokenLimit[str] = WrongTokenLimit()  # by address
        self.busy: set[int] = set()  # bots in a match now: a second connection is refused
        self.bench = Bench()
        self._why_benched: dict[int, str] = {}  # bot -> what earned its bench
        self._waiting: dict[int, float] = {}  # bot -> its absence the tables wait out now
        self.address: tuple[str, int] | None = None

    @property
    def registered(self) -> list[int]:
        return sorted(self._by_token.values())

    def start_clock(self) -> None:
        """From now on, an absent bot has ``wait`` seconds to connect."""
        now = trio.current_time()
        for bot in self.registered:
            self._absent_since.setdefault(bot, now)

    def live(self, bot: int) -> BotSession | None:
        """The bot's session if it is connected and alive; notes the time it was lost."""
        session = self.sessions.get(bot)
        if session is not None and session.alive:
            return session
        if session is not None and bot not in self._absent_since:
            self._absent_since[bot] = trio.current_time()
        return None

    def absent_deadline(self, bot: int) -> float:
        """When the league stops waiting for ``bot`` (trio time); -inf if it is connected.

        A benched bot is not waited for: its deadline is when its bench began.
        """
        if self.live(bot) is not None:
            return -math.inf
        if self.bench.left(bot) is not None:
            return self.bench.began(bot)
        return self._absent_since.get(bot, trio.current_time()) + self.wait

    def kept_waiting(self, bots: Iterable[int], since: float) -> float:
        """Every table left needs ``bots``, absent, and has waited for them since ``since``
        (trio time; now, when it starts waiting).  Benches those of them that have cost
        the tables their budget (``Bench``); returns when the next would have, if the
        wait went on (inf if none), for the caller to look again then.
        """
        now = trio.current_time()
        again = math.inf
        for bot in bots:
            absence = self._absent_since.get(bot)
            if absence is None or not self.ever_connected(bot) or self.bench.left(bot):
                continue
            self._waiting[bot] = absence  # ``waited`` counts it, even if it is back by then
            left, total, absences = self.bench.left_of(bot, absence, max(since, absence))
            if left > 0:
                again = min(again, now + left)
                continue
            length = self.bench.bench(bot)
            self._why_benched[bot] = (
                f"the tables waited {total:.0f} s for it in {absences} absences within "
                f"{self.bench.window:g} s after its connection dropped"
            )
            self.note(
                f"lobby: {self.bots[bot].name} benched for {length:g} s: "
                f"{self._why_benched[bot]} (each next bench is twice as long)"
            )
        return again

    def waited(self, bots: Iterable[int], since: float) -> None:
        """The tables waited for ``bots`` from ``since`` until now (``kept_waiting`` said
        they were absent then): counted against those that had been connected."""
        now = trio.current_time()
        for bot in bots:
            absence = self._waiting.pop(bot, None)
            if absence is not None and not self.bench.left(bot):
                self.bench.waited(bot, max(since, absence), now, absence)

    def ever_connected(self, bot: int) -> bool:
        return bot in self.sessions

    async def wait_for_change(self, deadline: float) -> None:
        """Until a bot connects or ``deadline`` passes, whichever is first."""
        with trio.move_on_at(deadline):
            await self._changed.wait()

    async def listen(self, host: str, port: int) -> list[trio.SocketListener]:
        """Bind ``host:port``; a plain ``OSError`` naming the address if it cannot."""
        try:
            listeners = await trio.open_tcp_listeners(port, host=host)
        except OSError as error:
            reason = error.strerror or str(error)
            raise OSError(f"cannot listen for remote bots on {host}:{port}: {reason}") from None
        sockname = listeners[0].socket.getsockname()
        self.address = (str(sockname[0]), int(sockname[1]))
        return listeners

    async def serve(self, listeners: Sequence[trio.SocketListener]) -> None:
        """Admit connections on ``listeners`` until cancelled."""
        async with trio.open_nursery() as nursery:
            for listener in listeners:
                nursery.start_soon(self._accept, listener, nursery)

    async def _accept(self, listener: trio.SocketListener, nursery: trio.Nursery) -> None:
        async with listener:
            while True:
                stream = await listener.accept()
                address: tuple[str, int] | None = None
                with contextlib.suppress(OSError, IndexError):
                    peer_address = stream.socket.getpeername()
                    address = (str(peer_address[0]), int(peer_address[1]))
                nursery.start_soon(self.admit, stream, address)

    async def admit(self, stream: trio.abc.Stream, address: tuple[str, int] | None) -> None:
        """One connection, from ``address`` (host, port; None if unknown): its handshake,
        then its bot's session, or a refusal saying why."""
        connection = Connection(stream)
        # The host alone: a guesser gets a new port per connection.
        peer = "unknown" if address is None else address[0]
        line: bytes | None = None
        conversation = Conversation()
        deadline = trio.current_time() + self.control.startup_time
        with (
            self.pending.admit(deadline) as admission,
            contextlib.suppress(ConnectionBrokenError, ConnectionClosedError, LineTooLongError),
        ):
            await connection.send(conversation.hello(referee_version()))
            line = await connection.receive_line()
        try:
            bot = self._identify(conversation, line, admission.refusal)
        except WrongTokenError as error:
            await _refuse(connection, self._wrong_token(peer, error))
            return
        except BotLostError as error:
            await _refuse(connection, error)
            return
        spec = self.bots[bot]
        self.live(bot)  # notes when a session it had died, if nobody has looked since
        benched = self.bench.left(bot)
        if benched is not None:
            await _refuse(connection, self._benched(bot, benched))
            return
        old = self.sessions.get(bot)
        while old is not None and old.alive:
            # A session at a table is never replaced mid-match.  And after the await below,
            # look again: another connection with the token may have been seated meanwhile,
            # and overwritten it would never be ended (a socket leaked per try, with the
            # token holder choosing how many).
            if bot in self.busy:
                playing = f"{spec.name} is already connected and playing a match in this league"
                await _refuse(connection, BotLostError(FaultKind.STARTUP, playing))
                return
            old.lose(FaultKind.EOF, "replaced by a new connection with its token")
            await old.end()
            old = self.sessions.get(bot)
        session = BotSession(spec, self.control)
        session.connection = connection
        session.conversation = conversation
        session.address = address
        self.seat(bot, session)

    def _wrong_token(self, peer: str, error: BotLostError) -> BotLostError:
        """Count a token that is no bot's from ``peer``; the refusal to send it."""
        blocked = self.wrong_tokens.refused(peer)
        if blocked is not None:
            # Not counted or reported again: the block says it all, and it stays as it is.
            return BotLostError(
                FaultKind.STARTUP,
                f"too many wrong tokens from {peer}; wrong tokens from it are refused for "
                f"{math.ceil(blocked)} s more",
            )
        count = self.wrong_tokens.wrong(peer)
        limit = self.wrong_tokens.limit
        blocked_for = (
            f"; its wrong tokens are refused for {self.wrong_tokens.block:g} s"
            if count >= limit
            else ""
        )
        self.note(
            f"lobby: wrong or missing token from {peer} "
            f"({count} of {limit} in {self.wrong_tokens.window:g} s{blocked_for})"
        )
        return error

    def _benched(self, bot: int, left: float) -> BotLostError:
        return BotLostError(
            FaultKind.STARTUP,
            f"{self.bots[bot].name} is benched for {math.ceil(left)} s more: "
            f"{self._why_benched.get(bot, 'it kept the tables waiting')}; "
            "each next bench is twice as long",
        )

    def seat(self, bot: int, session: BotSession) -> None:
        """``session`` (handshaken) is ``bot`` from now on; wakes whoever waits for a change."""
        self.sessions[bot] = session
        self._absent_since.pop(bot, None)
        where = "" if session.address is None else f" from {session.address[0]}"
        self.note(f"{self.bots[bot].name} connected{where}")
        self._changed.set()
        self._changed = trio.Event()

    def _identify(self, conversation: Conversation, line: bytes | None, refusal: str | None) -> int:
        """The bot a connection's first line names by its token (the line judged by
        ``conversation``), or the refusal to raise."""
        if refusal is not None:
            raise BotLostError(FaultKind.STARTUP, refusal)
        if line is None:
            kind = conversation.lost(Loss.ENDED)  # (or a line too long: both end it)
            raise BotLostError(kind, "the connection ended before ready")
        try:
            ready = conversation.receive_ready(line)
        except HandshakeError as error:
            raise BotLostError(error.kind, error.detail) from None
        bot = find_token(ready.token, self._by_token)
        if bot is None:
            raise WrongTokenError(FaultKind.STARTUP, "wrong or missing token in ready")
        return bot

    def absent_session(self, bot: int) -> BotSession:
        """A dead session for a match ``bot`` misses: default decisions, a fault recorded."""
        session = BotSession(self.bots[bot], self.control)
        benched = self.bench.left(bot)
        if benched is not None:
            detail = f"benched: {self._benched(bot, benched).detail}"
        elif self.ever_connected(bot):
            detail = f"lost its connection and did not reconnect within {self.wait:g} s"
        else:
            detail = f"did not connect within {self.wait:g} s (no-show)"
        session.death = BotLostError(FaultKind.STARTUP, detail)
        return session

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                for session in self.sessions.values():
                    nursery.start_soon(_close_session, session)


class WrongTokenError(BotLostError):
    """A ``ready`` whose token is no registered bot's: counted against its address."""


async def _close_session(session: BotSession) -> None:
    await session.aclose(shutdown_grace=0)


@asynccontextmanager
async def open_lobby(
    bots: Sequence[BotSpec],
    tokens: Mapping[int, str],
    control: TimeControl,
    *,
    host: str,
    port: int,
    wait: float,
    note: Callable[[str], None] = lambda _text: None,
) -> AsyncIterator[RemoteLobby]:
    """A lobby listening on ``host:port`` (``OSError`` if it cannot); closed on the way out."""
    lobby = RemoteLobby(bots, tokens, control, wait=wait, note=note)
    listeners = await lobby.listen(host, port)  # outside the nursery: a plain OSError
    async with trio.open_nursery() as nursery:
        try:
            nursery.start_soon(lobby.serve, listeners)
            lobby.start_clock()
            yield lobby
        finally:
            await lobby.aclose()
            nursery.cancel_scope.cancel()


async def _refuse(connection: Connection, error: BotLostError) -> None:
    """Tell a connection why it is refused (best effort, briefly) and close it."""
    with trio.move_on_after(TELL_TIMEOUT), contextlib.suppress(ConnectionBrokenError):
        await connection.send(startup_fault(error))
    await connection.aclose()
