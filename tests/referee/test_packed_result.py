"""Results packed for the databases: the same result back, from any thread, and one line for
a damaged one."""

from __future__ import annotations

import threading

import msgspec
import pytest
import zstandard

from referee.match.packed_result import MAX_BYTES, VERSION, pack, unpack
from referee.match.result import FaultRecord, MatchResult, SeatResult


def result(number: int) -> MatchResult:
    """A 4-seat result whose every field depends on ``number``."""
    seats = [
        SeatResult(
            seat=seat,
            name=f"bot-{number}-{seat}",
            place=seat + 1,
            chips=number % 97 + seat,
            status="disqualified" if (number + seat) % 7 == 0 else "ok",
            faults=[FaultRecord("timeout", 1 + number % 5, f"no reply to request {number}")]
            * ((number + seat) % 3),
            net_chips=number % 41 - 20,
            boodle_chips=seat * number % 13,
            hands_won=seat,
            decisions=number % 50,
            cpu_ms=None if seat == 3 else number % 11,
        )
        for seat in range(4)
    ]
    rules = {"hand_limit": number % 20 + 1, "lead_suit": "any"}
    return MatchResult(f"g{number}r0", number * 7919, rules, 10, seats, reason="hand_limit")


def test_every_result_comes_back_from_threads_packing_and_unpacking_at_once() -> None:
    # The server reads and writes its store from worker threads: each thread its own contexts.
    failures: list[str] = []

    def work(start: int) -> None:
        for number in range(start, start + 400):
            packed = pack(result(number))
            if unpack(packed) != result(number):
                failures.append(f"result {number} came back changed")

    threads = [threading.Thread(target=work, args=(start,)) for start in range(0, 1600, 400)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_a_packed_result_is_a_fraction_of_its_json_and_json_text_still_reads() -> None:
    made = result(12)
    text = msgspec.json.encode(made)
    assert len(pack(made)) * 2 < len(text)
    assert unpack(text.decode()) == made


@pytest.mark.parametrize(
    ("stored", "why"),
    [
        (b"{}", "unknown version"),
        (VERSION + b"\x28\xb5\x2f\xfd", "does not unpack"),
        (VERSION, "does not unpack"),
    ],
)
def test_a_damaged_packed_result_says_what_is_wrong(stored: bytes, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        unpack(stored)


def test_a_frame_claiming_more_than_a_result_can_be_is_refused_before_it_is_unpacked() -> None:
    huge = zstandard.ZstdCompressor().compress(b" " * (MAX_BYTES + 1))
    with pytest.raises(ValueError, match=f"claiming {MAX_BYTES + 1} bytes"):
        unpack(VERSION + huge)
