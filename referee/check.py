"""``newmarket check``: one bot through scripted scenarios, judged by the real referee.

A conformance check is only worth trusting if it judges a bot exactly as a
league would, so this module adds no judge of its own.  Every scenario is a
real ``play_match`` on the bot's one session, with the referee's own fault
machinery (``malformed``, ``illegal``, ``timeout``, ``protocol``, ``crash``...)
deciding whether each reply is acceptable: a conformant bot is one that
collects zero faults.  What the check adds is only what a league does not
need:

* **Scripted tables.**  A scenario fixes the rules, the seat, the first
  dealer and (for the awkward cases) the deal itself (``play_match``'s
  ``dealer`` and ``deals``), so a single legal lead, a stop at once, going out
  on a lead, a passed lead, a blocked hand, an auction the bot must bid in
  and the rest happen whatever the bot chooses.  Each scenario says what it
  must have shown the bot (``Expect``); if a scenario ever fails to, that is
  a bug of the check, reported as such, never blamed on the bot.
* **Opponents in the process.**  The other seats are tiny scripted bots on
  in-memory streams (``open_stream_bot``): no process to start, nothing that
  can be slow, and policies a scenario needs (an auctioneer, a bot that hangs
  up so that the bot under test sees ``seat_disqualified``).
* **The lifecycle.**  All scenarios run on one process, in order, with a
  message of an unknown type between two matches (SPEC.md 2: it must be
  ignored); then ``shutdown``, after which the process must exit with status
  0; then a second process whose input simply ends, which must exit 0 too.
* **A transcript for people.**  On a failure the lines sent to the bot are
  taken from the connection (``Connection.on_send``) and interleaved with the
  match log's records for the bot's seat (its replies, the referee's
  verdicts, the defaults applied), so the reader sees the failing step in
  context, numbered, next to the bot's own stderr.

The check stops at the first failure: everything after it would be judged on
a bot already known to be wrong, and the first transcript is the useful one.

**Random matches** (``random_scenarios``, ``newmarket check --matches N``)
come after the scripted ones: the bot in each seat in turn, under the rules
the user chose, against in-process opponents that pick uniformly among the
legal choices, every deal and choice from one recorded seed.  They have no
``Expect``: they stress a bot where the scripts cannot reach (long matches,
eliminations, whatever the rules' options make happen), judged the same way.

The match logs go to a temporary directory that is always removed (the
report carries the transcript), unless the caller keeps them in a directory
of its own (``keep_logs``, ``--log-dir``).  A scripted table's log header names
the dealer and deals the script chose (``play_match`` writes them), so every kept
log replays and verifies with ``newmarket replay`` like a league's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import random
import tempfile
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Final

import msgspec
import trio
import trio.testing

from engine import CARDS, Deal, Rules, preset
from protocol.framing import LineFramer
from protocol.messages import (
    PROTOCOL_VERSION,
    Choice,
    Hello,
    Ready,
    Reply,
    encode,
)
from protocol.timing import DEFAULT_SHUTDOWN_GRACE_MS
from referee.bots import BotSpec
from referee.dealkey import DealKey
from referee.match import MatchResult, play_match
from referee.matchlog import read_log
from referee.sandbox import Sandbox
from referee.session import (
    BotLostError,
    BotSession,
    open_bot,
    open_stream_bot,
    referee_version,
)
from referee.timecontrol import TimeControl

Message = dict[str, Any]
SHUTDOWN_GRACE: Final = DEFAULT_SHUTDOWN_GRACE_MS / 1000
UNKNOWN_MESSAGE: Final = (
    b'{"type":"notice","text":"newmarket check: a message type this protocol version '
    b'does not define; a bot must ignore it (SPEC.md 2)"}\n'
)
"""Sent between two matches: a later revision may add message types (SPEC.md 2)."""

KINDS: Final = ("stake", "dead_hand", "bid", "lead")
LIFECYCLE: Final = ("handshake", "shutdown", "end of input")


# ---------------------------------------------------------------- opponents


class HangUp:
    """An opponent policy's answer that closes its connection instead of replying."""


Policy = Callable[[Message], "Choice | HangUp"]


def by_default(request: Message) -> Choice | HangUp:
    """Reply with the request's ``default``: always legal, and keeps every run predictable."""
    choice: Choice = request["default"]
    return choice


def auctioneer(request: Message) -> Choice | HangUp:
    """Auction the dead hand whenever allowed and bid 1 chip in every auction."""
    if request["decision"] == "dead_hand" and "auction" in request["legal"]:
        return "auction"
    if request["decision"] == "bid":
        return min(1, int(request["max_bid"]))
    return by_default(request)


def hang_up(request: Message) -> Choice | HangUp:
    """Close the connection at the first request (the referee disqualifies the seat: eof)."""
    return HangUp()


def random_policy(rng: random.Random) -> Policy:
    """Any legal choice, uniformly (a bid: any whole number allowed); stakes by default."""

    def choose(request: Message) -> Choice | HangUp:
        legal = request.get("legal")
        if isinstance(legal, list) and legal:
            choice: Choice = rng.choice(legal)
            return choice
        if request["decision"] == "bid":
            return rng.randint(int(request["min_bid"]), int(request["max_bid"]))
        return by_default(request)

    return choose


