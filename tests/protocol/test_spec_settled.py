"""What SPEC.md settles where a bot writer had to guess, checked against the real referee.

Each test plays the referee's own code (``open_stream_bot``, ``play_match``;
real processes for the handshake's order) with bots that make the case
happen, and asserts what SPEC.md says a bot sees: request ids across matches
(7.4), the handshake in either order (1, 6.1), ``ready``'s lengths in
characters (8.1), the dead hand's size after a swap (9.4), and where a
``fault`` falls among the ``events`` (7.5).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import pytest

from engine import Rules, preset
from referee.bots import BotSpec, Transport
from referee.match import MatchResult, play_match
from referee.session import open_bot
from referee.timecontrol import TimeControl
from tests.protocol.spec_sections import SPEC_PATH
from tests.referee.fakes import FakeWire, Message, Policy, by_default, fake_table

SPEC = SPEC_PATH.read_text(encoding="utf-8")
CONTROL = TimeControl(move_time=1.0, time_bank=0.0, margin=0.05, startup_time=5.0)
SHORT = preset("boodle").with_options({"hand_limit": 2})


async def play(
    policies: Sequence[Policy],
    rules: Rules = SHORT,
    *,
    matches: int = 1,
    ready: Sequence[Message | None] | None = None,
) -> tuple[list[MatchResult], list[FakeWire]]:
    results = []
    async with fake_table(policies, CONTROL, ready=ready) as (sessions, wires):
        for number in range(matches):
            results.append(
                await play_match(
                    sessions, rules, 3 + number, time_control=CONTROL, match_id=f"m{number}"
                )
            )
    return results, wires


def read(wire: FakeWire) -> list[dict[str, Any]]:
    """Every line the bot read, in order."""
    return [json.loads(line[2:]) for line in wire.transcript if line.startswith("< ")]


# ---------------------------------------------------------------- 7.4: request ids


async def test_request_ids_run_over_the_connection_and_restart_on_a_new_one(
    autojump_clock: object,
) -> None:
    assert "ids do not restart at `match_start`" in SPEC
    _, wires = await play([by_default] * 3, matches=3)
    for wire in wires:
        ids = [m["id"] for m in wire.received if m["type"] == "request"]
        assert ids[0] == 1
        assert ids == sorted(set(ids))  # each greater than the one before
        ends = [i for i, m in enumerate(wire.received) if m["type"] == "match_end"]
        after_first = [m["id"] for m in wire.received[ends[0] :] if m["type"] == "request"]
        assert after_first[0] > 1  # the second match went on counting
    # A new connection (a new session) starts again at 1.
    _, fresh = await play([by_default] * 3)
    assert next(m["id"] for m in fresh[0].received if m["type"] == "request") == 1


# ---------------------------------------------------------------- 1 and 6.1: the handshake


# Either order, over stdio or (NEWMARKET_CONNECT set) over TCP with the referee's token.
HANDSHAKE = """
import json, os, socket, sys
order = sys.argv[1]
connect = os.environ.get("NEWMARKET_CONNECT", "")
if connect:
    host, _, port = connect.rpartition(":")
    sock = socket.create_connection((host.strip("[]"), int(port)))
    reader, writer = sock.makefile("r"), sock.makefile("w")
else:
    reader, writer = sys.stdin, sys.stdout
ready = {"type": "ready", "name": order, "protocol": 1, "token": os.environ.get("NEWMARKET_TOKEN")}
if order == "hello-first":
    hello = json.loads(reader.readline())
    assert hello["type"] == "hello", hello
writer.write(json.dumps(ready) + "\\n")
writer.flush()
for line in reader:
    if json.loads(line)["type"] == "shutdown":
        break
