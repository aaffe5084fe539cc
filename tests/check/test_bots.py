"""``newmarket check`` on real processes: every bundled bot passes, every broken bot fails.

The broken bots (``tests/check/bots/``) each break one rule of SPEC.md and
are right about everything else, so each test pins the stage where the
check must stop, the verdict it prints (the referee's own fault, or the
lifecycle rule) and the evidence: the transcript's arrow on the failing step
and the bot's stderr.  The stage names follow the order of
``referee.tools.check.SCENARIOS``: a bot that breaks a rule only some decisions
exercise fails at the first scenario that asks for one.

Limits are generous where nothing waits on them (10 s to start, a second a
move) and short only where the test is about waiting (the silent bot, the
slow one, the bots that will not exit), so a loaded machine changes no
verdict.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from bots.registry import BUNDLED
from referee.bots import BotSpec, Transport
from referee.tools.check import KINDS, SCENARIOS, check_bot, render_report
from referee.transport.timecontrol import TimeControl

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes")

REPO = Path(__file__).resolve().parents[2]
# Generous, for real processes on a loaded machine: a conformant bot answers in
# milliseconds, so no verdict here waits on these limits (the two that are about a limit
# set their own).
CONTROL = TimeControl(move_time=5.0, time_bank=0.0, startup_time=30.0, margin=0.1)
GRACE = 1.0  # the shutdown grace for these tests (newmarket check uses SPEC.md's 2 s)


def bundled(name: str) -> BotSpec:
    bot = BUNDLED[name]
    ok, why = bot.available()
    if not ok:
        pytest.skip(f"bundled bot {name!r} cannot run here: {why}")
    command = bot.command()
    if name == "search":
        # A protocol check, not a strength test: a few determinizations per decision
        # instead of most of each second keeps the whole check to a few seconds.
        command = (*command, "--max-samples", "3")
    return BotSpec(name, command)


@pytest.mark.parametrize("name", list(BUNDLED))
def test_every_bundled_bot_passes(name: str, tmp_path: Path) -> None:
    report = check_bot(bundled(name), CONTROL, keep_logs=tmp_path)
    assert report.ok, render_report(report)
    names = [stage.name for stage in report.stages]
    assert names == ["handshake", *(s.name for s in SCENARIOS), "shutdown", "end of input"]
    assert all(report.decisions()[kind] > 0 for kind in KINDS)
    text = render_report(report)
    assert "PASS: 18 checks, 15 matches on one process, 0 faults." in text
    assert "Reply latency: median" in text


@pytest.mark.parametrize("name", ["random", "js"])
def test_a_bundled_bot_passes_over_tcp(name: str, tmp_path: Path) -> None:
    spec = dataclasses.replace(bundled(name), transport="tcp")
    report = check_bot(spec, CONTROL, keep_logs=tmp_path)
    assert report.ok, render_report(report)


@dataclasses.dataclass(frozen=True)
class Broken:
    """A bot that breaks one rule: where the check must stop, and what it must say."""

    module: str
    stage: str
    says: str
    args: tuple[str, ...] = ()
    stderr: str = ""  # a line of the bot's stderr the report must show
    control: TimeControl = CONTROL
    transport: Transport = "stdio"


BROKEN = [
    Broken(
        "silent",
        "handshake",
        "startup fault: no ready within 2 s",
        control=dataclasses.replace(CONTROL, startup_time=2.0),
    ),
    Broken("wrong_protocol", "handshake", "protocol fault: this referee speaks protocol 1"),
    Broken("stdout_debug", "boodle", "malformed fault: not JSON"),
    Broken("wrong_field", "boodle", "malformed fault: reply: object contains unknown field"),
    Broken("illegal_lead", "boodle", "illegal fault: QS may not be led now", stderr="leading QS"),
    Broken("illegal_lead", "boodle", "illegal fault: QS may not be led now", transport="tcp"),
    Broken("wrong_stake", "new-market", "illegal fault: stakes must total exactly 10 chips"),
    Broken("wrong_id", "boodle", "protocol fault: a reply to request 1002, which was never sent"),
    Broken("twice", "boodle", "protocol fault: a second reply to request 2"),
    Broken(
        "slow",
        "boodle",
        "timeout fault: no reply to request 3 within 2100 ms",
        args=("6",),  # (requests 1 and 2 must still be answered in time on a loaded machine)
        control=dataclasses.replace(CONTROL, move_time=2.0),
        stderr="thinking for 6.0 s",
    ),
    Broken("crash", "michigan", "crash fault: exited with status 1", stderr="KeyError: 'max_bid'"),
    Broken("strict_types", "michigan", "crash fault", stderr="unknown message type 'notice'"),
    # Its exit may be seen before the next match starts ("lost before this match: ...")
    # or when that match's first message goes unread: the summary names the crash either way.
    Broken("one_match", "michigan", "exited with status 0"),
    Broken("long_line", "boodle", "line_too_long fault"),
    Broken("ignores_legal", "stops", "illegal fault"),
    Broken("greedy_bid", "auction", "illegal fault: a bid of"),
    Broken("no_exit", "shutdown", "still running 1 s after shutdown", stderr="one more minute"),
    Broken("exit_status", "shutdown", "exited with status 3 after shutdown"),
    Broken("no_eof_exit", "end of input", "still running 1 s after its input ended"),
]


@pytest.mark.parametrize(
    "bot", BROKEN, ids=lambda b: b.module + ("-tcp" if b.transport == "tcp" else "")
)
def test_a_bot_that_breaks_a_rule_fails_with_a_transcript(bot: Broken, tmp_path: Path) -> None:
    command = (sys.executable, "-m", f"tests.check.bots.{bot.module}", *bot.args)
    spec = BotSpec(bot.module, command, cwd=REPO, transport=bot.transport)
    report = check_bot(spec, bot.control, shutdown_grace=GRACE, keep_logs=tmp_path)
    text = render_report(report)
    failure = report.failure
    assert failure is not None, text
    assert not failure.check_bug, text
    assert failure.stage == bot.stage, text
    assert bot.says in failure.summary, text
    assert f"FAIL: {bot.stage}: " in text
    # Every stage before the failing one passed, and nothing ran after it.
    assert [stage.ok for stage in report.stages] == [True] * (len(report.stages) - 1) + [False]
    assert report.stages[-1].name == bot.stage
    # The transcript names the failing step, with an arrow on it.
    assert failure.step is not None, text
    assert str(failure.transcript[failure.step]).startswith("! ")
    assert f"→ {failure.step + 1:>{len(str(len(failure.transcript)))}} ! " in text
    if bot.stderr:
        assert "The bot's stderr" in text and bot.stderr in text, text