async def play_opponent(stream: trio.abc.Stream, name: str, policy: Policy) -> None:
    """A scripted bot on one end of a stream: ready, then ``policy`` for each request."""
    framer = LineFramer()
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        while True:
            data = await stream.receive_some(65536)
            if not data:
                return
            for line in framer.feed(bytes(data)):
                message = msgspec.json.decode(line)
                kind = message.get("type") if isinstance(message, dict) else None
                if kind == "hello":
                    await stream.send_all(encode(Ready(name=name, protocol=PROTOCOL_VERSION)))
                elif kind == "request":
                    choice = policy(message)
                    if isinstance(choice, HangUp):
                        await stream.aclose()
                        return
                    await stream.send_all(encode(Reply(id=message["id"], choice=choice)))
                elif kind == "shutdown":
                    return


# ---------------------------------------------------------------- scenarios


@dataclasses.dataclass(frozen=True)
class Seen:
    """What the bot was sent in one scenario: its requests and its events, in order."""

    requests: list[Message]
    events: list[Message]

    def leads(self) -> list[Message]:
        return [r for r in self.requests if r["decision"] == "lead"]


@dataclasses.dataclass(frozen=True)
class Expect:
    """Something a scenario must show the bot, whatever the bot chooses."""

    what: str
    test: Callable[[Seen], bool]


def asked(kind: str, legal: Sequence[str] | None = None) -> Expect:
    """The bot was asked a ``kind`` decision (with exactly ``legal``, if given)."""
    shown = f" with legal {list(legal)}" if legal is not None else ""

    def test(seen: Seen) -> bool:
        return any(
            r["decision"] == kind and (legal is None or r["legal"] == list(legal))
            for r in seen.requests
        )

    return Expect(f"a {kind} request{shown}", test)


def told(event: str, **fields: object) -> Expect:
    """The bot was sent an event of type ``event`` with these field values."""
    shown = "".join(f" {key}={value!r}" for key, value in fields.items())

    def test(seen: Seen) -> bool:
        return any(
            e.get("type") == event and all(e.get(k) == v for k, v in fields.items())
            for e in seen.events
        )

    return Expect(f"a {event} event{shown}", test)


def never_asked() -> Expect:
    return Expect("no request at all", lambda seen: not seen.requests)


def every_lead_single() -> Expect:
    """At least two lead requests, each with exactly one legal card."""
    return Expect(
        "lead requests with a single legal card each",
        lambda seen: len(seen.leads()) >= 2 and all(len(r["legal"]) == 1 for r in seen.leads()),
    )


def passed_lead_changes_suit(suit: str) -> Expect:
    """After a passed lead, the bot's lead excludes ``suit`` although its hand holds one."""

    def test(seen: Seen) -> bool:
        return any(
            any(card[1] == suit for card in r["hand"])
            and all(card[1] != suit for card in r["legal"])
            for r in seen.leads()
        )

    return Expect(f"a lead whose legal cards leave out the {suit} the bot holds", test)


@dataclasses.dataclass(frozen=True)
class Scenario:
    """One scripted match: the bot in ``seat``, scripted opponents everywhere else."""

    name: str
    about: str
    rules: Rules
    players: int
    seat: int
    dealer: int | None  # None: the seed chooses, as in a league
    expect: tuple[Expect, ...]
    deals: tuple[Deal, ...] = ()
    seed: int = 1
    opponents: Mapping[int, Policy] = dataclasses.field(default_factory=dict)

    def policy(self, seat: int) -> Policy:
        return self.opponents.get(seat, by_default)


def deal(hands: Mapping[int, str], dead: str, rest: Sequence[int] = (), players: int = 3) -> Deal:
    """Seats in ``hands`` get exactly those cards and the dead hand ``dead``; the cards left
    over are dealt one at a time to the seats in ``rest`` (to the dead hand if it is empty)."""
    given = {seat: cards.split() for seat, cards in hands.items()}
    dead_cards = dead.split()
    used = {card for cards in given.values() for card in cards} | set(dead_cards)
    left = [str(card) for card in CARDS if str(card) not in used]
    if not rest:
        dead_cards += left
        left = []
    for index, card in enumerate(left):
        given.setdefault(rest[index % len(rest)], []).append(card)
    return Deal.of([given.get(seat, []) for seat in range(players)], dead_cards)


def _rules(name: str, **options: object) -> Rules:
    return preset(name).with_options(options)


