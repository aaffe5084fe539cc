"""Running the check: the handshake, every scenario on one process, shutdown, end of input.

Every scenario is a real ``play_match`` on the bot's one session, against
in-process opponents (``scripted_table``).  A message of an unknown type goes
between the first two matches (SPEC.md 2: it must be ignored); after the last,
``shutdown``, and the process must exit with status 0; then a second process
whose input simply ends must exit 0 too.  The check stops at the first
failure: everything after it would be judged on a bot already known to be
wrong, and the first transcript is the useful one.
"""

from __future__ import annotations

import contextlib
import math
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Final

import trio

from protocol.messages import (
    PROTOCOL_VERSION,
    Hello,
    encode,
)
from protocol.timing import DEFAULT_SHUTDOWN_GRACE_MS
from referee.bots import BotSpec
from referee.match.referee import play_match
from referee.sandbox import Sandbox
from referee.tools.check.evidence import Line, WireTap, compact_json
from referee.tools.check.opponents import Message, play_opponent
from referee.tools.check.scenarios import SCENARIOS, Scenario
from referee.tools.check.verdict import CheckReport, Failure, Stage, judge
from referee.transport.session import (
    BotLostError,
    BotSession,
    open_bot,
    open_stream_bot,
    referee_version,
)
from referee.transport.timecontrol import TimeControl

SHUTDOWN_GRACE: Final = DEFAULT_SHUTDOWN_GRACE_MS / 1000
UNKNOWN_MESSAGE: Final = (
    b'{"type":"notice","text":"newmarket check: a message type this protocol version '
    b'does not define; a bot must ignore it (SPEC.md 2)"}\n'
)
"""Sent between two matches: a later revision may add message types (SPEC.md 2)."""


@asynccontextmanager
async def scripted_table(
    bot: BotSession, scenario: Scenario, control: TimeControl
) -> AsyncIterator[list[BotSession]]:
    """The bot in its seat and a fresh in-process opponent in every other seat."""
    async with trio.open_nursery() as nursery, AsyncExitStack() as stack:
        sessions: list[BotSession] = []
        for seat in range(scenario.players):
            if seat == scenario.seat:
                sessions.append(bot)
                continue
            policy = scenario.policy(seat)
            name = f"{policy.__name__.replace('_', '-')}-{seat}"
            # Imported here, not at the top: trio.testing imports pytest (about 0.1 s), and
            # every command of the CLI imports this module to build its help.
            from trio.testing import memory_stream_pair

            referee_end, opponent_end = memory_stream_pair()
            nursery.start_soon(play_opponent, opponent_end, name, policy)
            session = await stack.enter_async_context(open_stream_bot(referee_end, name, control))
            sessions.append(session)
        yield sessions
        await stack.aclose()
        nursery.cancel_scope.cancel()


def _handshake_lines(session: BotSession) -> list[Line]:
    hello = encode(Hello(protocol=PROTOCOL_VERSION, referee=referee_version())).decode().strip()
    lines = [Line("<", hello)]
    if session.handshaken:
        ready: Message = {"type": "ready", "name": session.reported_name}
        ready["protocol"] = PROTOCOL_VERSION
        if session.reported_version:
            ready["version"] = session.reported_version
        lines.append(Line(">", compact_json(ready)))
    return lines


async def check_scenarios(
    session: BotSession,
    control: TimeControl,
    log_dir: Path,
    report: CheckReport,
    scenarios: Sequence[Scenario] = SCENARIOS,
) -> None:
    """Play every scenario on the bot's one session; stop at the first failure."""
    connection = session.connection
    tap = WireTap()
    if connection is not None:
        connection.on_send = tap
    for number, scenario in enumerate(scenarios, start=1):
        if report.failure is not None:
            report.not_run.append(scenario.name)
            continue
        tap.take()
        if session.exited or not session.alive:
            _ended_between_matches(session, scenario, report)
            continue
        if number == 2:
            # SPEC.md 6.2: after match_end, a message type the bot does not know may come.
            # A bot that stopped reading is lost here and faulted at the next match_start.
            with contextlib.suppress(BotLostError):
                await session.send(UNKNOWN_MESSAGE, control.move_time + control.margin)
        path = log_dir / f"{number:02d}-{scenario.name}.jsonl"
        async with scripted_table(session, scenario, control) as sessions:
            result = await play_match(
                sessions,
                scenario.rules,
                scenario.seed,
                time_control=control,
                match_id=f"check-{number}-{scenario.name}",
                log_path=path,
                dealer=scenario.dealer,
                deals=scenario.deals,
            )
        stage, failure = judge(scenario, result, tap.take(), path, session)
        report.add(stage)
        report.failure = failure


