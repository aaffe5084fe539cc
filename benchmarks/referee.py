"""How fast the referee plays a match, against the floor of this machine.

    python benchmarks/referee.py [--hands N] [--rounds R] [--check]

A match between bot processes is a chain of round trips: the referee writes
events and a request, the bot's process wakes, reads, answers, and the
referee wakes.  Each round measures, back to back:

* **match**: one match of four bundled ``random`` bots over stdio, the
  referee doing all its work (engine, time control, fault checks, events per
  seat, the match log), as hands per second.
* **floor**: a bare trio ping-pong with the same kind of bot: other
  processes of the same ``random`` bot are sent *the very bytes the referee
  sent in that match*, in the same order, and each request waits for its
  reply line, with nothing else done.  This is what talking to these bots
  costs here; match/floor is the share of the time the referee leaves to the
  bots and the pipes (target: at least 80%).
* **pipes**: the same bytes to a process that only reads lines and answers
  requests (the cost of the pipes and a Python wake-up alone, for scale).
* **tcp**: the same match over TCP.

The ratios are medians of ratios taken within each round, because on a
shared host the load changes from second to second and best-against-best
would compare different machines.  Bot processes start once and play every
round (the protocol's lifecycle), so start-up is in no figure; matches are
long (``--hands``, chips enough that nobody is eliminated).

``--check`` exits with 1 when the median match/floor is below 80%.

``--plain N`` only plays N matches (``--hands`` each, seeds 1..N, with a log
in a temporary directory) after one warm-up match, and prints their round
trips: a fixed workload for an instruction count that no load can blur::

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        python benchmarks/referee.py --plain 1 --hands 60    # then --plain 3

(the difference of the two counts, over the round trips of matches 2 and 3).
``--no-log`` plays them without a log file, as the timed rounds do.
"""

from __future__ import annotations

import argparse
import os
import statistics
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
from referee.match import referee as referee_match
from referee.match.referee import play_match
from referee.transport.process import clean_environment
from referee.transport.session import BotSession, open_bots
from referee.transport.timecontrol import TimeControl

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
    cpu: float  # the referee's own CPU seconds (this process)
    turnaround: float  # median seconds from a reply read to the next request written
    spun: float  # of the waits for replies, seconds spent looking rather than sleeping

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


def recorder(
    writes: list[tuple[int, bytes]], seat: int, turns: list[float], last_in: list[float]
) -> Callable[[bytes], None]:
    def record(data: bytes) -> None:
        writes.append((seat, data))
        if REQUEST_MARK in data and last_in[0]:
            turns.append(time.perf_counter() - last_in[0])  # reply read -> next request written
            last_in[0] = 0.0

    return record


def arrival(last_in: list[float]) -> Callable[[bytes], None]:
    def note(_line: bytes) -> None:
        last_in[0] = time.perf_counter()

    return note


class Table:
    """Four bot sessions that play timed matches, recording every byte written to them."""

    def __init__(self, sessions: list[BotSession]) -> None:
        dead = [f"{s.name}: {s.death}" for s in sessions if not s.alive]
        if dead:
            raise SystemExit(f"bots did not start: {'; '.join(dead)}")
        self.sessions = sessions
        self.writes: list[tuple[int, bytes]] = []
        self.turns: list[float] = []  # the referee's turnaround of each decision
        last_in = [0.0]
        for seat, session in enumerate(sessions):
            assert session.connection is not None
            session.connection.on_send = recorder(self.writes, seat, self.turns, last_in)
            session.connection.on_receive = arrival(last_in)

    async def play(self, hands: int, seed: int) -> Run:
        self.writes.clear()
        self.turns.clear()
        received = self.received()
        spun = self.spun()
        cpu = time.process_time()
        started = time.perf_counter()
        result = await play_match(
            self.sessions, rules(hands), seed, time_control=CONTROL, match_id=f"bench-{seed}"
        )
        seconds = time.perf_counter() - started
        cpu = time.process_time() - cpu
        faults = [f for seat in result.seats for f in seat.faults]
        if faults:
            raise SystemExit(f"a benchmark bot faulted: {faults[0]}")
        round_trips = sum(seat.decisions for seat in result.seats)
        writes = list(self.writes)
        turn = statistics.median(self.turns)
        return Run(
            seconds,
            result.hands,
            round_trips,
            writes,
            self.received() - received,
            cpu,
            turn,
            self.spun() - spun,
        )

    async def play_without_spin(self, hands: int, seed: int) -> Run:
        """``play`` with the waits for replies sleeping from the start (``SPIN_WAIT`` 0)."""
        spin, referee_match.SPIN_WAIT = referee_match.SPIN_WAIT, 0.0
        try:
            return await self.play(hands, seed)
        finally:
            referee_match.SPIN_WAIT = spin

    def received(self) -> int:
        return sum(s.connection.bytes_received for s in self.sessions if s.connection)

    def spun(self) -> float:
        return sum(s.connection.spun for s in self.sessions if s.connection)


