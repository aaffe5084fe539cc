"""How fast the referee plays a match, against the floor of this machine.

    python benchmarks/referee.py [--hands N] [--rounds R] [--check]

A match between bot processes is a chain of round trips: the referee writes
events and a request, the bot's process wakes, reads, answers, and the
referee wakes.  Three figures, each the best of ``--rounds``:

* **match**: hands per second of one match of four bundled ``random`` bots
  over stdio, the referee doing all its work (engine, time control, fault
  checks, events per seat, the match log).
* **floor**: a bare trio ping-pong with the same bots: fresh processes of the
  same ``random`` bot are sent *the very bytes the referee sent in that match*,
  in the same order, and each request waits for its reply line, with nothing
  else done.  This is what talking to these bots costs on this machine; the
  ratio match/floor is the share of the time the referee leaves to the bots
  and the pipes (target: at least 80%).
* **pipes**: the same round trips and byte counts to a process that only
  reads a line and writes one (the cost of the IPC alone, for scale).

The same match over TCP is reported against stdio.  Bot processes start
once and play every round, as in a league (the protocol's lifecycle), so
start-up is in no figure.  The match is long (``--hands``, and chips enough
that nobody is eliminated), so each round times the steady state.

``--check`` exits with 1 when the match runs below 80% of the floor.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

import trio

from engine import Rules, preset
from protocol.framing import LineFramer
from protocol.messages import PROTOCOL_VERSION, Hello, encode
from referee.bots import BotSpec, Transport, resolve_bot
from referee.match import play_match
from referee.process import clean_environment
from referee.session import open_bots
from referee.timecontrol import TimeControl

TARGET_RATIO = 0.8
PLAYERS = 4
CONTROL = TimeControl(move_time=10.0, startup_time=30.0)
REQUEST_MARK = b'{"type":"request"'

# The pipes' bot: the least a Python process can do per round trip.
ECHO = """\
import sys
read, write = sys.stdin.buffer, sys.stdout.buffer
reply = b'{"type":"reply","id":1,"choice":"2C"}' + b" " * max(0, int(sys.argv[1]) - 38) + b"\\n"
for line in read:
    if line.startswith((b'{"type":"request"', b'{"type":"hello"')):
        write.write(reply)
        write.flush()