def _scenarios() -> tuple[Scenario, ...]:
    lead = asked("lead")
    stake = asked("stake")
    return (
        # Every preset, played from a seeded deal for two hands.
        Scenario(
            "boodle",
            "boodle preset, 8 seats, two hands: fixed antes",
            _rules("boodle", hand_limit=2),
            players=8,
            seat=3,
            dealer=2,
            seed=11,
            expect=(lead, told("hand_ended")),
        ),
        Scenario(
            "michigan",
            "michigan preset: no dead hand",
            _rules("michigan", hand_limit=2),
            players=4,
            seat=1,
            dealer=0,
            seed=12,
            expect=(lead, told("cards_dealt", dead_hand_size=0)),
        ),
        Scenario(
            "new-market",
            "new-market preset: stakes of 10, change_or_pass, flat payment",
            _rules("new-market", hand_limit=2),
            players=4,
            seat=0,
            dealer=3,
            seed=13,
            expect=(stake, lead),
        ),
        Scenario(
            "newmarket",
            "newmarket preset, 5 seats: stakes of 10 from 20 chips",
            _rules("newmarket", hand_limit=2),
            players=5,
            seat=4,
            dealer=3,
            seed=14,
            expect=(stake, lead),
        ),
        Scenario(
            "stops",
            "stops preset: aces low, stakes of 4, a kitty, change_or_same",
            _rules("stops", hand_limit=2),
            players=3,
            seat=2,
            dealer=1,
            seed=15,
            expect=(stake, lead),
        ),
        # The dealer's options on the dead hand.
        Scenario(
            "exchange",
            "dead_hand_exchange=exchange: the bot deals, may swap for free",
            _rules("boodle", dead_hand_exchange="exchange", hand_limit=1),
            players=3,
            seat=0,
            dealer=0,
            seed=16,
            expect=(asked("dead_hand", ["exchange", "keep"]),),
        ),
        Scenario(
            "auction",
            "exchange_or_auction: the bot deals, then bids in an auction",
            _rules(
                "boodle",
                ante="free",
                stake_total=4,
                dead_hand_exchange="exchange_or_auction",
                hand_limit=2,
            ),
            players=3,
            seat=0,
            dealer=0,
            seed=17,
            opponents={1: auctioneer, 2: auctioneer},
            expect=(
                asked("dead_hand", ["auction", "exchange", "keep"]),
                asked("bid"),
                told("bids_revealed"),
                stake,
            ),
        ),
        Scenario(
            "purchase",
            "purchase: the bot deals and may buy the dead hand",
            _rules("stops", dead_hand_exchange="purchase", hand_limit=1),
            players=4,
            seat=1,
            dealer=1,
            seed=18,
            expect=(asked("dead_hand", ["buy", "keep"]), stake),
        ),
        Scenario(
            "purchase-broke",
            "purchase, but the bot cannot pay: a dead_hand with one choice",
            _rules("boodle", dead_hand_exchange="purchase", starting_chips=10, hand_limit=1),
            players=3,
            seat=2,
            dealer=2,
            seed=19,
            expect=(asked("dead_hand", ["keep"]),),
        ),
        # Awkward moments, from scripted deals: each happens whatever the bot chooses.
        Scenario(
            "single-lead",
            "one suit: single legal leads, each stops at once, the last goes out",
            _rules("boodle", hand_limit=1),
            players=3,
            seat=0,
            dealer=2,
            deals=(deal({0: "2H 5H 9H KH"}, "3H 6H TH", rest=(1, 2)),),
            expect=(
                every_lead_single(),
                told("run_stopped", card="2H", cause="dead", missing="3H"),
                told("went_out", seat=0),
            ),
        ),
        Scenario(
            "lead-passed",
            "change_or_pass: the lead passes to the bot, which must change suit",
            _rules("new-market", hand_limit=1),
            players=3,
            seat=1,
            dealer=2,
            deals=(deal({0: "2C 3C 5C", 1: "6C 2H 4H 7S 8S"}, "4C 9D", rest=(2,)),),
            expect=(
                told("lead_passed", from_seat=0, to_seat=1),
                passed_lead_changes_suit("C"),
                stake,
            ),
        ),
        Scenario(
            "blocked",
            "change_or_pass: nobody can change suit, the hand is blocked",
            _rules("newmarket", hand_limit=1),
            players=3,
            seat=0,
            dealer=2,
            deals=(deal({0: "2C 5C 8C", 1: "3C 7C", 2: "4C 9C TC"}, dead=""),),
            expect=(told("hand_blocked"), told("pot_shared"), asked("lead", ["2C"])),
        ),
        Scenario(
            "aces-low",
            "stops, aces low: an ace is the lowest lead, runs stop at kings",
            _rules("stops", hand_limit=1),
            players=3,
            seat=0,
            dealer=2,
            deals=(deal({0: "QC KC QD KD AS 3S"}, "2S 4S", rest=(1, 2)),),
            expect=(
                asked("lead", ["QC", "QD", "AS"]),
                Expect(
                    "a run stopped at the top of its suit by a king",
                    lambda seen: any(
                        e.get("type") == "run_stopped"
                        and e.get("cause") == "top"
                        and str(e.get("card", "")).startswith("K")
                        for e in seen.events
                    ),
                ),
                told("kitty_won", seat=0),
            ),
        ),
        Scenario(
            "eliminated",
            "never asked: the bot is knocked out and watches a hand",
            _rules("boodle", starting_chips=12, hand_limit=2),
            players=4,
            seat=0,
            dealer=0,
            seed=20,
            deals=(
                deal(
                    {1: "2C", 2: "5H 9S", 3: "6H TS", 0: "4D 5D 6D 7D 8D 9D TD JD QD KD"},
                    dead="3C",
                    players=4,
                ),
            ),
            expect=(
                told("went_out", seat=1),
                told("player_eliminated", seat=0),
                told("hand_started", hand_number=2),
                never_asked(),
            ),
        ),
        Scenario(
            "opponent-lost",
            "an opponent hangs up: the bot is told seat_disqualified",
            _rules("stops", hand_limit=1),
            players=3,
            seat=0,
            dealer=2,
            seed=21,
            opponents={1: hang_up},
            expect=(told("seat_disqualified", seat=1), stake, lead),
        ),
    )


SCENARIOS: Final = _scenarios()
"""Every scenario, in the order they run on the bot's one process."""