class Replayer:
    """Bot processes sent recorded bytes with nothing else done: the bare trio ping-pong."""

    def __init__(self, processes: list[trio.Process]) -> None:
        self.processes = processes
        self.framers = [LineFramer() for _ in processes]

    @classmethod
    async def start(cls, command: list[str], env: dict[str, str]) -> Replayer:
        processes = [
            await trio.lowlevel.open_process(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
            )
            for _ in range(PLAYERS)
        ]
        replayer = cls(processes)
        hello = encode(Hello(protocol=PROTOCOL_VERSION, referee="benchmark"))
        for seat, process in enumerate(processes):
            assert process.stdin is not None
            await process.stdin.send_all(hello)
            await replayer.read_line(seat)  # ready
        return replayer

    async def read_line(self, seat: int) -> None:
        stdout = self.processes[seat].stdout
        assert stdout is not None
        while not self.framers[seat].feed(await stdout.receive_some(65536)):
            pass

    async def replay(self, writes: list[tuple[int, bytes]]) -> float:
        """Seconds to send ``writes`` in order, waiting for a line after each request."""
        started = time.perf_counter()
        for seat, data in writes:
            stdin = self.processes[seat].stdin
            assert stdin is not None
            await stdin.send_all(data)
            if REQUEST_MARK in data:
                await self.read_line(seat)
        return time.perf_counter() - started

    async def stop(self) -> None:
        for process in self.processes:
            process.kill()
            await process.wait()


@dataclass
class Round:
    match: Run
    floor: float
    pipes: float
    tcp: Run
    floor_cpu: float = 0.0  # this process's CPU seconds while it played the floor
    sleeping: Run | None = None  # the same match, its waits sleeping from the start


async def timed_replay(replayer: Replayer, writes: list[tuple[int, bytes]]) -> tuple[float, float]:
    """(seconds, this process's CPU seconds) to replay ``writes``."""
    cpu = time.process_time()
    seconds = await replayer.replay(writes)
    return seconds, time.process_time() - cpu


async def measure(hands: int, rounds: int) -> list[Round]:
    """Paired rounds: a match, then its bytes to the floor's and the pipes' processes, then TCP.

    The machine's load changes from second to second (a shared host), so each
    ratio is taken between figures measured back to back, not best against best.
    """
    bot = random_bots("stdio")[0]
    env = clean_environment(bot.env)
    async with (
        open_bots(random_bots("stdio"), CONTROL) as stdio_sessions,
        open_bots(random_bots("tcp"), CONTROL) as tcp_sessions,
    ):
        stdio, tcp = Table(stdio_sessions), Table(tcp_sessions)
        floor = await Replayer.start(list(bot.command), env)
        pipes = await Replayer.start([sys.executable, "-c", ECHO, "39"], env)
        try:
            warm = await stdio.play(5, 0)  # imports, caches, first allocations
            await tcp.play(5, 0)
            await floor.replay(warm.writes)
            await pipes.replay(warm.writes)
            results = []
            for number in range(1, rounds + 1):
                match = await stdio.play(hands, number)
                sleeping = await stdio.play_without_spin(hands, number)
                floor_seconds, floor_cpu = await timed_replay(floor, match.writes)
                results.append(
                    Round(
                        match,
                        floor_seconds,
                        await pipes.replay(match.writes),
                        await tcp.play(hands, number),
                        floor_cpu,
                        sleeping,
                    )
                )
        finally:
            await floor.stop()
            await pipes.stop()
    return results


async def plain(matches: int, hands: int, log: bool = True) -> int:
    """The fixed workload of ``--plain``: a warm-up match, then ``matches`` logged matches."""
    import tempfile

    async with open_bots(random_bots("stdio"), CONTROL) as sessions:
        table = Table(sessions)
        await table.play(5, 0)
        with tempfile.TemporaryDirectory() as scratch:
            for seed in range(1, matches + 1):
                result = await play_match(
                    sessions,
                    rules(hands),
                    seed,
                    time_control=CONTROL,
                    match_id=f"plain-{seed}",
                    log_path=Path(scratch) / f"{seed}.jsonl" if log else None,
                )
                trips = sum(seat.decisions for seat in result.seats)
                print(f"match {seed}: {result.hands} hands, {trips} round trips")
    return 0