"""


@dataclass(frozen=True)
class Run:
    seconds: float
    hands: int
    round_trips: int
    writes: list[tuple[int, bytes]]  # (seat, bytes) of every write to a bot, in order
    bytes_in: int  # bots to referee

    @property
    def hands_per_second(self) -> float:
        return self.hands / self.seconds

    @property
    def bytes_out(self) -> int:
        return sum(len(data) for _, data in self.writes)


def rules(hands: int) -> Rules:
    # Chips enough that nobody is eliminated: every round plays ``hands`` hands.
    return preset("boodle").with_options({"hand_limit": hands, "starting_chips": 1_000_000})


def random_bots(transport: Transport) -> list[BotSpec]:
    spec = resolve_bot("random", transport=transport)
    return [
        BotSpec(f"random{i}", spec.command, spec.cwd, {"NEWMARKET_RANDOM_SEED": str(i)}, transport)
        for i in range(PLAYERS)
    ]


def recorder(writes: list[tuple[int, bytes]], seat: int) -> Callable[[bytes], None]:
    def record(data: bytes) -> None:
        writes.append((seat, data))

    return record


async def time_matches(transport: Transport, hands: int, rounds: int) -> list[Run]:
    runs = []
    async with open_bots(random_bots(transport), CONTROL) as sessions:
        dead = [f"{s.name}: {s.death}" for s in sessions if not s.alive]
        if dead:
            raise SystemExit(f"bots did not start: {'; '.join(dead)}")
        writes: list[tuple[int, bytes]] = []
        for seat, session in enumerate(sessions):
            assert session.connection is not None
            session.connection.on_send = recorder(writes, seat)
        # warm up: imports, caches, the first match's allocations
        await play_match(sessions, rules(5), 0, time_control=CONTROL, match_id="warm-up")
        for number in range(rounds):
            writes.clear()
            received = sum(s.connection.bytes_received for s in sessions if s.connection)
            started = time.perf_counter()
            result = await play_match(
                sessions, rules(hands), number + 1, time_control=CONTROL, match_id=f"b{number}"
            )
            seconds = time.perf_counter() - started
            faults = [f for seat in result.seats for f in seat.faults]
            if faults:
                raise SystemExit(f"a benchmark bot faulted: {faults[0]}")
            received = sum(s.connection.bytes_received for s in sessions if s.connection) - received
            round_trips = sum(seat.decisions for seat in result.seats)
            runs.append(Run(seconds, result.hands, round_trips, list(writes), received))
    return runs


async def replay_writes(
    command: list[str], env: dict[str, str], writes: list[tuple[int, bytes]], rounds: int
) -> list[float]:
    """Seconds to send ``writes`` to fresh bot processes, waiting for a line after each request."""
    processes = [
        await trio.lowlevel.open_process(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        for _ in range(PLAYERS)
    ]
    framers = [LineFramer() for _ in processes]

    async def read_line(seat: int) -> None:
        stdout = processes[seat].stdout
        assert stdout is not None
        while not framers[seat].feed(await stdout.receive_some(65536)):
            pass

    times = []
    try:
        hello = encode(Hello(protocol=PROTOCOL_VERSION, referee="benchmark"))
        for seat, process in enumerate(processes):
            assert process.stdin is not None
            await process.stdin.send_all(hello)
            await read_line(seat)  # ready
        for _ in range(rounds + 1):  # the first round warms up
            started = time.perf_counter()
            for seat, data in writes:
                stdin = processes[seat].stdin
                assert stdin is not None
                await stdin.send_all(data)
                if REQUEST_MARK in data:
                    await read_line(seat)
            times.append(time.perf_counter() - started)
    finally:
        for process in processes:
            process.kill()
            await process.wait()
    return times[1:]


async def main_async(hands: int, rounds: int, check: bool) -> int:
    stdio = await time_matches("stdio", hands, rounds)
    best = max(stdio, key=lambda run: run.hands_per_second)
    bot = random_bots("stdio")[0]
    env = clean_environment(bot.env)
    floor = min(await replay_writes(list(bot.command), env, best.writes, rounds))
    reply_size = max(39, best.bytes_in // best.round_trips)
    echo = [sys.executable, "-c", ECHO, str(reply_size)]
    pipes = min(await replay_writes(echo, env, best.writes, rounds))
    tcp = await time_matches("tcp", hands, rounds)
    best_tcp = max(tcp, key=lambda run: run.hands_per_second)

    def figure(seconds: float) -> str:
        return (
            f"{best.hands / seconds:8.1f} hands/s  "
            f"({best.round_trips / seconds:7,.0f} round trips/s)"
        )

    ratio = floor / best.seconds
    print(
        f"python {sys.version.split()[0]}, trio {trio.__version__}; {PLAYERS} bundled random "
        f"bots; {best.hands} hands, {best.round_trips} round trips, "
        f"{best.bytes_out // best.round_trips} B out and {reply_size} B in per round trip; "
        f"best of {rounds}"
    )
    print(f"match, stdio : {figure(best.seconds)}")
    print(f"floor, stdio : {figure(floor)}  same bytes to the same bots, nothing else")
    print(f"pipes, stdio : {figure(pipes)}  same bytes to a read-a-line, write-a-line process")
    print(f"match / floor: {ratio:8.0%}   (target {TARGET_RATIO:.0%})")
    print(
        f"match, tcp   : {figure(best_tcp.seconds)}  "
        f"{best_tcp.hands_per_second / best.hands_per_second:.0%} of stdio"
    )
    if check and ratio < TARGET_RATIO:
        print(f"below the target: the match runs at {ratio:.0%} of the floor")
        return 1
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hands", type=int, default=300, help="hands per timed match")
    parser.add_argument("--rounds", type=int, default=3, help="timed matches per figure")
    parser.add_argument("--check", action="store_true", help="exit 1 below the target")
    args = parser.parse_args()
    sys.exit(trio.run(main_async, args.hands, args.rounds, args.check))


if __name__ == "__main__":
    main()