def secret_scenarios(
    key: DealKey | None = None, scenarios: Sequence[Scenario] = SCENARIOS
) -> tuple[Scenario, ...]:
    """``scenarios`` dealt from ``key`` (default: a fresh one) instead of their fixed seeds.

    For a competition's admission: the fixed seeds are in this open-source file,
    so a bot could tell the check's cards from a real table's and behave well only
    here.  Each scenario's seed becomes ``key.deal_seed(seed)``; what it promises
    holds whatever the cards (``tests/check/test_scenarios.py``).  Its scripted deals
    stay as written: they are the scenario.
    """
    deals = DealKey.generate() if key is None else key
    return tuple(
        dataclasses.replace(scenario, seed=deals.deal_seed(scenario.seed)) for scenario in scenarios
    )


def random_scenarios(
    rules: Rules, players: int, seed: int, count: int, label: str
) -> tuple[Scenario, ...]:
    """``count`` matches under ``rules``: the bot in seat 0, 1, ... in turn, random opponents.

    Every match seed and every opponent's choices derive from ``seed``, so the
    same arguments replay the same matches against the same bot replies.
    """
    draw = random.Random(seed)
    scenarios = []
    for number in range(1, count + 1):
        match_seed = draw.randrange(1 << 31)
        seat = (number - 1) % players
        opponents: dict[int, Policy] = {
            other: random_policy(random.Random(f"{match_seed}/{other}"))
            for other in range(players)
            if other != seat
        }
        scenarios.append(
            Scenario(
                f"random-{number}",
                f"{label}, {players} seats, seat {seat}, match seed {match_seed}",
                rules,
                players=players,
                seat=seat,
                dealer=None,
                expect=(),
                seed=match_seed,
                opponents=opponents,
            )
        )
    return tuple(scenarios)


# ---------------------------------------------------------------- transcript


@dataclasses.dataclass(frozen=True)
class Line:
    """One step of a transcript: ``<`` sent to the bot, ``>`` from it, ``!`` a verdict,
    ``=`` a default the referee applied, ``#`` a note."""

    mark: str
    text: str

    def __str__(self) -> str:
        return f"{self.mark} {self.text}"


