"""A sandboxed TCP bot answers as fast over its relay as over stdio: no 40 ms per reply.

An isolated TCP bot reaches its referee through two relays
(``referee.sandbox.forward``).  Without ``TCP_NODELAY`` on the relays' TCP
sockets, a reply that reached the relay in two pieces left it in two, and the
second waited for the referee's delayed ACK of the first: about 40 ms on
Linux, so at a 30 ms move time every TCP bot was disqualified.  Here a bot
that writes every line in two pieces (``runtime_bots/split_reply.py``) plays
three matches at a 30 ms move time beside two bundled bots, all over TCP in
the sandbox.  The bank (150 ms a match, no margin) is what keeps this from
depending on luck either way: without the fix each of the split bot's replies
runs at least 10 ms over, and its 20 and more decisions a match overdraw the
bank; with it a reply takes a few ms, and the bank absorbs the stalls of a
loaded two-core machine (a stall must outlast the move time to draw on it).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from engine import preset
from referee.bots import BotSpec, resolve_bot
from referee.match import play_match
from referee.sandbox import detect, resolve
from referee.session import open_bots
from referee.timecontrol import TimeControl

SUPPORT = detect()
pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes"),
    pytest.mark.skipif(
        SUPPORT.isolation is None, reason=f"no isolation on this machine: {SUPPORT.isolation_why}"
    ),
]

SPLIT = Path(__file__).resolve().parent / "runtime_bots" / "split_reply.py"
CONTROL = TimeControl(move_time=0.03, time_bank=0.15, margin=0.0, startup_time=60.0)
RULES = preset("boodle").with_options({"hand_limit": 12, "starting_chips": 400})
MIN_DECISIONS = 20  # per match: enough that 10 ms over on each overdraws the bank


async def test_a_sandboxed_tcp_bot_plays_at_a_30_ms_move_time_without_timeouts() -> None:
    split = BotSpec("split", (sys.executable, str(SPLIT)), transport="tcp")
    mates = [resolve_bot(name, transport="tcp") for name in ("random", "lowest")]
    sandbox = resolve("auto")
    async with open_bots([split, *mates], CONTROL, sandbox=sandbox) as sessions:
        assert {s.name: s.death for s in sessions if s.death is not None} == {}
        results = [
            await play_match(sessions, RULES, seed, time_control=CONTROL, match_id=f"m{seed}")
            for seed in (1, 2, 3)
        ]
    for result in results:
        for seat in result.seats:
            assert seat.faults == [] and seat.status == "ok", seat
        split_seat = next(seat for seat in result.seats if seat.name == "split")
        assert split_seat.decisions >= MIN_DECISIONS, split_seat
