"""The protocol fuzzing properties, shared by ``test_fuzz.py`` (a few hundred cases, in the
test suite) and ``benchmarks/fuzz.py`` (the same properties for a long time).

Three layers, each fed what a hostile bot could send:

* ``check_framer``: any bytes, cut into any chunks, at any cap.  The lines
  that come out are those of a plain reference splitter, the cap trips
  exactly when a line passes it, and the framer never holds more than the cap.
* ``check_bot_decoder`` / ``check_referee_decoder``: any bytes, any JSON,
  message-shaped objects with wrong fields and types.  Decoding gives a
  message or ``MalformedMessageError`` with a one-line reason and a known
  ``problem``; never another exception.
* ``check_referee``: a whole match on trio's virtual clock in which the bot
  in seat 0 answers each request with a random batch of lines: random bytes,
  random JSON, replies with right, earlier, later or absurd ids, legal,
  illegal or mis-typed choices, a second ``ready``, blank lines, a line over
  the cap.  The referee never raises, the only choices it applies are legal
  ones (judged here independently of the referee, and by the engine when
  the log is replayed), and the faults it records are exactly those an
  oracle in the bot predicts from SPEC.md 13, line by line.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import msgspec
import trio
import trio.testing
from hypothesis import strategies as st

from engine import preset
from engine.rules import Rules
from protocol.framing import MAX_LINE_BYTES, LineFramer, LineTooLongError
from protocol.messages import (
    MAX_NESTING,
    MalformedMessageError,
    Ready,
    Reply,
    decode_bot_message,
    decode_json,
    decode_referee_message,
)
from referee.match.log import read_log
from referee.match.referee import play_match
from referee.match.result import MatchResult
from referee.tools.replay import verify_log
from referee.transport.session import open_stream_bot
from referee.transport.timecontrol import TimeControl

Message = dict[str, Any]

PROBLEMS = frozenset(
    {
        "not_utf8",
        "not_json",
        "not_object",
        "missing_type",
        "unknown_type",
        "missing_field",
        "unknown_field",
        "wrong_type",
        "too_deep",
    }
)

# ---------------------------------------------------------------- the framer

# Bytes rich in the framer's special characters, so lines, blanks and CRs are common.
FRAMER_BYTES = st.lists(
    st.one_of(st.sampled_from([b"\n", b"\r", b" ", b"\t", b"\r\n"]), st.binary(max_size=12)),
    max_size=40,
).map(b"".join)


@st.composite
def framer_cases(draw: st.DrawFn) -> tuple[list[bytes], int]:
    """Some bytes cut into chunks at random places, and a cap (small, so it trips often)."""
    data = draw(FRAMER_BYTES)
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=8)))
    chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    cap = draw(st.integers(1, 24))
    return chunks, cap


def reference_lines(data: bytes, cap: int) -> tuple[list[bytes], bool, bytes | None]:
    """SPEC.md 4 the plain way: (lines, whether the cap tripped, the unterminated rest)."""
    *whole, rest = data.split(b"\n")
    lines: list[bytes] = []
    for segment in whole:
        if len(segment) > cap:
            return lines, True, None
        line = segment[:-1] if segment.endswith(b"\r") else segment
        if line.strip(b" \t"):
            lines.append(line)
    if len(rest) > cap:
        return lines, True, None
    return lines, False, rest if rest.strip(b" \t\r") else None


def check_framer(chunks: list[bytes], cap: int) -> None:
    framer = LineFramer(cap)
    lines: list[bytes] = []
    tripped = False
    for chunk in chunks:
        try:
            lines.extend(framer.feed(chunk))
        except LineTooLongError as error:
            lines.extend(error.lines)
            tripped = True
            break
        finally:
            assert framer.buffered <= cap
    expected, expected_trip, rest = reference_lines(b"".join(chunks), cap)
    assert lines == expected
    assert tripped == expected_trip
    if tripped:
        assert framer.failed
        try:
            framer.feed(b"more")
        except LineTooLongError:
            pass
        else:
            raise AssertionError("a failed framer accepted more bytes")
    else:
        assert framer.end() == rest


# ---------------------------------------------------------------- the decoders

FIELDS = ["type", "id", "choice", "name", "protocol", "version", "token", "card", "events"]
TYPES = ["reply", "ready", "hello", "request", "events", "fault", "shutdown", "Reply", ""]

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)

# Objects shaped like messages: a (mostly) known type and known fields with any values.
MESSAGE_LIKE = st.builds(
    lambda tag, fields: {"type": tag, **fields} if tag is not None else fields,
    st.sampled_from(TYPES) | st.none() | st.integers(),
    st.dictionaries(
        st.sampled_from(FIELDS[1:]),
        st.integers(-3, 5) | st.sampled_from(["4S", "keep", "x"]) | JSON_VALUES,
        max_size=4,
    ),
)


def json_line(value: object) -> bytes:
    return json.dumps(value).encode()


# ---- pathological shapes: what breaks parsers rather than protocols

OPENERS = st.sampled_from([b"[", b'{"a":', b'{"type":', b'{"choice":[', b'{"id":{"x":'])


@st.composite
def deep_nesting(draw: st.DrawFn) -> bytes:
    """Arrays and objects nested anywhere from just under the bound to ~20 000 deep.

    Closed, unclosed or cut short, alone or as a reply's choice: a recursive
    decoder raises ``RecursionError`` on these, past every error it names.
    """
    depth = draw(st.integers(MAX_NESTING - 2, MAX_NESTING + 2) | st.integers(0, 20_000))
    opener = draw(OPENERS)
    inner = draw(st.sampled_from([b"", b"1", b'"x"', b"null"]))
    closer = b"]" if opener == b"[" else b"]}" if opener.endswith(b"[") else b"}"
    body = opener * depth + inner + closer * draw(st.sampled_from([depth, depth // 2, 0]))
    if draw(st.booleans()):
        body = b'{"type":"reply","id":1,"choice":' + body + b"}"
    return body


def _number(digits: int, exponent: str) -> bytes:
    return b"1" * digits + exponent.encode()


HUGE_NUMBERS = st.builds(
    _number, st.integers(1, 5000), st.sampled_from(["", "e400", "e-400", ".5e99999", "E+9"])
).map(lambda n: b'{"type":"reply","id":' + n + b',"choice":' + n + b"}")

ODD_LITERALS = st.sampled_from(
    [b"NaN", b"Infinity", b"-Infinity", b"nan", b"1e999", b"-0", b"0x1F", b"01", b"+1", b"1."]
).map(lambda v: b'{"type":"reply","id":1,"choice":' + v + b"}")

LONG_STRINGS = st.builds(
    lambda size, char: b'{"type":"ready","name":"' + char * size + b'","protocol":1}',
    st.integers(60, 60_000),
    st.sampled_from([b"x", b"\\u00e9", b"\\\\", b'\\"', b"\xe2\x82\xac"]),
)

DUPLICATE_KEYS = st.sampled_from(
    [
        b'{"type":"reply","id":1,"id":2,"choice":1}',
        b'{"type":"reply","type":"ready","id":1,"choice":1}',
        b'{"type":"ready","name":"a","name":"","protocol":1}',
        b'{"type":"reply","id":1,"choice":1,"choice":[1,2]}',
    ]
)

# Invalid UTF-8 (overlong, surrogate halves encoded, cut sequences), lone and
# reversed surrogate escapes, a byte-order mark, NUL raw and escaped.
ODD_TEXT = st.sampled_from(
    [
        b"\xc0\xaf",
        b"\xed\xa0\x80",
        b"\xe2\x82",
        b"\xf4\x90\x80\x80",
        b"\xff",
        b"\\ud800",
        b"\\udc00\\ud800",
        b"\\ud83d\\ude00",
        b"\x00",
        b"\\u0000",
        b"\x1b[2J\x1b]0;owned\x07",
        b"\r",
    ]
)


@st.composite
def odd_text_lines(draw: st.DrawFn) -> bytes:
    """A message-shaped line with odd bytes in a string, or a BOM before it."""
    odd = draw(ODD_TEXT)
    field = draw(st.sampled_from(["name", "choice", "type", "key"]))
    if field == "name":
        line = b'{"type":"ready","name":"a' + odd + b'","protocol":1}'
    elif field == "choice":
        line = b'{"type":"reply","id":1,"choice":"' + odd + b'"}'
    elif field == "type":
        line = b'{"type":"' + odd + b'"}'
    else:
        line = b'{"type":"reply","id":1,"choice":1,"' + odd + b'":1}'
    return (b"\xef\xbb\xbf" + line) if draw(st.booleans()) else line


PATHOLOGICAL = st.one_of(
    deep_nesting(), HUGE_NUMBERS, ODD_LITERALS, LONG_STRINGS, DUPLICATE_KEYS, odd_text_lines()
)

DECODER_INPUTS = st.one_of(
    PATHOLOGICAL,
    st.binary(max_size=80),
    JSON_VALUES.map(json_line),
    MESSAGE_LIKE.map(json_line),
    # Bytes spliced into valid JSON: broken escapes, stray bytes, cut-off objects.
    st.tuples(MESSAGE_LIKE.map(json_line), st.integers(0, 60), st.binary(max_size=4)).map(
        lambda t: t[0][: t[1]] + t[2] + t[0][t[1] :]
    ),
)


def check_bot_decoder(line: bytes) -> None:
    try:
        message = decode_bot_message(line)
    except MalformedMessageError as error:
        assert error.problem in PROBLEMS
        reason = str(error)
        assert reason and "\n" not in reason
        return
    assert isinstance(message, Ready | Reply)
    if isinstance(message, Reply):
        # Strict: what was accepted is exactly a reply with a positive id.
        data = msgspec.json.decode(line)
        assert set(data) == {"type", "id", "choice"} and message.id >= 1


def check_referee_decoder(line: bytes) -> None:
    try:
        decode_referee_message(line)
    except MalformedMessageError as error:
        assert error.problem in PROBLEMS
        assert str(error) and "\n" not in str(error)


def check_json_decoder(line: bytes) -> None:
    """``decode_json`` (the worker pipe's and the lobby's reader): a value or a named error."""
    try:
        decode_json(line)
    except MalformedMessageError as error:
        assert error.problem in {"not_utf8", "not_json", "too_deep"}
        assert str(error) and "\n" not in str(error)


# ---------------------------------------------------------------- the referee

FUZZ_CONTROL = TimeControl(move_time=1.0, time_bank=0.0, margin=0.05, max_faults=100_000)
FUZZ_RULES: dict[str, Rules] = {
    "boodle": preset("boodle").with_options({"hand_limit": 1}),
    "auction": preset("boodle").with_options(
        {"hand_limit": 1, "ante": "free", "dead_hand_exchange": "exchange_or_auction"}
    ),
    "purchase": preset("new-market").with_options(
        {"hand_limit": 1, "dead_hand_exchange": "purchase"}
    ),
}
CARD = re.compile(r"[2-9TJQKA][CDHS]")
ALL_CARDS = [rank + suit for suit in "CDHS" for rank in "23456789TJQKA"]
DEAD_HAND_WORDS = ("auction", "buy", "exchange", "keep")

REPLIES = st.tuples(
    st.just("reply"),
    st.sampled_from(["pending"] * 4 + ["previous", "next", "far", "zero"]),
    st.sampled_from(["legal"] * 2 + ["illegal"] * 2 + ["mistyped", "any"]),
)
ACTIONS = st.one_of(
    REPLIES,
    REPLIES,  # replies twice as likely as each kind of junk: the game must go on
    REPLIES,
    st.tuples(st.just("bytes"), st.binary(max_size=40).map(lambda b: b.replace(b"\n", b""))),
    st.tuples(st.just("json"), JSON_VALUES),
    st.tuples(st.just("json"), MESSAGE_LIKE),
    st.tuples(st.just("bytes"), PATHOLOGICAL.map(lambda b: b.replace(b"\n", b""))),
    st.just(("ready",)),
    st.just(("blank",)),
)
LONG_LINE = b"x" * (MAX_LINE_BYTES + 10) + b"\n"


def judge_choice(request: Message, choice: object) -> str | None:
    """SPEC.md 11, independently of the referee: None if legal, else the fault kind."""
    decision = request["decision"]
    if decision == "lead":
        if not isinstance(choice, str) or not CARD.fullmatch(choice):
            return "malformed"
        return None if choice in request["legal"] else "illegal"
    if decision == "dead_hand":
        if not isinstance(choice, str) or choice not in DEAD_HAND_WORDS:
            return "malformed"
        return None if choice in request["legal"] else "illegal"
    if decision == "bid":
        if not isinstance(choice, int) or isinstance(choice, bool) or choice < 0:
            return "malformed"
        return None if choice <= request["max_bid"] else "illegal"
    cards = len(request["boodle_cards"])
    if (
        not isinstance(choice, list)
        or len(choice) != cards
        or not all(isinstance(a, int) and not isinstance(a, bool) and a >= 0 for a in choice)
    ):
        return "malformed"
    return None if sum(choice) == request["stake_total"] else "illegal"


class FuzzBot:
    """Seat 0: answers each request with a random batch, and predicts every verdict.

    The oracle follows SPEC.md 13.  A line read while a request waits is
    judged against it; lines after the one that settled the request are
    judged just before the next request (or never, if none comes): they are
    ``tentative`` until then.  Ids: the waiting one is a reply; one whose
    request timed out or was settled by a malformed line is a late reply
    (discarded once, no fault); any other is a ``protocol`` fault.
    """

    def __init__(self, data: st.DataObject, stream: trio.abc.Stream) -> None:
        self.data = data
        self.stream = stream
        self.requests: dict[int, Message] = {}
        self.pending: int | None = None
        self.late: dict[int, None] = {}
        self.confirmed: list[str] = []
        self.tentative: list[str] = []
        self.lost = False
        self.long_lines = data.draw(st.booleans(), label="allow a line over the cap")
        self.result: MatchResult | None = None

    @property
    def expected(self) -> list[str]:
        return self.confirmed

    async def run(self) -> None:
        framer = LineFramer()
        try:
            while data := await self.stream.receive_some(65536):
                for line in framer.feed(data):
                    message = json.loads(line)
                    if message["type"] == "hello":
                        await self.stream.send_all(b'{"type":"ready","name":"fuzz","protocol":1}\n')
                    elif message["type"] == "request":
                        await self.answer(message)
                    elif message["type"] == "shutdown":
                        return
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return

    async def answer(self, request: Message) -> None:
        self.confirmed += self.tentative  # judged before this request was sent
        self.tentative = []
        if self.lost:
            return
        self.requests[request["id"]] = request
        self.pending = request["id"]
        batch = self.data.draw(st.lists(ACTIONS, max_size=4), label=f"batch {request['id']}")
        out = []
        for action in batch:
            line = self.line(action, request)
            out.append(line)
            self.judge(line)
            if self.lost:
                break
        if not self.lost and self.long_lines and self.data.draw(st.integers(0, 9)) == 0:
            out.append(LONG_LINE)
            self.judge(LONG_LINE)
        if self.pending is not None and not self.lost:
            self.confirmed.append("timeout")
            self.late[self.pending] = None
            self.pending = None
        if out:
            await self.stream.send_all(b"".join(out))

    def line(self, action: tuple[Any, ...], request: Message) -> bytes:
        kind = action[0]
        if kind == "bytes":
            return bytes(action[1]) + b"\n"
        if kind == "json":
            return json_line(action[1]) + b"\n"
        if kind == "ready":
            return b'{"type":"ready","name":"again","protocol":1}\n'
        if kind == "blank":
            return b" \t\r\n"
        _, which, how = action
        rid = {
            "pending": request["id"],
            "previous": max(1, request["id"] - 1),
            "next": request["id"] + 1,
            "far": 10**9,
            "zero": 0,
        }[which]
        return json_line({"type": "reply", "id": rid, "choice": self.choice(request, how)}) + b"\n"

    def choice(self, request: Message, how: str) -> object:
        draw = self.data.draw
        decision = request["decision"]
        if how == "any":
            return draw(JSON_VALUES)
        if how == "mistyped":
            return draw(st.sampled_from([None, True, 1.5, "10H", [1], {"a": 1}, -1, "th"]))
        if how == "illegal":
            if decision == "lead":
                return draw(st.sampled_from(ALL_CARDS))
            if decision == "dead_hand":
                return draw(st.sampled_from(DEAD_HAND_WORDS))
            if decision == "bid":
                return request["max_bid"] + draw(st.integers(0, 3))
            return [request["stake_total"] + 1] + [0] * (len(request["boodle_cards"]) - 1)
        if decision in ("lead", "dead_hand"):
            return draw(st.sampled_from(request["legal"]))
        if decision == "bid":
            return draw(st.integers(0, request["max_bid"]))
        return request["default"]

    def judge(self, raw: bytes) -> None:
        """Predict the referee's verdict on one line (``raw`` ends with its newline)."""
        verdicts = self.confirmed if self.pending is not None else self.tentative
        line = raw[:-1]
        if len(line) > MAX_LINE_BYTES:
            verdicts.append("line_too_long")
            self.lost = True
            return
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line.strip(b" \t"):
            return
        try:
            message = decode_bot_message(line)
        except MalformedMessageError:
            verdicts.append("malformed")
            if self.pending is not None:
                self.late[self.pending] = None
                self.pending = None
            return
        if isinstance(message, Ready):
            verdicts.append("protocol")
            return
        if message.id == self.pending:
            kind = judge_choice(self.requests[message.id], message.choice)
            if kind is not None:
                verdicts.append(kind)
            self.pending = None
        elif message.id in self.late:
            del self.late[message.id]
        else:
            verdicts.append("protocol")


