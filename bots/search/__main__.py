"""``python -m bots.search [--seed N] [--fraction F] [--max-samples N]``: run the search bot.

The options make reference versions for experiments: ``--max-samples 20`` is
a deliberately weak search, ``--fraction`` changes how much of each move's
time it uses.
"""

from __future__ import annotations

import argparse

from bots.sdk import run
from bots.search.bot import TIME_FRACTION, SearchBot


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bots.search", description=__doc__)
    parser.add_argument("--seed", type=int, default=0, help="the search's random seed")
    parser.add_argument(
        "--fraction",
        type=float,
        default=TIME_FRACTION,
        help=f"share of the move time to search (default {TIME_FRACTION})",
    )
    parser.add_argument(
        "--max-samples", type=int, default=None, help="cap determinizations per decision"
    )
    args = parser.parse_args()
    if not 0 < args.fraction <= 0.95:
        parser.error("--fraction must be in (0, 0.95]")
    run(SearchBot(seed=args.seed, fraction=args.fraction, max_samples=args.max_samples))


if __name__ == "__main__":
    main()
