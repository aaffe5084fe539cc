"""What the Python SDK costs a bot per decision, against a bare loop.

    python benchmarks/sdk.py [--hands N] [--rounds R]

A league's CPU is half Python bots, and each of them pays the SDK for every
line: decoding and validating messages, keeping ``TableState`` from the
events, checking its own choice, encoding the reply.  This benchmark records
the exact lines one seat of a match was sent (the match log's wire
transcript, four bundled ``random`` bots), then feeds them, in one process,
to:

* **sdk**: ``bots.sdk.BotSession`` with a ``Bot`` that answers every request
  with its ``default`` (so the figure is the SDK's, not a strategy's);
* **bare**: the least a correct Python bot can do: split lines, decode each
  request's ``id`` and ``default`` only, and encode the reply.

Rounds alternate the two; the figures are CPU microseconds per decision
(median of rounds, with the spread).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

import msgspec

from bots.sdk import Bot, BotSession
from referee.tools.transcript import transcript


class _Asked(msgspec.Struct):
    id: int
    default: int | str | list[int]


_asked = msgspec.json.Decoder(_Asked)
_REQUEST = b'{"type":"request"'


def bare_loop(lines: list[bytes]) -> int:
    """The floor: answer each request with its default, nothing else."""
    replies = 0
    encode = msgspec.json.encode
    for line in lines:
        if line.startswith(_REQUEST):
            asked = _asked.decode(line)
            out = b'{"type":"reply","id":%d,"choice":' % asked.id + encode(asked.default) + b"}\n"
            replies += len(out) > 0
    return replies


def sdk_loop(lines: list[bytes]) -> int:
    session = BotSession(Bot())
    session.receive(b'{"type":"hello","protocol":1,"referee":"benchmark"}')
    replies = 0
    for line in lines:
        replies += len(session.receive(line))
    return replies


def record(hands: int, seed: int) -> list[bytes]:
    """One seat's lines from a match of four random bots (``newmarket match``)."""
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "m.jsonl"
        command = [
            sys.executable, "-m", "referee.cli", "match",
            *("--bot", "random") * 4,
            "--seed", str(seed), "--hands", str(hands),
            "--option", "starting_chips=100000", "--log", str(log),
        ]  # fmt: skip
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        sent = [line for line in transcript(log, 0) if line.direction == "sent"]
    return [part for line in sent for part in line.data.splitlines()]


def cpu_per_decision(loop: object, lines: list[bytes], repeat: int) -> float:
    assert callable(loop)
    started = time.process_time()
    decisions = 0
    for _ in range(repeat):
        decisions += loop(lines)
    return (time.process_time() - started) / decisions * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hands", type=int, default=100, help="hands of the recorded match")
    parser.add_argument("--rounds", type=int, default=7, help="rounds of each loop")
    parser.add_argument("--repeat", type=int, default=5, help="times the match is fed per round")
    args = parser.parse_args()
    lines = record(args.hands, 1)
    requests = sum(line.startswith(_REQUEST) for line in lines)
    sdk: list[float] = []
    bare: list[float] = []
    for number in range(args.rounds):
        pair = [(sdk, sdk_loop), (bare, bare_loop)]
        for figures, loop in pair if number % 2 == 0 else pair[::-1]:
            figures.append(cpu_per_decision(loop, lines, args.repeat))
    ratios = sorted(s / b for s, b in zip(sdk, bare, strict=True))
    print(
        f"python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}; one seat of a "
        f"{args.hands}-hand match: {len(lines)} lines, {requests} requests; {args.rounds} rounds"
    )
    print(f"sdk  : {statistics.median(sdk):7.1f} µs of CPU per decision (median of rounds)")
    print(f"bare : {statistics.median(bare):7.1f} µs of CPU per decision")
    print(f"sdk / bare: {statistics.median(ratios):.1f}x ({', '.join(f'{r:.1f}' for r in ratios)})")


if __name__ == "__main__":
    main()
