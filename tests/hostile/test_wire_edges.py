"""The edges of the referee's line reading, against real bot processes (stdio and TCP).

The referee reads and writes a bot's pipes and sockets straight through the OS
(``referee.transport.connection``'s fast paths: ``read_now``, ``send_now``, and the
framer's single-line path), so each edge here is one those paths must get
right: a line exactly at the cap arriving in many pieces, a NUL and a lone
surrogate inside a line, a line just over the cap behind a whole one in the
same write, a reply followed by half a line and the end of the stream.  The
shared promises (the match finishes, its result is saved and replays, no
process is left, memory stays bounded) are ``play_hostile``'s.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
import trio

from referee.bots import Transport
from tests.hostile.protocol_harness import CONTROL, Hostile, play_hostile, proto_bot, table_mates

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")


def assert_the_others_untouched(played: Hostile) -> None:
    for seat in (1, 2):
        assert played.faults(seat) == [] and played.status[seat] == "ok"
    for _, detail in played.faults():
        assert "\n" not in detail and "\r" not in detail  # one line, whatever the bot sent


def played_on_time(played: Hostile) -> list[tuple[int, object]]:
    """(id, choice) of seat 0's replies the referee took; the bot's own ``played`` lines."""
    taken = [(r["id"], r["choice"]) for r in played.of_type("reply")]
    said = [line.split()[1:] for line in played.stderr.splitlines() if line.startswith("played")]
    assert [(int(i), c) for i, c in said] == taken
    return taken


@pytest.mark.parametrize("transport", ["stdio", "tcp"])
async def test_lines_at_over_and_past_the_cap_and_bad_bytes_are_judged_one_by_one(
    tmp_path: Path, transport: Transport
) -> None:
    bots = [proto_bot("edges", transport=transport), *table_mates(transport=transport)]
    played = await play_hostile(bots, tmp_path)
    # Request 1: a reply of exactly the cap, in 1 KiB writes, is played without a fault.
    assert len(played_on_time(played)) == 1
    kinds = played.kinds()
    assert kinds == ["malformed", "malformed", "line_too_long"], played.faults()
    nul, surrogate, too_long = (detail for _, detail in played.faults())
    assert nul.startswith("not JSON: invalid character") and '"A\x00S"' in nul
    assert surrogate.startswith("not JSON: ") and "\\ud800" in surrogate
    assert too_long.startswith("line too long: 65537 bytes")
    assert too_long.endswith("(the limit is 65536)")
    assert played.status[0] == "disqualified"
    assert_the_others_untouched(played)


async def test_a_reply_then_half_a_line_then_a_closed_stdout_is_played_then_eof(
    tmp_path: Path,
) -> None:
    played = await play_hostile([proto_bot("reply_then_close"), *table_mates()], tmp_path)
    assert len(played_on_time(played)) == 1
    assert played.faults() == [("eof", "its output ended after an unterminated line (8 bytes)")]
    assert played.status[0] == "disqualified"
    assert_the_others_untouched(played)


async def test_a_flood_of_blank_lines_is_timed_out_at_the_deadline(tmp_path: Path) -> None:
    # The bot floods for 40 s; one timeout of 2.5 s ends its seat (and its process)
    # long before that.  A referee deaf to its deadlines while bytes arrive would wait
    # out the whole flood, every other seat with it.
    control = dataclasses.replace(CONTROL, max_faults=1)
    started = trio.current_time()
    bots = [proto_bot("blank_flood", "40"), *table_mates()]
    played = await play_hostile(bots, tmp_path, control=control)
    assert played.kinds() == ["timeout"], played.faults()
    assert played.status[0] == "disqualified"
    assert trio.current_time() - started < 25
    assert_the_others_untouched(played)


@pytest.mark.parametrize("transport", ["stdio", "tcp"])
async def test_a_flood_of_blank_lines_instead_of_ready_is_a_startup_fault_at_the_deadline(
    tmp_path: Path, transport: Transport
) -> None:
    # Only the flooding bot is held to 5 s: its table mates start first, under a generous
    # limit, so the verdict does not hang on how fast a loaded machine starts them.
    bots = [proto_bot("blank_flood", "40", "before_ready", transport=transport)]
    played = await play_hostile(
        [*bots, *table_mates(transport=transport)], tmp_path, hostile_startup=5.0
    )
    [(kind, detail)] = played.faults()
    assert kind == "startup" and "no ready within 5 s" in detail, detail
    assert played.status[0] == "disqualified"
    assert trio.current_time() - played.began < 25
    assert_the_others_untouched(played)


async def test_a_reply_written_past_the_deadline_while_a_fault_was_told_is_late(
    tmp_path: Path,
) -> None:
    control = dataclasses.replace(CONTROL, move_time=6.0, margin=0.5)
    played = await play_hostile(
        [proto_bot("overtime", "6.5"), *table_mates()], tmp_path, control=control
    )
    [said] = [line.split() for line in played.stderr.splitlines() if line.startswith("overtime")]
    first = int(said[1])
    assert played.kinds()[:2] == ["protocol", "timeout"], played.faults()
    assert played.faults()[1][1].startswith(f"no reply to request {first} within 6500 ms")
    assert first not in [r["id"] for r in played.of_type("reply")]
    assert first in [r["id"] for r in played.of_type("late")]
    assert played.status[0] == "ok"
    assert_the_others_untouched(played)


async def test_a_bot_that_closes_its_input_is_lost_at_the_next_write(tmp_path: Path) -> None:
    played = await play_hostile([proto_bot("close_stdin"), *table_mates()], tmp_path)
    assert len(played_on_time(played)) == 1
    [(kind, detail)] = played.faults()
    assert kind == "eof" and detail.startswith("stopped reading: the bot's input is closed"), detail
    assert played.status[0] == "disqualified"
    assert_the_others_untouched(played)


@pytest.mark.parametrize("transport", ["stdio", "tcp"])
async def test_a_reply_written_a_byte_at_a_time_is_assembled_and_played(
    tmp_path: Path, transport: Transport
) -> None:
    # Each reply reaches the referee across its spin, its sleep in poll and trio's wait,
    # a few bytes per read: every one must be played, none judged from a piece.
    bots = [proto_bot("dribble", transport=transport), *table_mates(transport=transport)]
    played = await play_hostile(bots, tmp_path)
    asked = [r["id"] for r in played.of_type("request")]
    taken = [r["id"] for r in played.of_type("reply")]
    said = [
        int(line.split()[1]) for line in played.stderr.splitlines() if line.startswith("played")
    ]
    assert asked and taken == asked == said
    assert played.faults() == [] and played.status[0] == "ok"
    assert played.result.seats[0].defaults == 0
    assert_the_others_untouched(played)
