"""What a bot padding every reply with 64 kB of random JSON whitespace costs the referee.

    .venv/bin/python -m benchmarks.received_whitespace [--rounds 3] [--hands 60]

Each round plays two real matches over stdio (``newmarket match``, no sandbox, a
log): ``tests/hostile/proto_bots/good.py`` in seat 0 and then ``padded.py``
(every reply padded to 65,000 bytes with spaces, tabs and CRs drawn at random,
which SPEC.md section 4 allows), against the bundled ``random`` and ``tracker``.
For seat 0's lines it measures the referee's CPU (``time.thread_time``) in the
two steps each line takes: the protocol's verdict (``Conversation.receive``,
which decodes it) and its ``received`` record (``_Referee.log_received``, which
leaves the whitespace out).  The decode is the floor: a line must be read to be
judged.  Printed per line, with the record's cost as a multiple of the floor
and the machine's load before and after.  A bot sends at most one such line a
request (any other line is a fault, or one late reply to a request it lost), so
what the referee spends on a request is bounded by about these two figures.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from protocol.conversation import Conversation
from referee.cli import run
from referee.match import referee

PROTO = f"{sys.executable} -m tests.hostile.proto_bots."


class _Meter:
    """Thread CPU, in ns, of seat 0's lines in the two steps; counts its lines."""

    def __init__(self) -> None:
        self.decode = 0
        self.record = 0
        self.lines = 0
        self.last = 0  # the last line's decode: its record is logged right after it

    def install(self) -> Callable[[], None]:
        receive, log_received = Conversation.receive, referee._Referee.log_received
        meter = self

        def timed_receive(self: Conversation, line: bytes) -> Any:
            start = time.thread_time_ns()
            verdict = receive(self, line)
            meter.last = time.thread_time_ns() - start
            return verdict

        # (``*verdict``: it also measures a referee whose ``log_received`` took none)
        def timed_log(self: Any, seat: Any, line: bytes, *verdict: Any) -> None:
            start = time.thread_time_ns()
            log_received(self, seat, line, *verdict)
            if seat.index == 0:
                meter.record += time.thread_time_ns() - start
                meter.decode += meter.last
                meter.lines += 1

        Conversation.receive = timed_receive  # type: ignore[method-assign]
        referee._Referee.log_received = timed_log  # type: ignore[method-assign,assignment]

        def uninstall() -> None:
            Conversation.receive = receive  # type: ignore[method-assign]
            referee._Referee.log_received = log_received  # type: ignore[method-assign]

        return uninstall


def one_match(bot: str, hands: int, seed: int) -> tuple[float, float, int]:
    """(decode us a line, record us a line, lines) of seat 0 in one match."""
    meter = _Meter()
    uninstall = meter.install()
    try:
        with tempfile.TemporaryDirectory() as logs:
            args = ["match", "--bot", f"x={PROTO}{bot}", "--bot", "random", "--bot", "tracker"]
            args += ["--hands", str(hands), "--seed", str(seed), "--sandbox", "none"]
            with (
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                code = run([*args, "--log-dir", logs])
            if code != 0:
                raise SystemExit(f"the match with {bot} ended with exit code {code}")
    finally:
        uninstall()
    lines = max(meter.lines, 1)
    return meter.decode / lines / 1000, meter.record / lines / 1000, meter.lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="pairs of matches")
    parser.add_argument("--hands", type=int, default=60, help="hand limit of each match")
    options = parser.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f}")
    ratios: list[float] = []
    for round_ in range(1, options.rounds + 1):
        for bot in ("good", "padded"):
            decode, record, lines = one_match(bot, options.hands, round_)
            print(
                f"round {round_} {bot:6s}: {lines:3d} lines, decode {decode:6.1f} us a line, "
                f"record {record:6.1f} us a line ({record / max(decode, 0.1):.1f} x the decode)"
            )
            if bot == "padded":
                ratios.append(record / max(decode, 0.1))
    print(f"padded: the record costs a median {statistics.median(ratios):.1f} x the decode")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