class WireTap:
    """Every line the referee writes to the bot (``Connection.on_send``), kept until taken."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []

    def __call__(self, data: bytes) -> None:
        self.lines.extend(line for line in data.split(b"\n") if line)

    def take(self) -> list[bytes]:
        lines, self.lines = self.lines, []
        return lines


def _decode(line: bytes) -> Message:
    try:
        value = msgspec.json.decode(line)
    except msgspec.DecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def seen_of(sent: Iterable[bytes]) -> Seen:
    requests: list[Message] = []
    events: list[Message] = []
    for line in sent:
        message = _decode(line)
        if message.get("type") == "request":
            requests.append(message)
        elif message.get("type") == "events":
            events.extend(e for e in message.get("events", []) if isinstance(e, dict))
    return Seen(requests, events)


def _json(value: object) -> str:
    return msgspec.json.encode(value).decode()


def build_transcript(
    sent: Sequence[bytes], records: Sequence[Message], seat: int
) -> tuple[list[Line], int | None]:
    """The sent lines interleaved with the log's records for ``seat``.

    Returns the lines and the index of the first fault among them (None if
    there is none).  Each ``request`` record is matched to the sent request
    line with its id, so what came before it on the wire is shown before it.
    Once the seat is disqualified, the defaults the referee plays for it are
    folded into one note: they are the consequence, not the evidence.
    """
    out: list[Line] = []
    first_fault: int | None = None
    at = 0
    replies = 0
    disqualified = False
    resolving = False  # the disqualifying fault's own default is still to come
    folded = 0

    def sent_through(request_id: object) -> None:
        nonlocal at
        for index in range(at, len(sent)):
            message = _decode(sent[index])
            if message.get("type") == "request" and message.get("id") == request_id:
                out.extend(
                    Line("<", line.decode("utf-8", "replace")) for line in sent[at : index + 1]
                )
                at = index + 1
                return

    for record in records:
        if record.get("seat") != seat:
            continue
        kind = record.get("type")
        if kind == "request":
            sent_through(record.get("id"))
        elif kind == "reply":
            replies += 1
            reply = {"type": "reply", "id": record["id"], "choice": record["choice"]}
            out.append(Line(">", f"{_json(reply)}   ({record['latency_ms']:g} ms)"))
        elif kind == "late":
            reply = {"type": "reply", "id": record["id"], "choice": record["choice"]}
            out.append(Line(">", f"{_json(reply)}   (late: its request had timed out; ignored)"))
        elif kind == "fault":
            if first_fault is None:
                first_fault = len(out)
            detail = str(record["detail"])
            request_id = record.get("id")
            if request_id is not None and f"request {request_id}" not in detail:
                detail = f"request {request_id}: {detail}"
            out.append(Line("!", f"{record['kind']} fault: {detail}"))
            if record["kind"] == "crash" and not replies:
                out.append(Line("#", CRASH_HINT))
            if record.get("disqualified"):
                disqualified = True
                resolving = record.get("applied") is not None
        elif kind == "decision" and record.get("by") == "default":
            if disqualified and not resolving:
                folded += 1
            else:
                resolving = False
                out.append(Line("=", f"the referee applied the default {_json(record['choice'])}"))
        elif kind == "lost":
            if first_fault is None:
                first_fault = len(out)
            out.append(Line("!", f"{record['kind']}: {record['detail']}"))
    out.extend(Line("<", line.decode("utf-8", "replace")) for line in sent[at:])
    if folded:
        out.append(
            Line("#", f"disqualified: the referee made the bot's {folded} other decision(s)")
        )
    return out, first_fault


CRASH_HINT: Final = (
    "the process ended before it answered anything in this match: did it exit at the end "
    "of the previous match, or at a message it did not expect? One process plays many "
    "matches and ignores what it does not know (SPEC.md 2, 3.3)"
)


# ---------------------------------------------------------------- results


@dataclasses.dataclass
class Failure:
    """The first thing that went wrong: where, one line why, and the evidence."""

    stage: str
    summary: str
    transcript: list[Line] = dataclasses.field(default_factory=list)
    step: int | None = None  # index into ``transcript`` of the failing step
    stderr: str = ""
    log_path: Path | None = None
    check_bug: bool = False  # the scenario did not do what it promised: not the bot's fault

    def to_json(self) -> dict[str, object]:
        return {
            "stage": self.stage,
            "summary": self.summary,
            "step": None if self.step is None else self.step + 1,
            "transcript": [str(line) for line in self.transcript],
            "stderr": self.stderr,
            "log": None if self.log_path is None else str(self.log_path),
            "check_bug": self.check_bug,
        }


@dataclasses.dataclass
class Stage:
    """One line of the report: the handshake, a scenario, shutdown or end of input."""

    name: str
    about: str
    ok: bool
    detail: str = ""
    decisions: dict[str, int] = dataclasses.field(default_factory=dict)
    latencies_ms: list[float] = dataclasses.field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "about": self.about,
            "ok": self.ok,
            "detail": self.detail,
            "decisions": self.decisions,
            "latency_ms": latency_summary(self.latencies_ms),
        }


@dataclasses.dataclass
class CheckReport:
    """Everything ``newmarket check`` prints, as data (``to_json`` is its ``--json``)."""

    bot: BotSpec
    control: TimeControl
    stages: list[Stage] = dataclasses.field(default_factory=list)
    failure: Failure | None = None
    reported_name: str | None = None
    reported_version: str | None = None
    not_run: list[str] = dataclasses.field(default_factory=list)
    on_stage: Callable[[Stage], None] | None = None  # told each stage as it is judged
    stderr: str = ""  # everything the bot's (first) process wrote to stderr

    def add(self, stage: Stage) -> None:
        self.stages.append(stage)
        if self.on_stage is not None:
            self.on_stage(stage)

    @property
    def ok(self) -> bool:
        return self.failure is None

    def decisions(self) -> dict[str, int]:
        total = dict.fromkeys(KINDS, 0)
        for stage in self.stages:
            for kind, count in stage.decisions.items():
                total[kind] = total.get(kind, 0) + count
        return total

    def latencies_ms(self) -> list[float]:
        return [ms for stage in self.stages for ms in stage.latencies_ms]

    def to_json(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "bot": {
                "name": self.bot.name,
                "command": list(self.bot.command),
                "transport": self.bot.transport,
                "reported_name": self.reported_name,
                "reported_version": self.reported_version,
            },
            "time_control": self.control.to_json(),
            "stages": [stage.to_json() for stage in self.stages],
            "not_run": self.not_run,
            "decisions": self.decisions(),
            "latency_ms": latency_summary(self.latencies_ms()),
            "failure": None if self.failure is None else self.failure.to_json(),
            "stderr": self.stderr,
        }


def latency_summary(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    ordered = sorted(values)

    def at(fraction: float) -> float:
        return ordered[min(len(ordered) - 1, math.ceil(fraction * len(ordered)) - 1)]

    return {"median": at(0.5), "p95": at(0.95), "max": ordered[-1], "count": len(ordered)}


# ---------------------------------------------------------------- running


@asynccontextmanager
async def scripted_table(
    bot: BotSession, scenario: Scenario, control: TimeControl
) -> AsyncIterator[list[BotSession]]:
    """The bot in its seat and a fresh in-process opponent in every other seat."""
    async with trio.open_nursery() as nursery, AsyncExitStack() as stack:
        sessions: list[BotSession] = []
        for seat in range(scenario.players):
            if seat == scenario.seat:
                sessions.append(bot)
                continue
            policy = scenario.policy(seat)
            name = f"{policy.__name__.replace('_', '-')}-{seat}"
            referee_end, opponent_end = trio.testing.memory_stream_pair()
            nursery.start_soon(play_opponent, opponent_end, name, policy)
            session = await stack.enter_async_context(open_stream_bot(referee_end, name, control))
            sessions.append(session)
        yield sessions
        await stack.aclose()
        nursery.cancel_scope.cancel()


def _handshake_lines(session: BotSession) -> list[Line]:
    hello = encode(Hello(protocol=PROTOCOL_VERSION, referee=referee_version())).decode().strip()
    lines = [Line("<", hello)]
    if session.handshaken:
        ready: Message = {"type": "ready", "name": session.reported_name}
        ready["protocol"] = PROTOCOL_VERSION
        if session.reported_version:
            ready["version"] = session.reported_version
        lines.append(Line(">", _json(ready)))
    return lines


async def check_scenarios(
    session: BotSession,
    control: TimeControl,
    log_dir: Path,
    report: CheckReport,
    scenarios: Sequence[Scenario] = SCENARIOS,
) -> None:
    """Play every scenario on the bot's one session; stop at the first failure."""
    connection = session.connection
    tap = WireTap()
    if connection is not None:
        connection.on_send = tap
    for number, scenario in enumerate(scenarios, start=1):
        if report.failure is not None:
            report.not_run.append(scenario.name)
            continue
        tap.take()
        if session.exited or not session.alive:
            ended = session.death.detail if session.death is not None else _exit_text(session)
            why = (
                f"the process ended between matches ({ended}); it must keep running until "
                "shutdown (SPEC.md 3.3)"
            )
            # The same evidence whether the exit was seen here or at the next match_start:
            # a transcript whose failing step is the exit itself.
            report.failure = Failure(
                scenario.name,
                why,
                transcript=[Line("#", f"before {scenario.name}"), Line("!", why)],
                step=1,
                stderr=session.stderr_text(),
            )
            report.add(Stage(scenario.name, scenario.about, False, why))
            continue
        if number == 2:
            # SPEC.md 6.2: after match_end, a message type the bot does not know may come.
            # A bot that stopped reading is lost here and faulted at the next match_start.
            with contextlib.suppress(BotLostError):
                await session.send(UNKNOWN_MESSAGE, control.move_time + control.margin)
        path = log_dir / f"{number:02d}-{scenario.name}.jsonl"
        async with scripted_table(session, scenario, control) as sessions:
            result = await play_match(
                sessions,
                scenario.rules,
                scenario.seed,
                time_control=control,
                match_id=f"check-{number}-{scenario.name}",
                log_path=path,
                dealer=scenario.dealer,
                deals=scenario.deals,
            )
        stage, failure = judge(scenario, result, tap.take(), path, session)
        report.add(stage)
        report.failure = failure


