"""``play_match``: one match between bot sessions, under time control, with every fault judged.

The referee's loop is the engine's: ask ``current_seat()``, get a choice,
``apply`` it.  Everything else here is about the choice coming from a program
that may be slow, broken or hostile:

* Each request carries the seat's time left (move time plus bank); the
  referee waits that long plus the margin.  A reply is matched to its request
  by id only: a reply to a request that timed out is *late* and discarded
  (the session remembers timed-out ids across matches), never applied to a
  later request.
* Every fault is recorded with its kind and detail, told to the bot in a
  ``fault`` message, and the request's ``default`` choice is applied, so the
  table plays on (SPEC.md 13).  A seat is disqualified at its
  ``max_faults``-th fault and at once when its stream is gone or out of step
  (crash, eof, line_too_long, a start-up failure or protocol version
  mismatch, or input it stopped reading); from then on the default policy
  plays for it and it is sent no requests.  Disqualified seats rank below all
  others.  A malformed line resolves the waiting request; a protocol fault
  (a reply with a wrong id, a second ready) does not.
* Nothing a bot does raises out of ``play_match``: a lost bot is a dead
  session (``BotLostError`` is caught at each await on a bot), and a session
  dead before the match gets the default policy from the first decision.

Each seat is told what happened in ``events`` messages built from
``Match.events(viewer=seat)`` (the engine's one door for hidden cards), sent
just before its own requests, just after each hand's end and before
``match_end``, one message per hand at most (SPEC.md 6.2).  The referee's own
event, ``seat_disqualified``, goes into every seat's stream at the point it
happened.

The match log (``referee.match.log``) records all of it; ``referee.tools.replay``
re-runs the engine from the log and checks it.
"""

from __future__ import annotations

import base64
import os
import platform
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import msgspec
import trio

from engine import events as ev
from engine.deal import Deal
from engine.events import RecurringMemo
from engine.rules import Rules
from engine.state import MAX_PLAYERS, MIN_PLAYERS, Match
from protocol.conversation import Late, LineFault, Verdict
from protocol.events import SeatDisqualified
from protocol.faults import FaultKind, disqualifies
from protocol.messages import (
    PROTOCOL_VERSION,
    Choice,
    Fault,
    Reply,
    Request,
    encode,
)
from referee.match import records
from referee.match.convert import (
    CARD_TEXT,
    LOG_DIFFERS_FROM_WIRE,
    WIRE_BY_ID,
    apply_choice,
    apply_default,
    build_request,
    events_line,
    log_event,
    match_end,
    match_start,
    remember_wire,
    wire_event,
    wire_views,
)
from referee.match.failures import first_instance
from referee.match.log import LOG_FORMAT, MatchLog
from referee.match.result import FaultRecord, MatchResult, SeatResult, final_places
from referee.transport.session import BotLostError, BotSession, referee_version
from referee.transport.timecontrol import SeatClock, TimeControl

START_HAND = 0  # the ``hand`` of faults before the first hand (a bot dead at the start)
# A match alone in its trio run first waits this long for a reply by blocking the run
# (``BotSession.receive_line``'s ``brief_wait``), spending the first ``SPIN_WAIT`` of it
# looking rather than sleeping: a quick bot's reply then skips trio's run loop
# (docs/speed.md, "The match loop").  ``NEWMARKET_SPIN`` sets the spin in microseconds
# (0 turns it off); the ``newmarket`` command refuses a value that is not one.
BRIEF_WAIT = 0.001
ENV_SPIN = "NEWMARKET_SPIN"
DEFAULT_SPIN_MICROSECONDS = 500
MAX_SPIN_MICROSECONDS = 1000  # BRIEF_WAIT: the spin is the first part of it


SPACES_KEPT = 64
"""Bytes a received message's line keeps in the log that the message does not need (JSON
whitespace; a repeated key's value, which the last one overrides); past it, their count.

Whitespace outside strings is free (SPEC.md section 4) and means nothing, and JSON
leaves a repeated key to its reader (msgspec keeps the last), but a bot that pads every
reply with either (random spaces, tabs and CRs: about 1.6 bits a byte that no
compressor removes; random letters, 6) made each match's kept record hundreds of times
a normal one's, on a disk every participant shares.
"""


def _as_logged(line: bytes, reply: Reply | None) -> tuple[str, int, int] | None:
    """A received message's ``line`` as the log keeps it, when it holds more than
    ``SPACES_KEPT`` bytes the message does not need: ``(line, spaces, unread)``; else None.

    ``spaces``: its JSON whitespace outside strings.  ``unread``, for a reply (``reply``,
    as decoded): what else it holds beyond the reply encoded, a repeated key's value
    nobody reads.  Past ``SPACES_KEPT`` unread bytes the reply encoded is kept (both
    counts left out); else past ``SPACES_KEPT`` spaces the line without them.  Only for
    a line the protocol's decoder read as a message (``Conversation.receive``), so UTF-8
    and nested no deeper than ``MAX_NESTING``: msgspec's formatter would raise
    RecursionError on deep nesting.  A malformed line is kept as it came (its fault
    quotes it, at most ``max_faults`` of them a match).  The formatter reads the line
    once; counting its spaces first, three passes that mispredict a branch a byte, cost
    thirty times that.
    """
    if len(line) <= SPACES_KEPT:
        return None
    tight = msgspec.json.format(line, indent=-1)
    spaces = len(line) - len(tight)
    if reply is not None:
        plain = msgspec.json.encode(reply)  # (not ``encode``: no line-length check to raise)
        unread = len(tight) - len(plain)
        if unread > SPACES_KEPT:
            return plain.decode("utf-8"), spaces, unread
    if spaces > SPACES_KEPT:
        return tight.decode("utf-8"), spaces, 0
    return None