"""


@pytest.mark.parametrize("transport", ["stdio", "tcp"])
@pytest.mark.parametrize("order", ["hello-first", "ready-first"])
async def test_the_handshake_works_in_either_order(order: str, transport: Transport) -> None:
    """The referee writes hello without waiting for ready, and takes ready whenever it comes."""
    spec = BotSpec(order, (sys.executable, "-c", HANDSHAKE, order), transport=transport)
    async with open_bot(spec, TimeControl(startup_time=30.0)) as session:
        assert session.alive and session.handshaken, session.death
        assert session.reported_name == order


# ---------------------------------------------------------------- 8.1: lengths in characters


@pytest.mark.parametrize(
    ("name", "accepted"),
    [
        ("é" * 64, True),  # 128 bytes
        ("🂡" * 64, True),  # 256 bytes
        ("a" * 64, True),
        ("a" * 65, False),
        ("é" * 65, False),
        ("", False),
    ],
)
async def test_ready_name_lengths_count_characters_not_bytes(
    autojump_clock: object, name: str, accepted: bool
) -> None:
    ready: Message = {"type": "ready", "name": name, "protocol": 1, "version": "é" * 64}
    async with fake_table([by_default], CONTROL, ready=[ready]) as (sessions, _wires):
        [session] = sessions
        assert session.alive is accepted, session.death
        if accepted:
            assert session.reported_name == name
        else:
            assert session.death is not None and session.death.kind == "startup"


# ---------------------------------------------------------------- 9.4 and 9.7: the dead hand


async def always_exchange(wire: FakeWire, request: Message) -> None:
    choice = "exchange" if request["decision"] == "dead_hand" else request["default"]
    await wire.reply(request, choice)


async def test_after_a_swap_the_dead_hand_is_the_swappers_old_hand_size_unannounced(
    autojump_clock: object,
) -> None:
    rules = preset("boodle").with_options(
        {"dealing": "equal_hands", "dead_hand_exchange": "exchange", "hand_limit": 4}
    )
    _, wires = await play([always_exchange] * 4, rules)
    events = wires[0].events()
    swaps = 0
    for number, event in enumerate(events):
        if event["type"] != "cards_dealt":
            continue
        hand = events[
            number : next(
                i for i in range(number, len(events)) if events[i]["type"] == "hand_ended"
            )
            + 1
        ]
        [swapped] = [e for e in hand if e["type"] == "hand_swapped"]
        sizes, announced = event["hand_sizes"], event["dead_hand_size"]
        assert (sorted(set(sizes) - {0}), announced) == ([10], 12)  # 52 = 4 x 10 + 12
        assert swapped["hand_size"] == announced  # the swapper now holds the old dead hand
        # Nothing announces the new dead hand's size: it shows at the end, the old hand's.
        assert not [e for e in hand if "dead_hand_size" in e and e is not event]
        assert len(hand[-1]["dead_hand"]) == sizes[swapped["seat"]] == 10 != announced
        swaps += 1
    assert swaps == 4


# ---------------------------------------------------------------- 7.5: where a fault falls


async def leads_illegally_once(wire: FakeWire, request: Message) -> None:
    if request["decision"] == "lead" and not wire.of_type("fault"):
        await wire.send({"type": "reply", "id": request["id"], "choice": "XX"})
        return
    await by_default(wire, request)


async def test_a_fault_comes_right_after_its_request_and_before_the_default_s_events(
    autojump_clock: object,
) -> None:
    _, wires = await play([leads_illegally_once, by_default, by_default])
    lines = read(wires[0])
    at = next(i for i, m in enumerate(lines) if m["type"] == "fault")
    request, fault, after = lines[at - 1], lines[at], lines[at + 1]
    assert request["type"] == "request" and request["decision"] == "lead"
    assert (fault["id"], fault["kind"], fault["applied"]) == (
        request["id"],
        "malformed",
        request["default"],
    )
    # The default lead is the first event of the next events message, after the fault.
    assert after["type"] == "events"
    assert after["events"][0] == {
        "type": "card_played",
        "seat": 0,
        "card": request["default"],
        "lead": True,
    }


async def never_answers(wire: FakeWire, request: Message) -> None:
    return


async def test_a_disqualifying_fault_is_followed_by_seat_disqualified_then_the_default(
    autojump_clock: object,
) -> None:
    control_faults = 3  # the third timeout disqualifies (section 13)
    _, wires = await play([never_answers, by_default, by_default])
    lines = read(wires[0])
    faults = [i for i, m in enumerate(lines) if m["type"] == "fault"]
    assert len(faults) == control_faults
    for at in faults:
        assert lines[at - 1]["type"] == "request" and lines[at - 1]["id"] == lines[at]["id"]
    last = faults[-1]
    assert lines[last]["disqualified"] is True
    following = lines[last + 1]
    assert following["type"] == "events"
    assert following["events"][0] == {"type": "seat_disqualified", "seat": 0, "reason": "timeout"}
    # Only then the events of the applied default (the stake or lead made for it).
    assert len(following["events"]) > 1
    assert not [m for m in lines[last + 1 :] if m["type"] == "request"]