async def main_async(hands: int, rounds: int, check: bool) -> int:
    results = await measure(hands, rounds)
    best = max(results, key=lambda r: r.match.hands_per_second)
    run = best.match

    def figure(seconds: float) -> str:
        return (
            f"{run.hands / seconds:8.1f} hands/s  ({run.round_trips / seconds:7,.0f} round trips/s)"
        )

    ratios = sorted(r.floor / r.match.seconds for r in results)
    tcp_ratios = sorted(r.tcp.hands_per_second / r.match.hands_per_second for r in results)
    ratio = statistics.median(ratios)
    print(
        f"python {sys.version.split()[0]}, trio {trio.__version__}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.2f}; {PLAYERS} bundled random bots; "
        f"{run.hands} hands, {run.round_trips} round trips, "
        f"{run.bytes_out // run.round_trips} B out and {run.bytes_in // run.round_trips} B in "
        f"per round trip; {rounds} paired rounds"
    )
    print(f"match, stdio : {figure(run.seconds)}  best round")
    print(f"floor, stdio : {figure(min(r.floor for r in results))}  same bytes, same bots")
    print(f"pipes, stdio : {figure(min(r.pipes for r in results))}  same bytes, echo process")
    print(
        f"match / floor: {ratio:8.0%}   median of rounds "
        f"({', '.join(f'{x:.0%}' for x in ratios)}); target {TARGET_RATIO:.0%}"
    )
    asleep = sorted(r.floor / r.sleeping.seconds for r in results if r.sleeping)
    print(
        f"  no spin    : {statistics.median(asleep):8.0%}   the same match, its waits sleeping "
        f"from the start (SPIN_WAIT 0): {', '.join(f'{x:.0%}' for x in asleep)}"
    )
    tcp_best = max(r.tcp.hands_per_second for r in results)
    print(
        f"match, tcp   : {tcp_best:8.1f} hands/s  best round; tcp / stdio median "
        f"{statistics.median(tcp_ratios):.0%} ({', '.join(f'{x:.0%}' for x in tcp_ratios)})"
    )

    def per_trip(value: Callable[[Round], float]) -> float:
        return statistics.median(value(r) / r.match.round_trips for r in results) * 1e6

    cpu = per_trip(lambda r: r.match.cpu)
    spun = per_trip(lambda r: r.match.spun)
    floor_cpu = per_trip(lambda r: r.floor_cpu)
    turn = statistics.median(r.match.turnaround for r in results) * 1e6
    print(
        f"referee      : {cpu:8.0f} µs of CPU per round trip, {spun:.0f} µs of them spinning; "
        f"{turn:.0f} µs median from a reply read to the next request written"
    )
    asleep_cpu = per_trip(lambda r: r.sleeping.cpu if r.sleeping else 0.0)
    asleep_turn = statistics.median(r.sleeping.turnaround for r in results if r.sleeping) * 1e6
    print(
        f"  no spin    : {asleep_cpu:8.0f} µs of CPU per round trip; {asleep_turn:.0f} µs "
        f"from a reply read to the next request written (medians of rounds)"
    )
    print(
        f"floor        : {floor_cpu:8.0f} µs of CPU per round trip in this process (the bare "
        f"ping-pong: writes, reads, trio); the referee's own work is the difference"
    )
    if check and ratio < TARGET_RATIO:
        print(f"below the target: the match runs at {ratio:.0%} of the floor")
        return 1
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hands", type=int, default=300, help="hands per timed match")
    parser.add_argument("--rounds", type=int, default=5, help="paired rounds")
    parser.add_argument("--check", action="store_true", help="exit 1 below the target")
    parser.add_argument("--plain", type=int, metavar="N", help="only play N logged matches")
    parser.add_argument("--no-log", action="store_true", help="--plain without a log file")
    args = parser.parse_args()
    if args.plain is not None:
        sys.exit(trio.run(plain, args.plain, args.hands, not args.no_log))
    sys.exit(trio.run(main_async, args.hands, args.rounds, args.check))


if __name__ == "__main__":
    main()