def spin_wait(setting: str | None, cores: int) -> float:
    """Seconds of ``SPIN_WAIT`` for a ``NEWMARKET_SPIN`` setting (None: unset) and the
    cores this process may run on: none on one core, where looking only takes turns
    with the bots.  Raises ``ValueError`` saying what is wrong with the setting."""
    microseconds = DEFAULT_SPIN_MICROSECONDS
    if setting is not None and setting.strip():
        try:
            microseconds = int(setting)
        except ValueError:
            microseconds = -1
        if not 0 <= microseconds <= MAX_SPIN_MICROSECONDS:
            raise ValueError(
                f"{ENV_SPIN}: expected microseconds from 0 to {MAX_SPIN_MICROSECONDS} "
                f"(0: never spin), got {setting!r}"
            )
    return microseconds / 1e6 if cores > 1 else 0.0


def _spin_wait_here() -> float:
    # A bad setting is the command line's to report (``referee.cli``); a library user
    # importing this gets the default rather than an import error.
    cores = len(os.sched_getaffinity(0))
    try:
        return spin_wait(os.environ.get(ENV_SPIN), cores)
    except ValueError:
        return spin_wait(None, cores)


SPIN_WAIT = _spin_wait_here()
# [matches in play] in this trio run, shared by its ``play_match`` calls.
_MATCHES_IN_PLAY: trio.lowlevel.RunVar[list[int]] = trio.lowlevel.RunVar("matches_in_play")


class _Seat:
    """One seat's state during a match."""

    def __init__(self, index: int, session: BotSession, control: TimeControl) -> None:
        self.index = index
        self.session = session
        self.clock = SeatClock(control)
        self.faults: list[FaultRecord] = []
        self.disqualified = False
        self.cursor = 0  # the ``_Feed`` index of the first event not yet sent to this seat
        self.delivering: trio.Event | None = None  # set when a background write is done
        self.decisions = 0
        self.defaults = 0
        self.think = 0.0
        self.boodle_chips = 0
        self.hands_won = 0
        self.cpu_at_start = session.cpu_seconds()

    @property
    def playing(self) -> bool:
        """Asked for its decisions: not disqualified and its session alive."""
        return not self.disqualified and self.session.alive

    def take_events(
        self, feed: _Feed, *, through_hand_end: bool = False, logging: bool = True
    ) -> list[tuple[bytes, list[Any]]]:
        """The events not yet sent to this seat as ``events`` lines, one per hand at most.

        ``through_hand_end``: only up to the last ``hand_ended`` (SPEC.md 6.2).
        Each line comes with its events for the transcript (``wire_items``),
        or an empty list when there is no log file (``logging`` False).
        """
        start = self.cursor
        hand_ends = feed.hand_ends
        if not through_hand_end and (not hand_ends or hand_ends[-1] <= start):
            # The usual case, before each request: the hand's events since the last
            # request, all in one line.
            stop = feed.end
            if stop == start:
                return []
            self.cursor = stop
            return [self._line(feed, start, stop, logging)]
        ends = [end for end in hand_ends if end > start]
        stop = (ends[-1] if ends else start) if through_hand_end else feed.end
        lines: list[tuple[bytes, list[Any]]] = []
        first = start
        for end in (*(e for e in ends if e <= stop), stop):
            if end > first:
                lines.append(self._line(feed, first, end, logging))
                first = end
        self.cursor = stop
        return lines

    def _line(self, feed: _Feed, first: int, end: int, logging: bool) -> tuple[bytes, list[Any]]:
        """The ``events`` line of the feed's entries ``first`` to ``end`` as this seat sees
        them, with its transcript items (``take_events``)."""
        base = feed.base
        part: list[Any] = feed.jsons[first - base : end - base]
        private = feed.private
        if private and private[-1] >= first:
            index = self.index
            for at in private:  # the few events whose view differs per seat
                if first <= at < end:
                    part[at - first] = part[at - first][index]
        return events_line(part), wire_items(feed, first, end) if logging else []

    def has_hand_end(self, feed: _Feed) -> bool:
        """True if a ``hand_ended`` not yet sent to this seat is in the feed."""
        return bool(feed.hand_ends) and feed.hand_ends[-1] > self.cursor


