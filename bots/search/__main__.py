"""``python -m bots.search [--seed N] [--fraction F] [--max-samples N] [...]``: run the search bot.

The options make reference versions for experiments: ``--max-samples 20`` is
a deliberately weak search, ``--fraction`` changes how much of each move's
time it uses, and the rest are the search's tuning knobs (docs/search.md).
"""

from __future__ import annotations

import argparse

from bots.sdk import run
from bots.search.bot import CHAIN_STEPS, CONFIDENCE, LEAD_NOISE, TIME_FRACTION, SearchBot
from bots.search.montecarlo import PRUNE_Z


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
    parser.add_argument(
        "--confidence",
        type=float,
        default=CONFIDENCE,
        help="standard errors a lead must beat the boodle starter's by (0: best mean)",
    )
    parser.add_argument(
        "--chain-steps",
        type=int,
        default=CHAIN_STEPS,
        help="swaps the deal chain tries between determinizations (0: leads not read)",
    )
    parser.add_argument(
        "--lead-noise",
        type=float,
        default=LEAD_NOISE,
        help="prior share of the other seats' leads taken as random (then learned per seat)",
    )
    parser.add_argument(
        "--pruning",
        type=float,
        default=PRUNE_Z,
        help=f"standard errors by which a choice must trail to stop being played "
        f"(default {PRUNE_Z:g}; 0: play every choice to the end)",
    )
    parser.add_argument(
        "--random-playouts", action="store_true", help="random leads in playouts (the old bot)"
    )
    args = parser.parse_args()
    if not 0 < args.fraction <= 0.95:
        parser.error("--fraction must be in (0, 0.95]")
    if args.chain_steps < 0 or args.confidence < 0 or not 0 <= args.lead_noise <= 1:
        parser.error("--chain-steps must be >= 0, --confidence >= 0, --lead-noise in [0, 1]")
    if args.pruning < 0:
        parser.error("--pruning must be >= 0")
    bot = SearchBot(
        seed=args.seed,
        fraction=args.fraction,
        max_samples=args.max_samples,
        confidence=args.confidence,
        chain_steps=args.chain_steps,
        lead_noise=args.lead_noise,
        random_playouts=args.random_playouts,
        pruning=args.pruning,
    )
    run(bot)


if __name__ == "__main__":
    main()