def _ended_between_matches(session: BotSession, scenario: Scenario, report: CheckReport) -> None:
    """The bot's process is gone before ``scenario``: its failure, with the exit as evidence."""
    ended = session.death.detail if session.death is not None else _exit_text(session)
    why = (
        f"the process ended between matches ({ended}); it must keep running until "
        "shutdown (SPEC.md 3.3)"
    )
    # The same evidence whether the exit was seen here or at the next match_start:
    # a transcript whose failing step is the exit itself.
    lines = [Line("#", f"before {scenario.name}"), Line("!", why)]
    _failed(report, session, scenario.name, scenario.about, why, lines)


def _failed(
    report: CheckReport,
    session: BotSession,
    stage: str,
    about: str,
    why: str,
    lines: Sequence[Line] = (),
) -> None:
    """``stage`` failed for ``why``: the report's failure, with the transcript ``lines`` (its
    failing step the closing verdict line, ``!``, if it has one) and the bot's stderr."""
    step = len(lines) - 1 if lines and lines[-1].mark == "!" else None
    report.failure = Failure(stage, why, list(lines), step, session.stderr_text())
    report.add(Stage(stage, about, False, why))


def _exit_text(session: BotSession) -> str:
    return "no process" if session.process is None else session.process.exit_text()


async def check_shutdown(session: BotSession, report: CheckReport, grace: float) -> None:
    """Send shutdown; the process must exit by itself, with status 0, within ``grace``."""
    process = session.process
    about = "shutdown, then the process exits with status 0"
    if process is None:  # a bot on a stream someone else opened (tests): nothing to wait for
        await session.aclose(shutdown_grace=0)
        return
    if process.exited.is_set():
        why = (
            f"the process ended before shutdown ({process.exit_text()}); it must keep running "
            "until shutdown (SPEC.md 3.3)"
        )
        _failed(report, session, "shutdown", about, why)
        return
    exited_after: list[float] = []

    async def watch(started: float) -> None:
        await process.exited.wait()
        exited_after.append(trio.current_time() - started)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch, trio.current_time())
        await session.aclose(shutdown_grace=grace)
    after = exited_after[0] if exited_after else math.inf
    lines = [Line("<", '{"type":"shutdown"}'), Line("#", "the referee closes the bot's input")]
    if process.status == 0 and after <= grace + 0.5:
        report.add(Stage("shutdown", about, True, f"exit status 0 after {after * 1000:.0f} ms"))
        return
    if after > grace:
        ended = process.exit_text()
        why = f"still running {grace:g} s after shutdown; ended by the referee ({ended})"
    else:
        why = f"{process.exit_text()} after shutdown; SPEC.md 6.3 asks for status 0"
    lines.append(Line("!", why))
    _failed(report, session, "shutdown", about, why, lines)


async def check_end_of_input(
    spec: BotSpec,
    control: TimeControl,
    report: CheckReport,
    grace: float,
    sandbox: Sandbox | None = None,
) -> None:
    """A second process whose input ends with no shutdown must exit with status 0 (SPEC.md 6.3)."""
    about = "a second process: its input ends without shutdown, it exits with status 0"
    async with open_bot(spec, control, sandbox=sandbox) as session:
        process = session.process
        connection = session.connection
        if not session.alive or process is None or connection is None:
            death = session.death
            why = f"the second start failed: {death.detail if death else 'no process'}"
            _failed(report, session, "end of input", about, why, _handshake_lines(session))
            return
        started = trio.current_time()
        await connection.send_eof()
        with trio.move_on_after(grace):
            await process.exited.wait()
        after = trio.current_time() - started
        if process.exited.is_set() and process.status == 0:
            report.add(
                Stage("end of input", about, True, f"exit status 0 after {after * 1000:.0f} ms")
            )
            return
        if process.exited.is_set():
            why = f"{process.exit_text()} when its input ended; SPEC.md 6.3 asks for status 0"
        else:
            why = f"still running {grace:g} s after its input ended (SPEC.md 6.3: exit too)"
        lines = [
            *_handshake_lines(session),
            Line("#", "the referee closes the bot's input"),
            Line("!", why),
        ]
        await session.end()
        _failed(report, session, "end of input", about, why, lines)