async def default_bot(stream: trio.abc.Stream) -> None:
    framer = LineFramer()
    try:
        while data := await stream.receive_some(65536):
            for line in framer.feed(data):
                message = json.loads(line)
                if message["type"] == "hello":
                    await stream.send_all(b'{"type":"ready","name":"plain","protocol":1}\n')
                elif message["type"] == "request":
                    reply = {"type": "reply", "id": message["id"], "choice": message["default"]}
                    await stream.send_all(json_line(reply) + b"\n")
                elif message["type"] == "shutdown":
                    return
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        return


async def _fuzz_match(data: st.DataObject, rules: Rules, seed: int, log: Path) -> FuzzBot:
    pairs = [trio.testing.memory_stream_pair() for _ in range(3)]
    fuzz = FuzzBot(data, pairs[0][1])
    async with trio.open_nursery() as nursery:
        nursery.start_soon(fuzz.run)
        for _, bot_end in pairs[1:]:
            nursery.start_soon(default_bot, bot_end)
        async with (
            open_stream_bot(pairs[0][0], "fuzz", FUZZ_CONTROL) as s0,
            open_stream_bot(pairs[1][0], "plain1", FUZZ_CONTROL) as s1,
            open_stream_bot(pairs[2][0], "plain2", FUZZ_CONTROL) as s2,
        ):
            result = await play_match(
                [s0, s1, s2],
                rules,
                seed,
                time_control=FUZZ_CONTROL,
                match_id="fuzz",
                log_path=log,
            )
        nursery.cancel_scope.cancel()
    fuzz.result = result
    return fuzz


