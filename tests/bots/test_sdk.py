"""The Python SDK against a scripted referee: literal lines in, the bot's lines out.

``BotSession`` is sans-IO, so these tests play the referee by hand with the
exact lines of SPEC.md, and check what a bot author relies on: the
handshake, many matches on one connection, shutdown, leniency towards what
a later protocol version may send, a legal reply to every decision kind
even when the bot's own code fails, and a ``TableState`` that follows the
events.
"""

from __future__ import annotations

import random
import socket
import subprocess
import sys
import threading
from typing import Any

import msgspec
import pytest

from bots.sdk import Bot, BotSession, TableState, serve
from protocol.decisions import choice_fault
from protocol.events import Event
from protocol.messages import (
    Fault,
    MatchEnd,
    MatchStart,
    Ready,
    Reply,
    Request,
    decode_bot_message,
)
from tests.bots.driver import ROOT, BotProcess, handshake

HELLO = b'{"type":"hello","protocol":1,"referee":"newmarket 0.1.0"}'
MATCH_START = (
    b'{"type":"match_start","match_id":"m1","seat":0,"players":3,"names":["ada","b","c"],'
    b'"rules":{"rank_order":"aces_high","boodle_cards":["AS","KH","QC","JD"],"ante":"free",'
    b'"stake_total":4,"dead_hand":true,"dead_hand_exchange":"exchange_or_auction"},'
    b'"chips":[40,40,40],"move_time_ms":1000,"time_bank_ms":10000}'
)
MATCH_END = (
    b'{"type":"match_end","match_id":"m1","places":[2,1,3],"chips":[35,47,32],'
    b'"reason":"hand_limit","hands_played":2,"disqualified":[]}'
)
SHUTDOWN = b'{"type":"shutdown"}'

# The four request examples of SPEC.md, section 7.4.
LEAD = (
    b'{"type":"request","id":12,"decision":"lead","legal":["5D","2H","4S"],"default":"5D",'
    b'"hand":["5D","8D","AD","2H","3H","4H","QH","4S","TS"],"hand_sizes":[9,11,8],'
    b'"chips":[42,27,36],"boodle":[6,6,0,3],"kitty":0,"time_left_ms":11000,"time_bank_ms":10000}'
)
DEAD_HAND = (
    b'{"type":"request","id":11,"decision":"dead_hand","legal":["auction","exchange","keep"],'
    b'"default":"keep","hand":["2C","AC","3D","4D","7D","QD","5H","7H","AH","2S","6S","9S","QS"],'
    b'"hand_sizes":[13,13,13],"chips":[42,27,30],"boodle":[6,6,6,3],"kitty":0,'
    b'"time_left_ms":11000,"time_bank_ms":10000}'
)
BID = (
    b'{"type":"request","id":2,"decision":"bid","legal":[],"default":0,'
    b'"hand":["3C","TC","KC","AC","3D","6D","8D","6H","8H","TH","QH","JS","AS"],'
    b'"hand_sizes":[13,13,13],"chips":[36,36,36],"boodle":[3,3,3,3],"kitty":0,'
    b'"time_left_ms":11000,"time_bank_ms":10000,"min_bid":0,"max_bid":36}'
)
STAKE = (
    b'{"type":"request","id":1,"decision":"stake","legal":[],"default":[3,3,2,2],"hand":[],'
    b'"hand_sizes":[0,0,0],"chips":[40,40,40],"boodle":[0,0,0,0],"kitty":0,'
    b'"time_left_ms":10400,"time_bank_ms":9400,"stake_total":10,"boodle_cards":["AS","KH","QC","JD"]}'
)
REQUESTS = {"lead": LEAD, "dead_hand": DEAD_HAND, "bid": BID, "stake": STAKE}


def events_line(*events: dict[str, Any]) -> bytes:
    return msgspec.json.encode({"type": "events", "events": list(events)})


def talk(session: BotSession, *lines: bytes) -> list[Ready | Reply]:
    """Feed lines to the session; every line it writes must decode strictly, as the referee's do."""
    out: list[Ready | Reply] = []
    for line in lines:
        for written in session.receive(line):
            assert written.endswith(b"\n") and written.count(b"\n") == 1
            out.append(decode_bot_message(written[:-1]))
    return out