def judge(
    scenario: Scenario, result: MatchResult, sent: list[bytes], path: Path, session: BotSession
) -> tuple[Stage, Failure | None]:
    """A played scenario's line in the report, and its failure (None if the bot passed).

    The bot fails on its first fault, on being lost while told the match's
    end, or on a session that ended; a scenario that did not show the bot
    what it promises is a failure of the check itself (``check_bug``).
    """
    records = [record for _, record in read_log(path)]
    seat = scenario.seat
    kind_of = {
        r["id"]: r["decision"] for r in records if r["type"] == "request" and r["seat"] == seat
    }
    stage = Stage(scenario.name, scenario.about, True)
    for record in records:
        if record["type"] == "reply" and record["seat"] == seat:
            kind = kind_of.get(record["id"], "?")
            stage.decisions[kind] = stage.decisions.get(kind, 0) + 1
            stage.latencies_ms.append(float(record["latency_ms"]))
    faults = result.seats[seat].faults
    lost = [r for r in records if r["type"] == "lost" and r["seat"] == seat]
    missing = [expect.what for expect in scenario.expect if not expect.test(seen_of(sent))]
    if faults:
        why = f"{faults[0].kind} fault: {faults[0].detail}"
    elif lost:
        why = f"lost while told the match's end: {lost[0]['kind']}: {lost[0]['detail']}"
    elif not session.alive:
        why = f"the session ended: {session.death.detail if session.death else 'unknown'}"
    elif missing:
        why = "the scenario did not show the bot " + "; ".join(missing)
    else:
        return stage, None
    stage.ok = False
    stage.detail = why
    transcript, step = build_transcript(sent, records, seat)
    return stage, Failure(
        scenario.name,
        why if step is None else f"step {step + 1}: {why}",
        transcript,
        step,
        session.stderr_text(),
        path,
        check_bug=not faults and not lost and session.alive,
    )


def _exit_text(session: BotSession) -> str:
    return "no process" if session.process is None else session.process.exit_text()


async def check_shutdown(session: BotSession, report: CheckReport, grace: float) -> None:
    """Send shutdown; the process must exit by itself, with status 0, within ``grace``."""
    process = session.process
    about = "shutdown, then the process exits with status 0"
    if process is None:  # a bot on a stream someone else opened (tests): nothing to wait for
        await session.aclose(shutdown_grace=0)
        return
    if process.exited.is_set():
        report.failure = Failure(
            "shutdown",
            f"the process ended before shutdown ({process.exit_text()}); it must keep running "
            "until shutdown (SPEC.md 3.3)",
            stderr=session.stderr_text(),
        )
        report.add(Stage("shutdown", about, False, report.failure.summary))
        return
    exited_after: list[float] = []

    async def watch(started: float) -> None:
        await process.exited.wait()
        exited_after.append(trio.current_time() - started)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch, trio.current_time())
        await session.aclose(shutdown_grace=grace)
    after = exited_after[0] if exited_after else math.inf
    lines = [Line("<", '{"type":"shutdown"}'), Line("#", "the referee closes the bot's input")]
    if process.status == 0 and after <= grace + 0.5:
        report.add(Stage("shutdown", about, True, f"exit status 0 after {after * 1000:.0f} ms"))
        return
    if after > grace:
        ended = process.exit_text()
        why = f"still running {grace:g} s after shutdown; ended by the referee ({ended})"
    else:
        why = f"{process.exit_text()} after shutdown; SPEC.md 6.3 asks for status 0"
    lines.append(Line("!", why))
    report.failure = Failure("shutdown", why, lines, len(lines) - 1, session.stderr_text())
    report.add(Stage("shutdown", about, False, why))


