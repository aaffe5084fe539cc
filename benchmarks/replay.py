"""What ``newmarket replay`` costs per match, against the least a replay must do.

    python benchmarks/replay.py [--hands N] [--rounds R]

Records one long match (five bundled bots, ``--hands`` hands, chips enough
that nobody goes out: ``newmarket match``), then times, in one process:

* **verify**: ``referee.replay.verify_log``, every line of the log checked
  (events, decisions, the wire transcript, received lines, the result);
* **floor**: reading the same log's lines as JSON and applying each
  ``decision`` to a fresh engine, nothing checked: no replay can do less.

Rounds alternate the two; the figures are CPU milliseconds per match (median
of rounds) and the ratio verify / floor, with the machine's load.
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

from engine.rules import Rules
from engine.state import Match
from referee.convert import apply_choice, build_request
from referee.replay import verify_log

BOTS = ("random", "lowest", "tracker", "random", "lowest")


def record(path: Path, hands: int, seed: int) -> None:
    command = [
        sys.executable, "-m", "referee.cli", "match",
        *(arg for bot in BOTS for arg in ("--bot", bot)),
        "--seed", str(seed), "--hands", str(hands), "--sandbox", "none",
        "--option", "starting_chips=100000", "--log", str(path),
    ]  # fmt: skip
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def floor(path: Path) -> int:
    """Decode every line and apply every decision: the engine's share of a replay."""
    match: Match | None = None
    decisions = 0
    with open(path, "rb") as handle:
        for raw in handle:
            record = msgspec.json.decode(raw)
            kind = record["type"]
            if kind == "header":
                match = Match(
                    Rules.from_dict(record["rules"]),
                    record["players"],
                    record["seed"],
                    chips=record.get("chips"),
                )
            elif kind == "decision":
                assert match is not None
                request = build_request(match, 1, time_left_ms=0, time_bank_ms=0)
                apply_choice(match, request, record["choice"])
                decisions += 1
    return decisions


def verify(path: Path) -> int:
    return verify_log(path).decisions


def cpu_ms(run: object, path: Path) -> float:
    assert callable(run)
    started = time.process_time()
    run(path)
    return (time.process_time() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hands", type=int, default=200, help="hands of the recorded match")
    parser.add_argument("--rounds", type=int, default=9, help="rounds of each")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "long.jsonl"
        record(log, args.hands, args.seed)
        lines = sum(1 for _ in log.open("rb"))
        decisions = floor(log)
        assert verify(log) == decisions
        figures: dict[str, list[float]] = {"verify": [], "floor": []}
        load_before = os.getloadavg()[0]
        for number in range(args.rounds):
            pair = [("verify", verify), ("floor", floor)]
            for name, run in pair if number % 2 == 0 else pair[::-1]:
                figures[name].append(cpu_ms(run, log))
    ratios = sorted(v / f for v, f in zip(figures["verify"], figures["floor"], strict=True))
    print(
        f"python {sys.version.split()[0]}, load average {load_before:.2f} before, "
        f"{os.getloadavg()[0]:.2f} after; a {args.hands}-hand match of {len(BOTS)} bots: "
        f"{lines} lines, {decisions} decisions; {args.rounds} rounds"
    )
    for name, values in figures.items():
        print(
            f"{name:6}: {statistics.median(values):7.1f} ms of CPU per match "
            f"(median; {min(values):.1f} to {max(values):.1f})"
        )
    each = ", ".join(f"{ratio:.2f}" for ratio in ratios)
    print(f"verify / floor: {statistics.median(ratios):.2f}x ({each})")


if __name__ == "__main__":
    main()