def reply_to(session: BotSession, request: bytes) -> Reply:
    (reply,) = talk(session, request)
    assert isinstance(reply, Reply)
    assert reply.id == msgspec.json.decode(request)["id"]
    return reply


def as_request(line: bytes) -> Request:
    return msgspec.json.decode(line, type=Request)


class Recorder(Bot):
    """Records every hook call; leads the last legal card so its choice is visible."""

    name = "recorder"
    version = "2.5"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def lead(self, request: Request, state: TableState) -> str:
        self.calls.append("lead")
        return request.legal[-1]

    def on_match_start(self, start: MatchStart, state: TableState) -> None:
        self.calls.append(f"start {start.match_id} seat {state.seat}")

    def on_events(self, events: list[Event], state: TableState) -> None:
        self.calls.append(f"events {len(events)}")

    def on_fault(self, fault: Fault, state: TableState) -> None:
        self.calls.append(f"fault {fault.kind}")

    def on_match_end(self, end: MatchEnd, state: TableState) -> None:
        self.calls.append(f"end {end.places}")


# ---------------------------------------------------------------- handshake and lifecycle


def test_hello_is_answered_with_ready_naming_the_bot_and_protocol() -> None:
    (ready,) = talk(BotSession(Recorder()), HELLO)
    assert ready == Ready(name="recorder", protocol=1, version="2.5", token=None)


def test_ready_carries_the_token_when_there_is_one() -> None:
    (ready,) = talk(BotSession(Bot(), token="c2c7e1f0a9"), HELLO)
    assert isinstance(ready, Ready) and ready.token == "c2c7e1f0a9"


def test_another_protocol_version_ends_the_session_with_status_2() -> None:
    logged: list[str] = []
    session = BotSession(Bot(), log=logged.append)
    assert talk(session, b'{"type":"hello","protocol":2,"referee":"future"}') == []
    assert session.finished and session.exit_status == 2
    assert "protocol 2" in logged[0]


def test_a_second_hello_is_ignored() -> None:
    session = BotSession(Bot(), log=lambda _: None)
    assert len(talk(session, HELLO)) == 1
    assert talk(session, HELLO) == []


def test_many_matches_on_one_connection_then_shutdown() -> None:
    bot = Recorder()
    session = BotSession(bot)
    talk(session, HELLO)
    for _ in range(3):
        talk(
            session,
            MATCH_START,
            events_line({"type": "hand_started", "hand_number": 1, "dealer": 2}),
        )
        assert reply_to(session, LEAD).choice == "4S"
        talk(session, MATCH_END)
    assert not session.finished
    assert talk(session, SHUTDOWN) == []
    assert session.finished and session.exit_status == 0
    assert talk(session, LEAD) == []  # nothing is answered after shutdown
    one_match = ["start m1 seat 0", "events 1", "lead", "end [2, 1, 3]"]
    assert bot.calls == one_match * 3


def test_a_fault_is_logged_and_passed_to_the_bot() -> None:
    bot, logged = Recorder(), list[str]()
    session = BotSession(bot, log=logged.append)
    talk(session, HELLO, MATCH_START)
    fault = (
        b'{"type":"fault","id":7,"kind":"illegal","detail":"5C may not be led now",'
        b'"disqualified":false,"applied":"4C"}'
    )
    assert talk(session, fault) == []
    assert bot.calls[-1] == "fault illegal"
    assert "illegal" in logged[0] and "5C may not be led now" in logged[0]
    assert session.state.faults[0].applied == "4C"


# ---------------------------------------------------------------- leniency


def test_unknown_messages_fields_and_events_are_ignored() -> None:
    bot = Recorder()
    session = BotSession(bot)
    talk(session, HELLO)
    assert talk(session, b'{"type":"chat","text":"hi","nested":{"type":"request","id":3}}') == []
    start = msgspec.json.decode(MATCH_START)
    start["spectators"] = 12
    talk(session, msgspec.json.encode(start))
    batch = events_line(
        {"type": "hand_started", "hand_number": 1, "dealer": 2, "weather": "clear"},
        {"type": "comet_seen", "seat": 1},
        {"type": "cards_dealt", "hand_sizes": [13, 13, 13], "dead_hand_size": 13, "hand": ["2C"]},
    )
    talk(session, batch)
    assert bot.calls[-1] == "events 2"  # the unknown event was dropped, the others kept
    assert session.state.hand == ["2C"]
    request = msgspec.json.decode(LEAD)
    request["hint"] = {"legal": ["AS"], "default": "AS"}
    reply = reply_to(session, msgspec.json.encode(request))
    assert reply.choice == "4S"


