"""The server's build time per runtime, and each starter kit's CPU per decision against the SDK.

    python benchmarks/kits.py [--builds N] [--hands N] [--rounds R]

**Builds.** Each kit of ``bots/kits/`` (and ``bots/c/bot.c`` for the ``c``
runtime) is built ``--builds`` times by the server's own ``build`` (its
command, under a competition's default sandbox: ``auto``, isolated where
bubblewrap works), each time from scratch, as admission builds a version:
wall seconds, and the CPU seconds of the compiler's processes.

**Decisions.** One seat's lines of a recorded match (four bundled ``random``
bots, as ``benchmarks/sdk.py`` records them) are fed, ``--repeat`` times
over, to each built kit and to the Python SDK's tutorial bot
(``bots.starters.lowest``), as one process each with its stdin a file; the
process's CPU (user + system, from ``wait4``), less that of the same
process given only ``hello`` and ``shutdown`` (its start and exit), divided
by the requests it answered.  Rounds alternate the bots; medians of rounds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

import trio

from benchmarks.sdk import record
from referee.bots import BotSpec
from referee.sandbox import resolve
from referee.server.build import build
from referee.server.competition_file import CompetitionConfig, load_config
from referee.server.sandboxing import competition_sandbox

REPO = Path(__file__).resolve().parent.parent
KITS = REPO / "bots" / "kits"
# runtime, the files (from the repository) its upload holds, what its compiler needs
BUILDS: tuple[tuple[str, str, dict[str, Path], str], ...] = (
    ("C (c)", "c", {"bot.c": REPO / "bots" / "c" / "bot.c"}, "cc"),
    (
        "C++ (cpp)",
        "cpp",
        {name: KITS / "cpp" / name for name in ("main.cpp", "protocol.hpp")},
        "c++",
    ),
    (
        "Rust (rust)",
        "rust",
        {
            name: KITS / "rust" / name
            for name in ("Cargo.toml", "Cargo.lock", "src/main.rs", "src/protocol.rs")
        },
        "cargo",
    ),
    (
        "Go (go)",
        "go",
        {name: KITS / "go" / name for name in ("go.mod", "main.go", "protocol.go")},
        "go",
    ),
    (
        "Java (java)",
        "java",
        {name: KITS / "java" / name for name in ("Main.java", "Protocol.java")},
        "javac",
    ),
)
HELLO = b'{"type":"hello","protocol":1,"referee":"benchmark"}\n'
SHUTDOWN = b'{"type":"shutdown"}\n'


def default_competition(into: Path) -> CompetitionConfig:
    """A competition file with nothing but its name: every default, the sandbox's too."""
    path = into / "cup.toml"
    path.write_text('[competition]\nname = "benchmark"\nhouse_bots = []\n')
    return load_config(path)


def fresh_copy(root: Path, files: dict[str, Path]) -> None:
    for name, source in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, root / name)
    for directory in (root, *root.rglob("*")):
        if directory.is_dir():
            directory.chmod(0o755)  # the isolated compiler's own uid reads it


def build_all(builds: int, into: Path) -> tuple[dict[str, BotSpec], list[str]]:
    """Each runtime built ``builds`` times; the last build's spec, and the figure lines.

    Wall time under the competition's sandbox; CPU time from the same build at
    ``basic`` (limits, no isolation): an isolated compiler's processes are reaped
    by bubblewrap, not by us, so their CPU never reaches our children's times.
    """
    config = default_competition(into)
    sandbox, seconds = competition_sandbox(config), config.compile_seconds
    plain = resolve("basic", config.sandbox_limits)
    specs: dict[str, BotSpec] = {}
    isolated = "isolated" if sandbox.isolation is not None else "not isolated"
    lines = [f"sandbox: {sandbox.level}, {isolated}; {', '.join(sandbox.active())}"]
    for label, runtime, files, tool in BUILDS:
        if shutil.which(tool) is None:
            lines.append(f"{label:12} skipped: no {tool} here")
            continue
        walls: list[float] = []
        cpus: list[float] = []
        for number in range(builds):
            root = into / f"{runtime}-{number}"
            fresh_copy(root, files)
            started = time.perf_counter()
            built = trio.run(build, runtime, root, sorted(files), runtime, sandbox, seconds)
            walls.append(time.perf_counter() - started)
            specs[runtime] = built.spec
            again = into / f"{runtime}-{number}-basic"
            fresh_copy(again, files)
            before = os.times()
            trio.run(build, runtime, again, sorted(files), runtime, plain, seconds)
            after = os.times()
            user = after.children_user - before.children_user
            cpus.append(user + after.children_system - before.children_system)
        lines.append(
            f"{label:12} build: wall {statistics.median(walls):5.2f} s "
            f"(runs {', '.join(f'{w:.2f}' for w in walls)}), compiler CPU "
            f"{statistics.median(cpus):5.2f} s (runs {', '.join(f'{c:.2f}' for c in cpus)})"
        )
    return specs, lines


def cpu_of(command: Sequence[str], cwd: Path | None, stream: bytes) -> float:
    """CPU seconds (user + system) of ``command`` reading ``stream`` on stdin to its end."""
    with tempfile.TemporaryFile() as stdin:
        stdin.write(stream)
        stdin.seek(0)
        process = subprocess.Popen(
            list(command), cwd=cwd, stdin=stdin, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        _pid, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{command[0]} exited with {process.returncode}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--builds", type=int, default=3, help="builds of each runtime")
    parser.add_argument("--hands", type=int, default=100, help="hands of the recorded match")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each bot")
    parser.add_argument("--repeat", type=int, default=20, help="times the match is fed a round")
    args = parser.parse_args()
    print(f"load average at the start {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        into = Path(scratch)
        into.chmod(0o755)
        specs, lines = build_all(args.builds, into)
        print("\n".join(lines), flush=True)
        seat = record(args.hands, 1)
        requests = sum(line.startswith(b'{"type":"request"') for line in seat) * args.repeat
        body = b"".join(line + b"\n" for line in seat) * args.repeat
        bots: dict[str, tuple[Sequence[str], Path | None]] = {
            "Python SDK": ((sys.executable, "-m", "bots.starters.lowest"), REPO),
        }
        for runtime in ("c", "cpp", "rust", "go", "java"):
            if runtime in specs:
                bots[runtime] = (specs[runtime].command, specs[runtime].cwd)
        if shutil.which("node"):
            bots["typescript (node)"] = (("node", "main.js"), KITS / "typescript")
        per_decision: dict[str, list[float]] = {name: [] for name in bots}
        for number in range(args.rounds):
            order = list(bots) if number % 2 == 0 else list(bots)[::-1]
            for name in order:
                command, cwd = bots[name]
                full = cpu_of(command, cwd, HELLO + body + SHUTDOWN)
                empty = cpu_of(command, cwd, HELLO + SHUTDOWN)
                per_decision[name].append((full - empty) / requests * 1e6)
    sdk = statistics.median(per_decision["Python SDK"])
    print(
        f"decisions: one seat of a {args.hands}-hand match x{args.repeat}: {requests} requests "
        f"a round, {args.rounds} rounds; load average at the end {os.getloadavg()[0]:.2f}"
    )
    for name, figures in per_decision.items():
        median = statistics.median(figures)
        print(
            f"{name:18} {median:7.1f} µs of CPU per decision, {median / sdk:5.2f}x the SDK "
            f"(rounds {', '.join(f'{f:.1f}' for f in figures)})"
        )


if __name__ == "__main__":
    main()