class _Feed:
    """The events for the seats, in order, each encoded once, shared by every seat.

    Two lists in step: ``jsons``, each event's JSON (bytes every seat is sent,
    or a tuple of each seat's bytes for an event whose view differs per seat),
    and, only with a log file (``append``'s ``logging``), ``numbers``, the
    log's event number ``n`` of each, or -1 for the referee's own event.  Each
    seat keeps its own cursor (``_Seat.cursor``); indexes count from the
    match's first event, and entries every live seat has been sent are dropped
    (``trim``).  One shared list, not an outbox per seat, because a public
    event is then one append, not one per seat, for every card of the match;
    and a seat's line is one slice of ``jsons``.
    """

    __slots__ = ("base", "hand_ends", "jsons", "numbers", "private")

    def __init__(self) -> None:
        self.jsons: list[bytes | tuple[bytes, ...]] = []
        self.numbers: list[int] = []
        self.base = 0  # the index of jsons[0]
        self.hand_ends: list[int] = []  # the index just after each hand_ended not yet trimmed
        self.private: list[int] = []  # the index of each event with a view per seat

    @property
    def end(self) -> int:
        return self.base + len(self.jsons)

    def append(self, number: int, json: bytes | tuple[bytes, ...], logging: bool) -> None:
        if logging:
            self.numbers.append(number)
        self.jsons.append(json)

    def trim(self, low: int) -> None:
        """Drop the entries before index ``low`` (every live seat has been sent them)."""
        if low > self.base:
            del self.jsons[: low - self.base]
            del self.numbers[: low - self.base]
            self.base = low
            self.hand_ends = [end for end in self.hand_ends if end > low]
            self.private = [at for at in self.private if at >= low]


def wire_items(feed: _Feed, first: int, end: int) -> list[Any]:
    """An ``events`` line in the transcript: each engine event's number ``n`` (its JSON is
    regenerated from the log's event line), or the referee's own event itself (public:
    its JSON is bytes)."""
    base = feed.base
    return [
        n if n >= 0 else msgspec.Raw(cast(bytes, json))
        for n, json in zip(
            feed.numbers[first - base : end - base],
            feed.jsons[first - base : end - base],
            strict=True,
        )
    ]