def test_a_request_that_no_longer_decodes_is_still_answered_with_its_default() -> None:
    logged: list[str] = []
    session = BotSession(Recorder(), log=logged.append)
    talk(session, HELLO, MATCH_START)
    request = msgspec.json.decode(LEAD)
    request["hand"] = {"changed": "shape"}
    reply = reply_to(session, msgspec.json.encode(request))
    assert reply.choice == "5D"
    assert any("skipped" in line for line in logged)


@pytest.mark.parametrize(
    "line",
    [
        b"not json",
        b"[1,2]",
        b'{"no":"type"}',
        b'{"type":"events","events":7}',
        b"\xff\xfe",
        b"[" * 10_000 + b"]" * 10_000,  # deep nesting: a recursive parser's RecursionError
    ],
)
def test_lines_that_are_not_messages_are_logged_and_skipped(line: bytes) -> None:
    logged: list[str] = []
    session = BotSession(Bot(), log=logged.append)
    talk(session, HELLO)
    assert talk(session, line) == []
    assert logged
    assert reply_to(session, LEAD).choice == "5D"  # and the session goes on


# ---------------------------------------------------------------- decisions


@pytest.mark.parametrize("kind", sorted(REQUESTS))
def test_the_base_bot_answers_every_decision_with_its_default(kind: str) -> None:
    session = BotSession(Bot())
    talk(session, HELLO, MATCH_START)
    request = as_request(REQUESTS[kind])
    reply = reply_to(session, REQUESTS[kind])
    assert reply.choice == request.default
    assert choice_fault(request, reply.choice) is None


class Broken(Bot):
    """Every decision goes wrong in a different way."""

    def lead(self, request: Request, state: TableState) -> str:
        return "KS"  # well formed, not legal

    def stake(self, request: Request, state: TableState) -> list[int]:
        raise RuntimeError("a bug in the bot")

    def dead_hand(self, request: Request, state: TableState) -> str:
        return None  # type: ignore[return-value]  # forgot to return

    def bid(self, request: Request, state: TableState) -> int:
        return 999  # more than max_bid


@pytest.mark.parametrize("kind", sorted(REQUESTS))
def test_a_failing_or_illegal_decision_is_replaced_by_the_default(kind: str) -> None:
    logged: list[str] = []
    session = BotSession(Broken(), log=logged.append)
    talk(session, HELLO, MATCH_START)
    reply = reply_to(session, REQUESTS[kind])
    assert reply.choice == as_request(REQUESTS[kind]).default
    assert any("default" in line for line in logged)


def test_stakes_may_be_returned_as_a_tuple() -> None:
    class Tuple(Bot):
        def stake(self, request: Request, state: TableState) -> list[int]:
            return (10, 0, 0, 0)  # type: ignore[return-value]

    session = BotSession(Tuple())
    talk(session, HELLO, MATCH_START)
    assert reply_to(session, STAKE).choice == [10, 0, 0, 0]


def test_a_hook_that_raises_does_not_stop_the_bot() -> None:
    class Grumpy(Bot):
        def on_events(self, events: list[Event], state: TableState) -> None:
            raise ValueError("no")

    logged: list[str] = []
    session = BotSession(Grumpy(), log=logged.append)
    talk(
        session,
        HELLO,
        MATCH_START,
        events_line({"type": "hand_started", "hand_number": 1, "dealer": 0}),
    )
    assert any("ValueError" in line for line in logged)
    assert reply_to(session, LEAD).choice == "5D"


# ---------------------------------------------------------------- the table state