async def check_end_of_input(
    spec: BotSpec,
    control: TimeControl,
    report: CheckReport,
    grace: float,
    sandbox: Sandbox | None = None,
) -> None:
    """A second process whose input ends with no shutdown must exit with status 0 (SPEC.md 6.3)."""
    about = "a second process: its input ends without shutdown, it exits with status 0"
    async with open_bot(spec, control, sandbox=sandbox) as session:
        process = session.process
        connection = session.connection
        if not session.alive or process is None or connection is None:
            death = session.death
            why = f"the second start failed: {death.detail if death else 'no process'}"
            report.failure = Failure(
                "end of input", why, _handshake_lines(session), None, session.stderr_text()
            )
            report.add(Stage("end of input", about, False, why))
            return
        started = trio.current_time()
        await connection.send_eof()
        with trio.move_on_after(grace):
            await process.exited.wait()
        after = trio.current_time() - started
        if process.exited.is_set() and process.status == 0:
            report.add(
                Stage("end of input", about, True, f"exit status 0 after {after * 1000:.0f} ms")
            )
            return
        if process.exited.is_set():
            why = f"{process.exit_text()} when its input ended; SPEC.md 6.3 asks for status 0"
        else:
            why = f"still running {grace:g} s after its input ended (SPEC.md 6.3: exit too)"
        lines = [
            *_handshake_lines(session),
            Line("#", "the referee closes the bot's input"),
            Line("!", why),
        ]
        await session.end()
        report.failure = Failure("end of input", why, lines, len(lines) - 1, session.stderr_text())
        report.add(Stage("end of input", about, False, why))


async def run_check(
    spec: BotSpec,
    control: TimeControl,
    *,
    log_dir: Path,
    scenarios: Sequence[Scenario] = SCENARIOS,
    shutdown_grace: float = SHUTDOWN_GRACE,
    on_stage: Callable[[Stage], None] | None = None,
    sandbox: Sandbox | None = None,
) -> CheckReport:
    """Check one bot: handshake, every scenario on one process, shutdown, end of input.

    ``on_stage`` is told each stage as soon as it is judged (a slow bot's
    report can be printed as it goes).
    """
    report = CheckReport(spec, control, on_stage=on_stage)
    async with open_bot(spec, control, sandbox=sandbox) as session:
        try:
            await _check_session(session, control, log_dir, report, scenarios, shutdown_grace)
        finally:
            report.stderr = session.stderr_text()
    if report.failure is None:
        await check_end_of_input(spec, control, report, shutdown_grace, sandbox)
    return report


async def _check_session(
    session: BotSession,
    control: TimeControl,
    log_dir: Path,
    report: CheckReport,
    scenarios: Sequence[Scenario],
    shutdown_grace: float,
) -> None:
    """The handshake's verdict, the scenarios and shutdown, on the bot's first process."""
    about = "hello, then a valid ready within the start-up limit"
    if not session.alive:
        death = session.death
        why = f"{death.kind} fault: {death.detail}" if death else "the bot did not start"
        lines = [*_handshake_lines(session), Line("!", why)]
        report.failure = Failure("handshake", why, lines, len(lines) - 1, session.stderr_text())
        report.add(Stage("handshake", about, False, why))
        report.not_run = [s.name for s in scenarios] + ["shutdown", "end of input"]
        return
    report.reported_name = session.reported_name
    report.reported_version = session.reported_version
    latency = (session.startup_latency or 0.0) * 1000
    version = f" version {session.reported_version}" if session.reported_version else ""
    report.add(
        Stage(
            "handshake",
            about,
            True,
            f'ready after {latency:.0f} ms: "{session.reported_name}"{version}, '
            f"protocol {PROTOCOL_VERSION}",
        )
    )
    await check_scenarios(session, control, log_dir, report, scenarios)
    if report.failure is None:
        await check_shutdown(session, report, shutdown_grace)
    else:
        report.not_run += ["shutdown", "end of input"]


def check_bot(
    spec: BotSpec,
    control: TimeControl,
    *,
    scenarios: Sequence[Scenario] = SCENARIOS,
    shutdown_grace: float = SHUTDOWN_GRACE,
    keep_logs: Path | None = None,
    on_stage: Callable[[Stage], None] | None = None,
    sandbox: Sandbox | None = None,
) -> CheckReport:
    """``run_check`` in a fresh trio run, with its match logs in a temporary directory.

    The temporary directory is removed whatever happens (the report carries
    the failing transcript; nothing is left in /tmp); the logs are kept only
    in ``keep_logs``, if given, and then a failure names its log.
    """
    if keep_logs is not None:
        keep_logs.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as cleanup:
        if keep_logs is None:
            log_dir = Path(
                cleanup.enter_context(tempfile.TemporaryDirectory(prefix="newmarket-check-"))
            )
        else:
            log_dir = keep_logs
        report = trio.run(
            lambda: run_check(
                spec,
                control,
                log_dir=log_dir,
                scenarios=scenarios,
                shutdown_grace=shutdown_grace,
                on_stage=on_stage,
                sandbox=sandbox,
            )
        )
    if keep_logs is None and report.failure is not None:
        report.failure.log_path = None  # it was in the temporary directory
    return report


# ---------------------------------------------------------------- the report as text

WIDTH: Final = 180  # transcript lines are cut here in text output (--json keeps them whole)
BEFORE: Final = 24  # transcript lines shown before the failing step
AFTER: Final = 6  # ... and after it
NAME_WIDTH: Final = max(len(name) for name in (*LIFECYCLE, *(s.name for s in SCENARIOS)))


def _cut(text: str, width: int = WIDTH) -> str:
    """A long line's start and end with the middle left out: a request's ``legal`` and
    ``default`` lead it, and the last events of a batch (the stop) end it."""
    if len(text) <= width:
        return text
    tail = width // 3
    head = width - tail - 16
    return f"{text[:head]} …{len(text) - head - tail:>5} chars… {text[-tail:]}"