class _Referee:
    """The state of one ``play_match`` call; see the module docstring.

    The work after a decision is split in two, for speed.  What the next seat
    to act needs (its new events, its request) is done before the request is
    written; the rest (the log's lines, the other seats' events) is done
    right after, while that bot thinks, so on a machine with a core to spare
    it costs the match nothing.  After a ``hand_ended`` every seat is sent
    that hand's events (SPEC.md 6.2); those writes are background tasks, one
    per seat, so a bot that stops reading delays nobody but itself and the
    other bots read their batch while the next one thinks.  Any later write
    to a seat first waits for its background write (``settled``), so each
    seat's stream stays in order.
    """

    def __init__(
        self,
        sessions: Sequence[BotSession],
        rules: Rules,
        seed: int,
        control: TimeControl,
        match_id: str,
        log: MatchLog,
        dealer: int | None = None,
        deals: Sequence[Deal] = (),
        chips: Sequence[int] | None = None,
    ) -> None:
        self.rules = rules
        self.seed = seed
        self.control = control
        self.match_id = match_id
        self.log = log
        # Without a log file no record is built at all: a match played for its result
        # alone (``newmarket match`` without --log, benchmarks) skips the transcript.
        self.logging = log.path is not None
        self.match = Match(rules, len(sessions), seed, dealer=dealer, deals=deals, chips=chips)
        self.scripted = scripted_header(dealer, deals)
        self.seats = [_Seat(i, s, control) for i, s in enumerate(sessions)]
        self.names = [s.name for s in sessions]
        self.feed = _Feed()  # the seats' events, each encoded once
        self.converted = 0  # raw engine events converted into the feed
        self.memo: RecurringMemo = {}  # this match's recurring events, typed once (engine)
        self.typed = 0  # typed events converted (the ``n`` of the next event line)
        # Converted, not yet written to the log (only with a log file): each event and its
        # wire JSON when the log's form of it is the same (most events: the log reuses it).
        self.unlogged: list[tuple[ev.Event, bytes | None]] = []
        self.logged_typed = 0  # typed events written (the ``n`` of event lines)
        self.delivered_hand = 0  # every seat has been sent the events of hands before this
        self.nursery: trio.Nursery | None = None  # background writes (see the class doc)
        self.in_play = [0]  # this trio run's matches in play (``play``; ``BRIEF_WAIT``)

    # ------------------------------------------------------------- the match

    async def play(self) -> MatchResult:
        try:
            in_play = _MATCHES_IN_PLAY.get()
        except LookupError:
            in_play = [0]
            _MATCHES_IN_PLAY.set(in_play)
        self.in_play = in_play
        in_play[0] += 1
        try:
            return await self._play()
        finally:
            in_play[0] -= 1

    async def _play(self) -> MatchResult:
        self.started = trio.current_time()
        self.write_header()
        for seat in self.seats:
            session = seat.session
            if not session.alive:
                death = session.death
                assert death is not None
                detail = death.detail
                if session.handshaken:
                    detail = f"lost before this match: {detail}"
                await self.fault(seat, death.kind, detail, START_HAND, force_dq=True)
        self.log_new_events()
        await self.start_all()
        match = self.match
        self.delivered_hand = match.hand_number
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            while True:
                to_act = match.current_seat()
                if to_act is None:
                    break
                await self.decide(self.seats[to_act])
            self.log_new_events()
            for seat in self.seats:
                # A background write can still end in a fault (a bot that stopped
                # reading): it belongs in the result, which the log's fault lines replay.
                await self.settled(seat)
            result = self.result()
            await self.finish_all()
        for seat in self.seats:
            stderr = seat.session.take_match_stderr()
            if stderr is not None and stderr.total:
                self.log.write(
                    records.Stderr(
                        seat=seat.index,
                        text=stderr.text(),
                        bytes=stderr.total,
                        dropped=stderr.dropped,
                    )
                )
        self.log.write(records.ResultRecord.of(result))
        self.log.flush()
        return result

    def write_header(self) -> None:
        bots = []
        for seat in self.seats:
            session = seat.session
            death = session.death
            bots.append(
                records.BotEntry(
                    seat=seat.index,
                    name=session.name,
                    command=list(session.spec.command),
                    cwd=None if session.spec.cwd is None else str(session.spec.cwd),
                    transport=session.spec.transport,
                    reported_name=session.reported_name,
                    reported_version=session.reported_version,
                    alive=session.alive,
                    lost=None if death is None else records.LostInfo(death.kind, death.detail),
                )
            )
        self.log.write(
            records.Header(
                format=LOG_FORMAT,
                referee=referee_version(),
                protocol=PROTOCOL_VERSION,
                python=platform.python_version(),
                platform=sys.platform,
                started=datetime.now(UTC).isoformat(timespec="seconds"),
                match_id=self.match_id,
                seed=self.seed,
                players=len(self.seats),
                chips=list(self.match.starting_chips),  # each seat's own (a bankroll league)
                first_dealer=self.match.dealer,  # chance, from the seed (as every deal)
                # ... unless the caller scripted them (newmarket check)
                scripted=self.scripted.get("scripted", records.UNSET),  # type: ignore[arg-type]
                rules=self.rules.to_dict(),
                time_control=self.control.to_json(),
                sandbox=self.sandbox_json(),
                bots=bots,
            )
        )

    def sandbox_json(self) -> dict[str, object]:
        """The protections the bots run under (``referee.sandbox``); all seats share one."""
        for seat in self.seats:
            if seat.session.sandbox is not None:
                return seat.session.sandbox.to_json()
        return {"level": "none", "active": ["process group"], "missing": [], "limits": None}

    async def start_all(self) -> None:
        """Send ``match_start`` to every live seat."""
        rules = self.rules.to_dict()
        for seat in self.seats:
            if not seat.playing:
                continue
            chips = self.match.starting_chips
            data = encode(
                match_start(self.match_id, seat.index, self.names, rules, chips, self.control)
            )
            self.log_sent(seat, [msgspec.Raw(data[:-1])])
            try:
                await seat.session.send(data, self.control.startup_time)
            except BotLostError as error:
                await self.fault(seat, error.kind, error.detail, START_HAND, force_dq=True)

    # ------------------------------------------------------------- events

    def absorb(self) -> None:
        """Convert the engine's new events into the seats' feed (idempotent).

        Each event is typed once for every viewer (``Match.event_views``: the
        engine's one door for hidden cards) and encoded once: a public event's
        bytes are shared by every seat (``_Feed``).  The log's lines are written
        later (``log_new_events``), after the request is on its way.
        """
        match = self.match
        count = match.event_count()
        if count == self.converted:
            return
        views = match.event_views(self.converted, self.memo)
        self.converted = count
        n = self.typed
        logging = self.logging
        jsons = self.feed.jsons
        for view in views:
            omniscient = view[0]
            entry = WIRE_BY_ID.get(id(omniscient))
            if entry is not None and entry[0] is omniscient:
                # An event met before (most are): its bytes are the wire's and the log's.
                json = entry[1]
                jsons.append(json)
                if logging:
                    self.unlogged.append((omniscient, json))
                    self.feed.numbers.append(n)
                if type(omniscient) is ev.BoodleWon:
                    self.seats[omniscient.seat].boodle_chips += omniscient.chips
            else:
                self.absorb_new(view, n)
            n += 1
        self.typed = n

    def absorb_new(self, view: ev.EventViews, n: int) -> None:
        """``absorb`` of an event not met before: encoded for the wire, and counted."""
        omniscient = view[0]
        kind = type(omniscient)
        feed = self.feed
        wire = wire_views(view)
        remember_wire(omniscient, wire)
        if self.logging:
            same = isinstance(wire, bytes) and kind not in LOG_DIFFERS_FROM_WIRE
            self.unlogged.append((omniscient, cast(bytes, wire) if same else None))
        if wire is not None:
            if isinstance(wire, tuple):
                feed.private.append(feed.end)
            feed.jsons.append(wire)
            if self.logging:
                feed.numbers.append(n)
            if kind is ev.HandEnded:
                feed.hand_ends.append(feed.end)
        if kind is ev.BoodleWon:  # the seats' own statistics, kept with or without a log
            won = cast(ev.BoodleWon, omniscient)
            self.seats[won.seat].boodle_chips += won.chips
        elif kind is ev.HandEnded:
            for winner in cast(ev.HandEnded, omniscient).winners:
                self.seats[winner].hands_won += 1

    def log_sent(self, seat: _Seat, lines: list[Any]) -> None:
        """The wire transcript: what was written to a seat, line for line (``matchlog``)."""
        if not self.logging:
            return
        self.log.write(records.Sent(seat=seat.index, t=self.clock_ms(), lines=lines))

    def log_sent_with(
        self, seat: _Seat, lines: list[tuple[bytes, list[Any]]], message: bytes
    ) -> None:
        """``log_sent`` of one write: a seat's ``events`` lines (``take_events``), then a message.

        The record's list is built only when there is a log file: this runs every decision.
        """
        if self.logging:
            self.log_sent(seat, [*(items for _, items in lines), msgspec.Raw(message[:-1])])

    def clock_ms(self) -> float:
        """Milliseconds since the match began (the transcript's times)."""
        return round((trio.current_time() - self.started) * 1000, 3)

    def deliver_hand_ends(self, hand: int, asked: _Seat | None = None) -> None:
        """SPEC.md 6.2: after each ``hand_ended`` every seat is sent that hand's events.

        ``asked`` had them with its request.  What the OS takes at once is written
        here; the rest (a bot slow to read) is written by a background task.
        """
        if self.match.hand_number == self.delivered_hand:
            return
        self.delivered_hand = self.match.hand_number
        self.absorb()
        assert self.nursery is not None
        feed = self.feed
        for seat in self.seats:
            if seat is asked or not seat.session.alive or not seat.has_hand_end(feed):
                continue
            lines = seat.take_events(feed, through_hand_end=True, logging=self.logging)
            data = b"".join(line for line, _ in lines)
            self.log_sent(seat, [items for _, items in lines])
            started = seat.delivering is None
            if started:
                # Nothing of this seat's is still on its way: write what the OS takes
                # now (a pipe with room takes it all), and leave only the rest to a task.
                data = seat.session.send_now(data)
                if not data:
                    continue
            done = trio.Event()
            previous, seat.delivering = seat.delivering, done
            self.nursery.start_soon(self.write_later, seat, data, previous, done, hand, started)
        live = [seat.cursor for seat in self.seats if seat.session.alive]
        feed.trim(min(live) if live else feed.end)

    async def write_later(
        self,
        seat: _Seat,
        data: bytes,
        previous: trio.Event | None,
        done: trio.Event,
        hand: int,
        started: bool,
    ) -> None:
        """Write ``data`` to the seat after its ``previous`` write; ``started``: it is the
        rest of a ``send_now``, not yet begun otherwise."""
        try:
            if previous is not None:
                await previous.wait()
            if seat.session.alive:
                limit = self.control.move_time + self.control.margin
                if started:
                    await seat.session.send_rest(data, limit)
                else:
                    await seat.session.send(data, limit)
        except BotLostError as error:
            await self.fault(seat, error.kind, error.detail, hand)
        finally:
            done.set()
            if seat.delivering is done:
                seat.delivering = None

    async def settled(self, seat: _Seat) -> None:
        """Wait for the seat's background write, so what follows comes after it."""
        while seat.delivering is not None:
            await seat.delivering.wait()

    def log_new_events(self) -> None:
        """Write the engine's new events (and each deal's chance line) to the log.

        Without a log file nothing is kept for it (``absorb``): this only converts.
        """
        self.absorb()
        if not self.unlogged:
            return
        match = self.match
        write = self.log.write
        write_json = self.log.write_json
        for event, wire in self.unlogged:
            if type(event) is ev.CardsDealt:
                assert isinstance(event, ev.CardsDealt)
                write(
                    records.Chance(
                        hand=match.hand_number,
                        hands=[[CARD_TEXT[c] for c in hand or ()] for hand in event.hands],
                        dead=[CARD_TEXT[c] for c in event.dead_hand or ()],
                    )
                )
            if wire is None:
                write(records.EventRecord(n=self.logged_typed, event=log_event(event)))
            else:  # the very bytes msgspec makes of that record with the wire's event
                write_json(b'{"type":"event","n":%d,"event":%b}' % (self.logged_typed, wire))
            self.logged_typed += 1
        self.unlogged = []

    # ------------------------------------------------------------- one decision

    async def decide(self, seat: _Seat) -> None:
        """One decision of the seat to act: its bot's choice if valid, else the default."""
        match = self.match
        hand = match.hand_number
        if not seat.playing:
            self.deliver_hand_ends(hand - 1)
            request = build_request(match, 0, time_left_ms=0, time_bank_ms=0)
            self.apply_default(seat, request, hand)
            return
        clock = seat.clock
        request = build_request(
            match,
            seat.session.conversation.issue(),
            time_left_ms=clock.time_left_ms,
            time_bank_ms=clock.bank_ms,
        )
        choice = await self.ask(seat, request, hand)
        if choice is not None:
            fault = apply_choice(match, request, choice)
            if fault is None:
                if self.logging:
                    self.log.write(
                        records.Decision(
                            seat=seat.index,
                            hand=hand,
                            decision=request.decision,
                            choice=choice,
                            by="bot",
                        )
                    )
                return
            await self.fault(
                seat, FaultKind(fault.kind), fault.detail, hand, request=request, resolves=True
            )
        self.apply_default(seat, request, hand)

    def apply_default(self, seat: _Seat, request: Request, hand: int) -> None:
        self.log_new_events()  # the log shows what came before each decision
        apply_default(self.match, request)
        seat.defaults += 1
        self.log.write(
            records.Decision(
                seat=seat.index,
                hand=hand,
                decision=request.decision,
                choice=request.default,
                by="default",
            )
        )

    async def ask(self, seat: _Seat, request: Request, hand: int) -> Choice | None:
        """Send the request (after the seat's pending events) and wait for its reply.

        Returns the reply's choice (not yet judged), or None when a fault was
        recorded instead and the default must be applied.
        """
        connection = seat.session.connection
        if connection is not None and connection.pending():
            await self.read_idle(seat, hand)
        if seat.delivering is not None:
            await self.settled(seat)  # its hand-end write may have lost it
        if not seat.playing:
            return None
        seat.decisions += 1
        limit = seat.clock.deadline
        sent = await self.send_request(seat, request, hand, limit)
        if sent is None:
            return None
        self.while_the_bot_thinks(seat, request, hand)
        return await self.await_reply(seat, request, hand, sent, limit)

    async def send_request(
        self, seat: _Seat, request: Request, hand: int, limit: float
    ) -> float | None:
        """Write the seat's new events and the request; when it was written (None: a fault)."""
        self.absorb()
        lines = seat.take_events(self.feed, logging=self.logging)
        asked = encode(request)
        try:
            await seat.session.send(b"".join([line for line, _ in lines]) + asked, limit)
        except BotLostError as error:
            self.log_sent_with(seat, lines, asked)
            self.log_new_events()
            self.log_request(seat, request, hand)
            await self.fault(seat, error.kind, error.detail, hand, request=request, resolves=True)
            return None
        seat.session.conversation.expect(request.id)
        if self.logging:
            self.log_sent_with(seat, lines, asked)
        return trio.current_time()

    def while_the_bot_thinks(self, seat: _Seat, request: Request, hand: int) -> None:
        """The work the request did not wait for: the log and the other seats' events."""
        if hand != self.delivered_hand:
            self.deliver_hand_ends(hand - 1, asked=seat)
        if self.logging:
            self.log_new_events()
            self.log_request(seat, request, hand)
            self.log.flush()
        self.match.prepare_next_deal()

    async def await_reply(
        self, seat: _Seat, request: Request, hand: int, sent: float, limit: float
    ) -> Choice | None:
        """Judge the seat's lines until the reply to ``request``, a fault, or its deadline."""
        session = seat.session
        conversation = session.conversation
        deadline = sent + limit
        while True:
            alone = self.in_play[0] == 1
            try:
                line = await session.receive_line(
                    deadline, BRIEF_WAIT if alone else 0.0, SPIN_WAIT if alone else 0.0
                )
            except BotLostError as error:
                await self.fault(
                    seat, error.kind, error.detail, hand, request=request, resolves=True
                )
                return None
            elapsed = trio.current_time() - sent
            if line is None:
                await self.time_out(seat, request, hand, limit)
                return None
            verdict = conversation.receive(line)
            self.log_received(seat, line, verdict)
            if isinstance(verdict, Reply):
                self.take_reply(seat, verdict, elapsed)
                return verdict.choice
            if await self.judge(seat, hand, verdict, request, elapsed):
                return None  # a fault settled the request
            if not seat.playing:  # disqualified by faults while waiting
                conversation.give_up()
                return None

    async def time_out(self, seat: _Seat, request: Request, hand: int, limit: float) -> None:
        """No reply to ``request`` within ``limit`` seconds: its time is spent, a fault."""
        seat.clock.expire()
        seat.session.conversation.give_up()
        await self.fault(
            seat,
            FaultKind.TIMEOUT,
            f"no reply to request {request.id} within {limit * 1000:.0f} ms "
            f"({request.time_left_ms} ms time left + {self.control.margin_ms} ms margin)",
            hand,
            request=request,
            resolves=True,
        )

    def log_request(self, seat: _Seat, request: Request, hand: int) -> None:
        if not self.logging:
            return
        self.log.write(records.RequestRecord.of(seat.index, hand, request))

    async def read_idle(self, seat: _Seat, hand: int) -> None:
        """Judge the lines that arrived while no request was waiting (SPEC.md 13).

        Only lines already read are known to have come before the next
        request; bytes still in the pipe are read while it waits.
        """
        session = seat.session
        connection = session.connection
        while connection is not None and session.alive:
            line = connection.take_line()
            if line is None:
                return
            verdict = session.conversation.receive(line)
            self.log_received(seat, line, verdict)
            assert not isinstance(verdict, Reply), "no request is waiting"
            await self.judge(seat, hand, verdict, None, 0.0)

    async def judge(
        self,
        seat: _Seat,
        hand: int,
        verdict: Late | LineFault,
        request: Request | None,
        elapsed: float,
    ) -> bool:
        """Act on a line that is not the awaited reply (``protocol.conversation``'s verdict).

        ``request`` is the one waiting, if any.  Returns True when a fault
        settled it, False to keep waiting.
        """
        if isinstance(verdict, Late):
            message = verdict.reply
            self.log.write(records.Late(seat=seat.index, id=message.id, choice=message.choice))
            return False
        resolves = verdict.resolves
        if resolves:
            seat.clock.charge(elapsed)
            seat.think += elapsed
        await self.fault(
            seat,
            verdict.kind,
            verdict.detail,
            hand,
            request=request if resolves else None,
            request_id=verdict.request_id,
            resolves=resolves,
        )
        return resolves

    def take_reply(self, seat: _Seat, message: Reply, elapsed: float) -> None:
        """The reply to the waiting request: its time charged, and logged."""
        seat.clock.charge(elapsed)
        seat.think += elapsed
        if self.logging:
            self.log.write(
                records.ReplyRecord(
                    seat=seat.index,
                    id=message.id,
                    choice=message.choice,
                    latency_ms=round(elapsed * 1000, 3),
                )
            )

    def log_received(self, seat: _Seat, line: bytes, verdict: Verdict) -> None:
        """The wire transcript: a line the seat sent, as it came (``matchlog``), but for
        the bytes its message does not need past ``SPACES_KEPT``, counted, not kept."""
        if not self.logging:
            return
        record = records.Received(seat=seat.index, t=self.clock_ms())
        logged = None
        if isinstance(verdict, LineFault):
            if verdict.kind is not FaultKind.MALFORMED:
                logged = _as_logged(line, None)
        else:
            logged = _as_logged(line, verdict if isinstance(verdict, Reply) else verdict.reply)
        if logged is not None:
            record.line, spaces, unread = logged
            if spaces:
                record.spaces = spaces
            if unread:
                record.unread = unread
        else:
            try:
                record.line = line.decode("utf-8")
            except UnicodeDecodeError:
                record.line_base64 = base64.b64encode(line).decode("ascii")
        self.log.write(record)

    # ------------------------------------------------------------- faults

    async def fault(
        self,
        seat: _Seat,
        kind: FaultKind,
        detail: str,
        hand: int,
        *,
        request: Request | None = None,
        request_id: int | None = None,
        resolves: bool = False,
        force_dq: bool = False,
    ) -> None:
        """Record a fault, tell the bot, and disqualify when the rule says so.

        ``resolves``: the fault settles ``request`` and its default is applied.
        A lost session (crash, eof, line_too_long, ...) is told if it still
        can be, then its process tree is ended.
        """
        if hand != START_HAND:
            # Every event before the fault is logged and in every outbox first, so
            # the log reads in order and seat_disqualified lands where it happened.
            self.log_new_events()
        seat.faults.append(FaultRecord(str(kind), hand, detail))
        lost = not seat.session.alive
        disqualify = not seat.disqualified and (
            force_dq or lost or disqualifies(kind, len(seat.faults), self.control.max_faults)
        )
        applied = request.default if request is not None and resolves else None
        if request_id is None and request is not None:
            request_id = request.id
        self.log.write(
            records.FaultLine(
                seat=seat.index,
                hand=hand,
                kind=str(kind),
                detail=detail,
                id=request_id,
                applied=applied,
                count=len(seat.faults),
                disqualified=disqualify,
            )
        )
        if disqualify:
            self.disqualify(seat, kind)
        told = Fault(
            id=request_id,
            kind=str(kind),
            detail=detail,
            disqualified=seat.disqualified,
            applied=applied,
        )
        await self.tell_fault(seat, encode(told), hand, lost=lost)

    def disqualify(self, seat: _Seat, kind: FaultKind) -> None:
        """SPEC.md 9.18: every seat is told, at the point of the game where it happened
        (before the first hand_started for a seat that failed to start)."""
        seat.disqualified = True
        disqualified = wire_event(SeatDisqualified(seat=seat.index, reason=str(kind)))
        self.feed.append(-1, disqualified, self.logging)

    async def tell_fault(self, seat: _Seat, message: bytes, hand: int, *, lost: bool) -> None:
        """Send the bot its ``fault`` line; a lost bot's last word, then its end."""
        if lost:
            self.log_sent(seat, [msgspec.Raw(message[:-1])])
            await seat.session.tell(message)
            await seat.session.end()
            return
        try:
            await self.settled(seat)
            self.log_sent(seat, [msgspec.Raw(message[:-1])])
            await seat.session.send(message, self.control.move_time + self.control.margin)
        except BotLostError as error:
            # The bot stopped reading while being told of a fault: that is lost too.
            await self.fault(seat, error.kind, error.detail, hand)

    # ------------------------------------------------------------- the end

    def result(self) -> MatchResult:
        outcome = self.match.outcome()
        places = final_places(outcome.places, [seat.disqualified for seat in self.seats])
        seats = [
            SeatResult(
                seat=seat.index,
                name=seat.session.name,
                place=places[seat.index],
                chips=outcome.chips[seat.index],
                status="disqualified" if seat.disqualified else "ok",
                faults=list(seat.faults),
                net_chips=outcome.net_chips[seat.index],
                boodle_chips=seat.boodle_chips,
                hands_won=seat.hands_won,
                decisions=seat.decisions,
                defaults=seat.defaults,
                think_ms=round(seat.think * 1000),
                cpu_ms=cpu_ms(seat),
            )
            for seat in self.seats
        ]
        return MatchResult(
            match_id=self.match_id,
            seed=self.seed,
            rules=self.rules.to_dict(),
            hands=outcome.hands_played,
            seats=seats,
            log_path=self.log.path,
            reason=outcome.reason,
            wall_ms=round((trio.current_time() - self.started) * 1000),
        )

    async def finish_all(self) -> None:
        """Tell every live bot the rest of the events and the end, all at once."""
        told = encode(
            match_end(
                self.match_id, self.match.outcome(), [seat.disqualified for seat in self.seats]
            )
        )

        async def finish(seat: _Seat) -> None:
            await self.settled(seat)
            if not seat.session.alive:
                return
            lines = seat.take_events(self.feed, logging=self.logging)
            self.log_sent_with(seat, lines, told)
            try:
                await seat.session.send(
                    b"".join(line for line, _ in lines) + told, self.control.startup_time
                )
            except BotLostError as error:
                self.log.write(
                    records.Lost(seat=seat.index, kind=str(error.kind), detail=error.detail)
                )

        async with trio.open_nursery() as nursery:
            for seat in self.seats:
                if seat.session.alive:
                    nursery.start_soon(finish, seat)