HAND_ONE: list[dict[str, Any]] = [
    {"type": "hand_started", "hand_number": 1, "dealer": 2},
    {"type": "stake_placed", "seat": 0, "amounts": [1, 1, 1, 1], "kitty": 0},
    {"type": "stake_placed", "seat": 1, "amounts": [1, 1, 1, 1], "kitty": 0},
    {"type": "stake_placed", "seat": 2, "amounts": [1, 1, 1, 1], "kitty": 0},
    {
        "type": "cards_dealt",
        "hand_sizes": [13, 13, 13],
        "dead_hand_size": 13,
        "hand": ["3C", "TC", "KC", "AC", "3D", "6D", "8D", "6H", "8H", "TH", "QH", "JS", "AS"],
    },
    {"type": "dead_hand_decided", "dealer": 2, "choice": "auction"},
    {"type": "bids_revealed", "bids": [[0, 2], [1, 1]]},
    {
        "type": "hand_swapped",
        "seat": 0,
        "price": 2,
        "paid_to": 2,
        "hand": ["9C", "TD", "KD", "AD", "2H", "7H", "JH", "AH", "4S", "5S", "7S", "TS", "KS"],
        "hand_size": 13,
    },
    {"type": "card_played", "seat": 0, "card": "4S", "lead": True},
    {"type": "card_played", "seat": 0, "card": "5S", "lead": False},
    {"type": "card_played", "seat": 1, "card": "6S", "lead": False},
    {"type": "run_stopped", "card": "6S", "cause": "dead", "missing": "7S"},
    {"type": "card_played", "seat": 1, "card": "JD", "lead": True},
    {"type": "boodle_won", "seat": 1, "card": "JD", "chips": 3},
    {"type": "run_stopped", "card": "JD", "cause": "played", "missing": "QD"},
]


def state_after(events: list[dict[str, Any]]) -> TableState:
    session = BotSession(Bot())
    talk(session, HELLO, MATCH_START, events_line(*events))
    return session.state


def test_the_table_follows_stakes_swaps_plays_and_stops() -> None:
    state = state_after(HAND_ONE)
    assert (state.seat, state.players, state.hand_number, state.dealer) == (0, 3, 1, 2)
    assert state.boodle_cards == ["AS", "KH", "QC", "JD"]
    assert state.hand == ["9C", "TD", "KD", "AD", "2H", "7H", "JH", "AH", "7S", "TS", "KS"]
    assert state.played == [(0, "4S"), (0, "5S"), (1, "6S"), (1, "JD")]
    assert state.hand_sizes == [11, 11, 13]
    # Our old hand is the dead hand now, and the dead stop named 7S.
    assert {"3C", "AS", "JS"} <= state.known_dead and "7S" in state.known_dead
    assert state.chips == [34, 39, 38]
    assert state.boodle == [3, 3, 3, 0]
    assert state.swapped == {0}
    assert [stop.cause for stop in state.stops] == ["dead", "played"]
    assert state.is_gone("QD") is False and state.is_gone("JD") is True
    assert state.unseen().isdisjoint(state.hand) and "3C" not in state.unseen()


def test_a_new_hand_clears_the_last_one_but_keeps_the_chips() -> None:
    ended = {
        "type": "hand_ended",
        "hands": [["9C"], [], ["2D"]],
        "dead_hand": ["3C"],
        "winners": [1],
    }
    state = state_after([*HAND_ONE, ended, {"type": "hand_started", "hand_number": 2, "dealer": 0}])
    assert state.revealed is not None and state.revealed.winners == [1]
    assert (state.hand, state.played, state.known_dead, state.stops) == ([], [], set(), [])
    assert state.chips == [34, 39, 38] and state.hand_number == 2


def test_a_request_resynchronises_the_table() -> None:
    session = BotSession(Bot())
    talk(session, HELLO, MATCH_START, LEAD)
    assert session.state.hand == ["5D", "8D", "AD", "2H", "3H", "4H", "QH", "4S", "TS"]
    assert session.state.chips == [42, 27, 36] and session.state.boodle == [6, 6, 0, 3]


def test_rank_order_follows_the_rules() -> None:
    high = state_after([])
    assert high.rank("AS") == 12 and high.next_card("KS") == "AS" and high.next_card("AS") is None
    low_start = msgspec.json.decode(MATCH_START)
    low_start["rules"]["rank_order"] = "aces_low"
    session = BotSession(Bot())
    talk(session, HELLO, msgspec.json.encode(low_start))
    low = session.state
    assert low.aces_low and low.rank("AS") == 0 and low.next_card("AS") == "2S"
    assert low.next_card("KS") is None and low.stops_after("KS")
    assert low.sort_cards(["KC", "AC", "2D"]) == ["AC", "KC", "2D"]


