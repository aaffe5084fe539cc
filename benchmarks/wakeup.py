"""What a sleep before it costs the referee's work for one decision.

    python benchmarks/wakeup.py [--decisions N] [--rounds R]

A referee waits for every reply, then does its work for the next decision:
the reply applied to the engine, the new events typed and encoded, the next
request built and encoded.  This benchmark does that work in one process,
for a random match, with each kind of wait before every decision, and
reports the median microseconds of the work alone:

* **none**: decisions back to back, the work as fast as it goes;
* **busy**: a 120 µs busy loop first (the core never sleeps);
* **select**: a 120 µs ``select`` on a pipe nobody writes (the core sleeps
  about as long as a quick bot thinks);
* **poll**: a ``poll`` with its 1 ms granularity, as the referee's brief wait
  slept before it looked first (``referee.transport.connection.Connection.read_soon``).

The waits are not timed, only the work after them.  On a machine whose idle
cores sleep deeply (a virtual machine, a laptop), the work after a sleep is
several times slower than back to back: the reason the referee looks for a
quick bot's reply before it sleeps (``SPIN_WAIT``; docs/speed.md, "The
referee").  Rounds interleave the kinds.
"""

from __future__ import annotations

import argparse
import os
import random
import select
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from engine import preset
from engine.events import RecurringMemo
from engine.state import Match
from protocol.messages import encode
from referee.match.convert import WIRE_BY_ID, apply_choice, build_request, remember_wire, wire_views

WAIT = 0.00012  # seconds: about a quick bot's think


class Decisions:
    """A long random match, decided one decision at a time as a referee would."""

    def __init__(self, seed: int) -> None:
        rules = preset("boodle").with_options({"hand_limit": 1_000_000, "starting_chips": 10**9})
        self.match = Match(rules, 4, seed)
        self.choose = random.Random(seed).choice
        self.memo: RecurringMemo = {}
        self.converted = 0
        self.request_id = 0

    def decide(self) -> None:
        match = self.match
        self.request_id += 1
        request = build_request(match, self.request_id, time_left_ms=1000, time_bank_ms=0)
        encode(request)
        apply_choice(match, request, self.choose(request.legal))
        views = match.event_views(self.converted, self.memo)
        self.converted = match.event_count()
        for view in views:
            entry = WIRE_BY_ID.get(id(view[0]))
            if entry is None or entry[0] is not view[0]:
                remember_wire(view[0], wire_views(view))


def waits() -> dict[str, Callable[[], object]]:
    read, _write = os.pipe()  # nobody writes: every wait runs to its end
    poller = select.poll()
    poller.register(read, select.POLLIN)

    def busy() -> None:
        end = time.perf_counter() + WAIT
        while time.perf_counter() < end:
            pass

    return {
        "none": lambda: None,
        "busy": busy,
        "select": lambda: select.select([read], [], [], WAIT),
        "poll": lambda: poller.poll(WAIT * 1000),
    }


def measure(decisions: Decisions, wait: Callable[[], object], count: int) -> float:
    """Median seconds of one decision's work, after ``wait``."""
    clock = time.perf_counter
    times = []
    for _ in range(count):
        wait()
        started = clock()
        decisions.decide()
        times.append(clock() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--decisions", type=int, default=2000, help="decisions per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every kind of wait")
    args = parser.parse_args()
    decisions = Decisions(seed=1)
    kinds = waits()
    measure(decisions, kinds["none"], args.decisions)  # imports, caches, first allocations
    results: dict[str, list[float]] = {kind: [] for kind in kinds}
    for _ in range(args.rounds):
        for kind, wait in kinds.items():
            results[kind].append(measure(decisions, wait, args.decisions) * 1e6)
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.2f}; {args.rounds} rounds of {args.decisions} decisions; "
        f"µs of the work after each kind of wait (median of decisions, per round)"
    )
    none = statistics.median(results["none"])
    for kind, figures in results.items():
        spread = ", ".join(f"{x:.1f}" for x in figures)
        ratio = statistics.median(figures) / none
        print(f"{kind:7s}: {statistics.median(figures):6.1f} µs  ({spread})  {ratio:.1f}x none")


if __name__ == "__main__":
    main()