def cpu_ms(seat: _Seat) -> int | None:
    """The CPU time the seat's bot used since the match began, in ms (None: unmeasured)."""
    now = seat.session.cpu_seconds()
    if now is None:
        return None
    return round((now - (seat.cpu_at_start or 0.0)) * 1000)


def scripted_header(dealer: int | None, deals: Sequence[Deal]) -> dict[str, object]:
    """The header's ``scripted`` field when ``dealer`` or ``deals`` override the seed's
    (docs/match-log.md), else nothing: without it a scripted log could not be verified."""
    if dealer is None and not deals:
        return {}
    return {
        "scripted": {
            "first_dealer": dealer,
            "deals": [
                {
                    "hands": [[str(c) for c in hand] for hand in deal.hands],
                    "dead": list(map(str, deal.dead)),
                }
                for deal in deals
            ],
        }
    }


async def play_match(
    bots: Sequence[BotSession],
    rules: Rules,
    seed: int,
    *,
    time_control: TimeControl,
    match_id: str,
    log_path: Path | None = None,
    dealer: int | None = None,
    deals: Sequence[Deal] = (),
    chips: Sequence[int] | None = None,
) -> MatchResult:
    """Play one match; ``bots[i]`` sits in seat ``i``.

    ``dealer`` and ``deals`` script the first dealer and the first hands'
    deals (``engine.Match``'s arguments, for scenarios such as ``newmarket
    check``); by default both come from the seed.  ``chips`` gives each seat
    its own starting chips (a bankroll league); by default every seat starts
    with the rules' ``starting_chips``.  The log's header records them.

    Never raises for anything a bot does.  Raises ``ValueError`` for a table
    of the wrong size or rules that cannot seat it, and ``OSError`` if the
    log cannot be written.
    """
    if not MIN_PLAYERS <= len(bots) <= MAX_PLAYERS:
        raise ValueError(f"bots: a table seats {MIN_PLAYERS} to {MAX_PLAYERS}, got {len(bots)}")
    if len({id(bot) for bot in bots}) != len(bots):
        raise ValueError("bots: one session cannot sit in two seats")
    log = MatchLog(log_path)
    try:
        referee = _Referee(bots, rules, seed, time_control, match_id, log, dealer, deals, chips)
        return await referee.play()
    except BaseExceptionGroup as group:
        # The referee's nursery wraps a log write that failed mid-match; callers were
        # promised the OSError itself (a league reports it in one line and stops).
        log_failure = first_instance(group, OSError)
        if log_failure is None or group.split(OSError)[1] is not None:
            raise  # something else too (a cancellation, Ctrl-C): not ours to simplify
        raise log_failure from None
    finally:
        log.close()