def test_my_run_is_the_cards_we_would_play_in_a_row() -> None:
    state = state_after(HAND_ONE)
    assert state.my_run("TD") == ["TD"]
    assert state.my_run("KD") == ["KD", "AD"]
    assert state.stops_after("AD")  # the top card


# ---------------------------------------------------------------- the I/O loop


def transcript_bytes() -> bytes:
    match = [MATCH_START, events_line(*HAND_ONE), LEAD, DEAD_HAND, BID, STAKE, MATCH_END]
    return b"".join(line + b"\r\n" for line in [HELLO, *match, *match, SHUTDOWN])


def run_serve(chunks: list[bytes], bot: Bot | None = None) -> tuple[int, bytes, list[str]]:
    written, logged = bytearray(), list[str]()
    feed = iter(chunks)
    status = serve(bot or Bot(), lambda: next(feed, b""), written.extend, log=logged.append)
    return status, bytes(written), logged


def test_serve_gives_the_same_replies_however_the_bytes_arrive() -> None:
    stream = transcript_bytes()
    status, whole, _ = run_serve([stream])
    assert status == 0 and whole.count(b"\n") == 1 + 4 * 2
    rng = random.Random(5)
    for _ in range(20):
        cuts = sorted(rng.sample(range(1, len(stream)), 30))
        chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
        assert run_serve(chunks) == (0, whole, [])


def test_serve_exits_0_when_the_input_ends_even_in_a_match() -> None:
    status, _, logged = run_serve([HELLO + b"\n" + MATCH_START + b"\n"])
    assert status == 0 and "during a match" in logged[0]
    assert run_serve([])[0] == 0


def test_serve_gives_up_on_a_line_too_long_to_frame() -> None:
    status, written, logged = run_serve([HELLO + b"\n", b"x" * 70_000])
    assert status == 1 and written.count(b"\n") == 1 and "too long" in logged[0]


# ---------------------------------------------------------------- as a process


def test_print_in_bot_code_goes_to_stderr_not_to_the_protocol() -> None:
    program = (
        "from bots.sdk import Bot, run\n"
        "class Chatty(Bot):\n"
        "    name = 'chatty'\n"
        "    def lead(self, request, state):\n"
        "        print('thinking about', request.legal)\n"
        "        return request.legal[-1]\n"
        "run(Chatty())\n"
    )
    with BotProcess([sys.executable, "-c", program]) as bot:
        assert handshake(bot).name == "chatty"
        bot.send_raw(MATCH_START + b"\n" + LEAD + b"\n")
        assert bot.receive() == Reply(id=12, choice="4S")
        assert bot.close() == 0
        assert "thinking about" in bot.stderr_text()


def test_run_connects_over_tcp_with_the_token() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        env = {"NEWMARKET_CONNECT": f"127.0.0.1:{port}", "NEWMARKET_TOKEN": "s3cret"}
        command = [sys.executable, "-m", "bots.starters.lowest"]
        with subprocess.Popen(
            command, cwd=ROOT, env={**_base_env(), **env}, stdin=subprocess.DEVNULL
        ) as process:
            listener.settimeout(20)
            connection, _ = listener.accept()
            with connection:
                received: list[bytes] = []
                reader = threading.Thread(target=_read_all, args=(connection, received))
                reader.start()
                connection.sendall(
                    HELLO + b"\n" + MATCH_START + b"\n" + LEAD + b"\n" + SHUTDOWN + b"\n"
                )
                reader.join(20)
            assert process.wait(20) == 0
    ready, reply = (decode_bot_message(line) for line in b"".join(received).splitlines())
    assert ready == Ready(name="lowest", protocol=1, version="1.0", token="s3cret")
    assert reply == Reply(id=12, choice="2H")


def _read_all(connection: socket.socket, into: list[bytes]) -> None:
    connection.settimeout(20)
    while data := connection.recv(65536):
        into.append(data)


def _base_env() -> dict[str, str]:
    import os

    return {key: value for key, value in os.environ.items() if not key.startswith("NEWMARKET_")}
