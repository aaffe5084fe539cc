"""The protocol fuzzing properties of the test suite, run for a long time.

    nice -n 19 python benchmarks/fuzz.py [--cases N] [--referee-share F] [--seed S] [--round R]

Runs the four properties of ``tests/hostile/fuzz_properties.py`` (the framer,
the strict bot decoder, the lenient referee decoder, and whole matches with a
hostile bot in seat 0) until ``--cases`` cases have been run in all (default
100,000).  ``--referee-share`` of them (default 0.1) are matches, which cost
a few milliseconds each; the rest are split evenly between the three cheap
properties.  Cases are run in rounds of ``--round`` per property, each round
with its own hypothesis seed derived from ``--seed`` (printed, so a run can
be repeated), which keeps hypothesis's memory flat over a long run.

Prints the count per property (a failure's shrinking runs count too), the
time, the load, and every failure with hypothesis's falsifying example;
exits with 1 if any property failed.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from hypothesis import HealthCheck, Verbosity, given, seed, settings
from hypothesis import strategies as st

from tests.hostile.fuzz_properties import (
    DECODER_INPUTS,
    check_bot_decoder,
    check_framer,
    check_referee,
    check_referee_decoder,
    framer_cases,
)


@dataclass
class Property:
    name: str
    strategy: st.SearchStrategy[Any]
    check: Callable[[Any], None]
    target: int = 0
    count: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)


def properties(total: int, referee_share: float) -> list[Property]:
    matches = round(total * referee_share)
    cheap = (total - matches) // 3
    return [
        Property("framer", framer_cases(), lambda case: check_framer(*case), cheap),
        Property("bot decoder", DECODER_INPUTS, check_bot_decoder, cheap),
        Property("referee decoder", DECODER_INPUTS, check_referee_decoder, cheap),
        Property("referee (matches)", st.data(), check_referee, total - 3 * cheap),
    ]


def run_round(prop: Property, examples: int, round_seed: int) -> None:
    def counted(value: Any) -> None:
        prop.count += 1
        prop.check(value)

    test = seed(round_seed)(
        settings(
            max_examples=examples,
            deadline=None,
            database=None,
            verbosity=Verbosity.normal,  # prints the falsifying example of a failure
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
        )(given(prop.strategy)(counted))
    )
    started = time.perf_counter()
    try:
        test()
    except Exception as error:  # a failed property: keep it, and go on with the others
        detail = "".join(traceback.format_exception_only(type(error), error)).strip()
        notes = "\n".join(getattr(error, "__notes__", []))
        prop.failures.append(f"seed {round_seed}: {detail}\n{notes}".strip())
    finally:
        prop.seconds += time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000, help="cases in all (100000)")
    parser.add_argument(
        "--referee-share", type=float, default=0.1, help="share of whole matches (0.1)"
    )
    parser.add_argument("--seed", type=int, default=None, help="master seed (default: random)")
    parser.add_argument("--round", type=int, default=2000, help="cases per round (2000)")
    args = parser.parse_args(argv)
    if args.cases < 4 or not 0 < args.referee_share < 1 or args.round < 1:
        parser.error("--cases must be at least 4, --referee-share in (0, 1), --round >= 1")
    master = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    rng = random.Random(master)
    print(f"fuzz: {args.cases} cases, seed {master}, load {os.getloadavg()[0]:.2f}", flush=True)
    props = properties(args.cases, args.referee_share)
    started = time.perf_counter()
    for prop in props:
        while prop.count < prop.target and len(prop.failures) < 3:
            before = prop.count
            run_round(prop, min(args.round, prop.target - prop.count), rng.randrange(2**32))
            if prop.count == before:
                break  # hypothesis found nothing more to try for this strategy
        rate = prop.count / prop.seconds if prop.seconds else 0.0
        status = "ok" if not prop.failures else f"{len(prop.failures)} FAILED"
        print(
            f"  {prop.name:<18} {prop.count:>8} cases  {prop.seconds:7.1f} s  "
            f"{rate:8.0f}/s  {status}",
            flush=True,
        )
    total = sum(prop.count for prop in props)
    failures = [(prop.name, text) for prop in props for text in prop.failures]
    print(
        f"fuzz: {total} cases in {time.perf_counter() - started:.0f} s, "
        f"{len(failures)} failures, load {os.getloadavg()[0]:.2f}"
    )
    for name, text in failures:
        print(f"\n--- {name}\n{text}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
