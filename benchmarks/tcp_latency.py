"""Reply latency of sandboxed bots over TCP next to stdio, measured in the same run.

    .venv/bin/python benchmarks/tcp_latency.py [--rounds R] [--hands N] [--sandbox LEVEL]

The bundled ``random`` (Python, the SDK), ``js`` (node), ``c`` and ``bash``
bots (those this machine can run) sit at one table twice: once over stdio,
once over TCP, each seat started under the sandbox (``auto`` by default: an
isolated TCP bot reaches the referee through the relays of
``referee.sandbox.forward``).  Each round plays one match on each table, the
same seed, in alternating order, so a change of the machine's load falls on
both; bot processes start once and play every round.  A reply's latency is
the referee's own figure from the match log (from its request written to
the reply read), the one the time control charges.

Printed: p50, p95 and the slowest reply per transport and per bot (every
round pooled), the median over rounds of each round's TCP p95 / stdio p95,
the load average before and after, and the sandbox's line.  Results of runs
go to dated files under ``benchmarks/results/``; docs/speed.md has the latest.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

import trio

from engine import preset
from referee.bots import Transport, resolve_bot
from referee.match import play_match
from referee.sandbox import Sandbox, resolve
from referee.session import BotSession, open_bots
from referee.timecontrol import TimeControl

BOTS = ("random", "js", "c", "bash")
CONTROL = TimeControl(move_time=10.0, time_bank=0.0, startup_time=60.0)  # never a fault
TRANSPORTS: tuple[Transport, ...] = ("stdio", "tcp")


def available() -> list[str]:
    return [name for name in BOTS if not resolve_bot(name).unavailable]


def latencies(log: Path, names: Sequence[str]) -> dict[str, list[float]]:
    """Each bot's reply latencies (ms) in one match log."""
    out: dict[str, list[float]] = {name: [] for name in names}
    for line in log.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "reply":
            out[names[record["seat"]]].append(float(record["latency_ms"]))
    return out


def quantile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def measure(
    names: list[str], sandbox: Sandbox, hands: int, rounds: int, directory: Path
) -> tuple[dict[tuple[str, str], list[float]], list[float]]:
    """Every reply's latency by (transport, bot), and each round's TCP p95 / stdio p95."""
    rules = preset("boodle").with_options({"hand_limit": hands, "starting_chips": 100_000})
    pooled: dict[tuple[str, str], list[float]] = {}
    ratios: list[float] = []
    specs = {t: [resolve_bot(name, transport=t) for name in names] for t in TRANSPORTS}
    async with (
        open_bots(specs["stdio"], CONTROL, sandbox=sandbox) as stdio,
        open_bots(specs["tcp"], CONTROL, sandbox=sandbox) as tcp,
    ):
        tables: dict[str, list[BotSession]] = {"stdio": stdio, "tcp": tcp}
        for transport, sessions in tables.items():
            dead = [s.name for s in sessions if s.death is not None]
            if dead:
                raise SystemExit(f"{transport}: {', '.join(dead)} did not start")
            await play_match(  # warm-up: imports, JIT, caches
                sessions, rules, 0, time_control=CONTROL, match_id=f"warm-{transport}"
            )
        for number in range(1, rounds + 1):
            order = TRANSPORTS if number % 2 else TRANSPORTS[::-1]
            p95: dict[str, float] = {}
            for transport in order:
                log = directory / f"{transport}-{number}.jsonl"
                await play_match(
                    tables[transport],
                    rules,
                    number,
                    time_control=CONTROL,
                    match_id=f"{transport}-{number}",
                    log_path=log,
                )
                found = latencies(log, names)
                for name, values in found.items():
                    pooled.setdefault((transport, name), []).extend(values)
                p95[transport] = quantile([v for vs in found.values() for v in vs], 0.95)
            ratios.append(p95["tcp"] / max(p95["stdio"], 1e-3))
    return pooled, ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hands", type=int, default=40, help="hands per match")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (a match per transport)")
    parser.add_argument("--sandbox", default="auto", help="the bots' sandbox level")
    args = parser.parse_args()
    names = available()
    sandbox = resolve(args.sandbox)
    before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="newmarket-tcp-latency-") as directory:
        pooled, ratios = trio.run(measure, names, sandbox, args.hands, args.rounds, Path(directory))
    after = os.getloadavg()[0]
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {before:.2f} "
        f"before, {after:.2f} after; bots {', '.join(names)}; {args.rounds} rounds of "
        f"{args.hands} hands per transport"
    )
    print(sandbox.describe())
    print(f"{'transport':<10}{'bot':<8}{'replies':>8}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    for transport in TRANSPORTS:
        rows = [("all", [v for (t, _), vs in pooled.items() if t == transport for v in vs])]
        rows += [(name, pooled[(transport, name)]) for name in names]
        for name, values in rows:
            print(
                f"{transport:<10}{name:<8}{len(values):>8}{quantile(values, 0.5):>9.2f}"
                f"{quantile(values, 0.95):>9.2f}{max(values):>9.2f}"
            )
    print(
        f"tcp p95 / stdio p95: median of rounds {statistics.median(ratios):.1f}x "
        f"({', '.join(f'{r:.1f}' for r in ratios)})"
    )


if __name__ == "__main__":
    main()