def _shown(line: Line) -> str:
    """Wire lines are cut to ``WIDTH``; verdicts and notes are shown whole."""
    return _cut(str(line)) if line.mark in "<>" else str(line)


def render_transcript(lines: Sequence[Line], step: int | None) -> list[str]:
    """Numbered lines around the failing step (marked ``→``); the first two always show."""
    if not lines:
        return []
    focus = len(lines) - 1 if step is None else step
    low = max(0, focus - BEFORE)
    high = min(len(lines), focus + AFTER + 1)
    width = len(str(len(lines)))
    head = min(2, low)
    shown = [f"  {index + 1:>{width}} {_shown(lines[index])}" for index in range(head)]
    if low > head:
        shown.append(f"  {'':>{width}} … {low - head} lines …")
    for index in range(low, high):
        pointer = "→" if index == step else " "
        shown.append(f"{pointer} {index + 1:>{width}} {_shown(lines[index])}")
    if high < len(lines):
        shown.append(f"  {'':>{width}} … {len(lines) - high} more lines …")
    return shown


def render_header(spec: BotSpec, control: TimeControl) -> str:
    return (
        f"newmarket check: {spec.name} ({' '.join(spec.command)}) over {spec.transport}, "
        f"move time {control.move_time_ms} ms, time bank {control.time_bank_ms} ms\n"
    )


def render_stage(stage: Stage) -> str:
    """One stage as one or two lines: the verdict, the name and what it is about; then the
    decisions answered, or the stage's detail (always shown when it failed)."""
    mark = "ok  " if stage.ok else "FAIL"
    out = f"  {mark}  {stage.name:<{NAME_WIDTH}}  {stage.about}\n"
    asked = ", ".join(
        f"{kind} {stage.decisions[kind]}" for kind in KINDS if kind in stage.decisions
    )
    detail = stage.detail if (not stage.ok or stage.detail) else f"answered: {asked or 'nothing'}"
    if detail:
        out += f"        {'':<{NAME_WIDTH}}  {detail}\n"
    return out


def render_stderr(text: str, limit: int | None) -> list[str]:
    """The bot's stderr, indented: its last ``limit`` lines, each ``_cut`` to ``WIDTH``; or
    (``None``, ``--show-stderr``) all of it, every line whole, as the bot wrote it."""
    lines = text.rstrip("\n").splitlines() if text.strip() else []
    if not lines:
        return ["The bot wrote nothing to stderr."]
    if limit is None:
        return ["The bot's stderr:", *(f"  | {line}" for line in lines)]
    shown = lines[-limit:]
    cut = any(len(line) > WIDTH for line in shown)
    left_out = [f"its last {len(shown)} lines"] if len(shown) < len(lines) else []
    if cut:
        left_out.append(f"lines over {WIDTH} characters cut in the middle")
    head = (
        f"The bot's stderr ({'; '.join(left_out)}; --show-stderr shows it all, whole):"
        if left_out
        else "The bot's stderr:"
    )
    return [head, *(f"  | {_cut(line)}" for line in shown)]


def render_footer(report: CheckReport, *, show_stderr: bool = False) -> str:
    out: list[str] = []
    if report.not_run:
        out.append(f"  (not run: {', '.join(report.not_run)})")
    out.append("")
    failure = report.failure
    if failure is None:
        matches = len([stage for stage in report.stages if stage.name not in LIFECYCLE])
        decisions = report.decisions()
        out.append(
            f"PASS: {len(report.stages)} checks, {matches} matches on one process, 0 faults."
        )
        out.append(
            "Decisions answered: "
            + ", ".join(f"{kind} {n}" for kind, n in decisions.items())
            + f" ({sum(decisions.values())} in all)."
        )
        summary = latency_summary(report.latencies_ms())
        if summary is not None:
            out.append(
                f"Reply latency: median {summary['median']:.1f} ms, "
                f"95th percentile {summary['p95']:.1f} ms, slowest {summary['max']:.1f} ms "
                f"(the move time is {report.control.move_time_ms} ms)."
            )
        if show_stderr:
            out.extend(["", *render_stderr(report.stderr, None)])
        return "\n".join(out) + "\n"
    if failure.check_bug:
        out.append(
            f"The scenario {failure.stage!r} did not do what it promises: a bug in newmarket "
            "check, not in the bot. Please report it with this output."
        )
    if failure.transcript:
        out.append(
            f"Transcript of {failure.stage!r} (< to the bot, > from the bot, "
            "! the referee's verdict, = a default applied, # a note):"
        )
        out.extend(render_transcript(failure.transcript, failure.step))
        out.append("")
    out.extend(render_stderr(failure.stderr, None if show_stderr else STDERR_LINES))
    out.append("")
    out.append(f"FAIL: {failure.stage}: {failure.summary}")
    if failure.log_path is not None:
        out.append(f"Match log: {failure.log_path}")
    elif failure.stage not in LIFECYCLE:
        out.append("(--log-dir DIR keeps the match logs)")
    return "\n".join(out) + "\n"


STDERR_LINES: Final = 20


def render_report(report: CheckReport) -> str:
    """The whole report as text: what ``newmarket check`` prints, stage by stage."""
    stages = "".join(render_stage(stage) for stage in report.stages)
    return render_header(report.bot, report.control) + "\n" + stages + render_footer(report)