def check_referee(data: st.DataObject) -> None:
    """One fuzzed match; see the module docstring for what must hold."""
    name = data.draw(st.sampled_from(sorted(FUZZ_RULES)), label="rules")
    seed = data.draw(st.integers(0, 2**32), label="seed")
    with tempfile.TemporaryDirectory() as directory:
        log = Path(directory) / "fuzz.jsonl"
        clock = trio.testing.MockClock(autojump_threshold=0)
        fuzz = trio.run(_fuzz_match, data, FUZZ_RULES[name], seed, log, clock=clock)
        result = fuzz.result
        assert result is not None
        kinds = [fault.kind for fault in result.seats[0].faults]
        assert kinds == fuzz.expected, (kinds, fuzz.expected)
        assert all(not seat.faults for seat in result.seats[1:])
        records = [record for _, record in read_log(log)]
        verify_log(log)  # the engine re-plays every applied choice: all were legal
    # Every choice of seat 0 that was applied came in a reply to the request then waiting,
    # and is legal by SPEC.md 11 (judged here, not by the referee's code).
    waiting: Message | None = None
    last_reply: Message | None = None
    for record in records:
        if record.get("seat") != 0:
            continue
        if record["type"] == "request":
            waiting, last_reply = record, None
        elif record["type"] == "reply":
            assert waiting is not None and record["id"] == waiting["id"]
            last_reply = record
        elif record["type"] == "decision" and record["by"] == "bot":
            assert waiting is not None and last_reply is not None
            assert record["choice"] == last_reply["choice"]
            request = fuzz.requests[waiting["id"]]
            assert judge_choice(request, record["choice"]) is None