async def run_check(
    spec: BotSpec,
    control: TimeControl,
    *,
    log_dir: Path,
    scenarios: Sequence[Scenario] = SCENARIOS,
    shutdown_grace: float = SHUTDOWN_GRACE,
    on_stage: Callable[[Stage], None] | None = None,
    sandbox: Sandbox | None = None,
) -> CheckReport:
    """Check one bot: handshake, every scenario on one process, shutdown, end of input.

    ``on_stage`` is told each stage as soon as it is judged (a slow bot's
    report can be printed as it goes).
    """
    report = CheckReport(spec, control, on_stage=on_stage)
    async with open_bot(spec, control, sandbox=sandbox) as session:
        try:
            await _check_session(session, control, log_dir, report, scenarios, shutdown_grace)
        finally:
            report.stderr = session.stderr_text()
    if report.failure is None:
        await check_end_of_input(spec, control, report, shutdown_grace, sandbox)
    return report


async def _check_session(
    session: BotSession,
    control: TimeControl,
    log_dir: Path,
    report: CheckReport,
    scenarios: Sequence[Scenario],
    shutdown_grace: float,
) -> None:
    """The handshake's verdict, the scenarios and shutdown, on the bot's first process."""
    about = "hello, then a valid ready within the start-up limit"
    if not session.alive:
        death = session.death
        why = f"{death.kind} fault: {death.detail}" if death else "the bot did not start"
        lines = [*_handshake_lines(session), Line("!", why)]
        _failed(report, session, "handshake", about, why, lines)
        report.not_run = [s.name for s in scenarios] + ["shutdown", "end of input"]
        return
    report.reported_name = session.reported_name
    report.reported_version = session.reported_version
    latency = (session.startup_latency or 0.0) * 1000
    version = f" version {session.reported_version}" if session.reported_version else ""
    report.add(
        Stage(
            "handshake",
            about,
            True,
            f'ready after {latency:.0f} ms: "{session.reported_name}"{version}, '
            f"protocol {PROTOCOL_VERSION}",
        )
    )
    await check_scenarios(session, control, log_dir, report, scenarios)
    if report.failure is None:
        await check_shutdown(session, report, shutdown_grace)
    else:
        report.not_run += ["shutdown", "end of input"]


def check_bot(
    spec: BotSpec,
    control: TimeControl,
    *,
    scenarios: Sequence[Scenario] = SCENARIOS,
    shutdown_grace: float = SHUTDOWN_GRACE,
    keep_logs: Path | None = None,
    on_stage: Callable[[Stage], None] | None = None,
    sandbox: Sandbox | None = None,
) -> CheckReport:
    """``run_check`` in a fresh trio run, with its match logs in a temporary directory.

    The temporary directory is removed whatever happens (the report carries
    the failing transcript; nothing is left in /tmp); the logs are kept only
    in ``keep_logs``, if given, and then a failure names its log.
    """
    if keep_logs is not None:
        keep_logs.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as cleanup:
        if keep_logs is None:
            log_dir = Path(
                cleanup.enter_context(tempfile.TemporaryDirectory(prefix="newmarket-check-"))
            )
        else:
            log_dir = keep_logs
        report = trio.run(
            lambda: run_check(
                spec,
                control,
                log_dir=log_dir,
                scenarios=scenarios,
                shutdown_grace=shutdown_grace,
                on_stage=on_stage,
                sandbox=sandbox,
            )
        )
    if keep_logs is None and report.failure is not None:
        report.failure.log_path = None  # it was in the temporary directory
    return report
