"""The report as text: what ``newmarket check`` prints, stage by stage.

Wire lines are cut in the middle to a fixed width (``--json`` keeps them
whole), the transcript is shown around the failing step, and the bot's stderr
follows, its last lines unless ``--show-stderr`` asks for all of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from referee.bots import BotSpec
from referee.tools.check.evidence import Line
from referee.tools.check.scenarios import SCENARIOS
from referee.tools.check.verdict import (
    KINDS,
    LIFECYCLE,
    CheckReport,
    Failure,
    Stage,
    latency_summary,
)
from referee.transport.timecontrol import TimeControl

WIDTH: Final = 180  # transcript lines are cut here in text output (--json keeps them whole)
BEFORE: Final = 24  # transcript lines shown before the failing step
AFTER: Final = 6  # ... and after it
NAME_WIDTH: Final = max(len(name) for name in (*LIFECYCLE, *(s.name for s in SCENARIOS)))


def _cut(text: str, width: int = WIDTH) -> str:
    """A long line's start and end with the middle left out: a request's ``legal`` and
    ``default`` lead it, and the last events of a batch (the stop) end it."""
    if len(text) <= width:
        return text
    tail = width // 3
    head = width - tail - 16
    return f"{text[:head]} …{len(text) - head - tail:>5} chars… {text[-tail:]}"


def _shown(line: Line) -> str:
    """Wire lines are cut to ``WIDTH``; verdicts and notes are shown whole."""
    return _cut(str(line)) if line.mark in "<>" else str(line)


def render_transcript(lines: Sequence[Line], step: int | None) -> list[str]:
    """Numbered lines around the failing step (marked ``→``); the first two always show."""
    if not lines:
        return []
    focus = len(lines) - 1 if step is None else step
    low = max(0, focus - BEFORE)
    high = min(len(lines), focus + AFTER + 1)
    width = len(str(len(lines)))
    head = min(2, low)
    shown = [f"  {index + 1:>{width}} {_shown(lines[index])}" for index in range(head)]
    if low > head:
        shown.append(f"  {'':>{width}} … {low - head} lines …")
    for index in range(low, high):
        pointer = "→" if index == step else " "
        shown.append(f"{pointer} {index + 1:>{width}} {_shown(lines[index])}")
    if high < len(lines):
        shown.append(f"  {'':>{width}} … {len(lines) - high} more lines …")
    return shown


def render_header(spec: BotSpec, control: TimeControl) -> str:
    return (
        f"newmarket check: {spec.name} ({' '.join(spec.command)}) over {spec.transport}, "
        f"move time {control.move_time_ms} ms, time bank {control.time_bank_ms} ms\n"
    )


def render_stage(stage: Stage) -> str:
    """One stage as one or two lines: the verdict, the name and what it is about; then the
    decisions answered, or the stage's detail (always shown when it failed)."""
    mark = "ok  " if stage.ok else "FAIL"
    out = f"  {mark}  {stage.name:<{NAME_WIDTH}}  {stage.about}\n"
    asked = ", ".join(
        f"{kind} {stage.decisions[kind]}" for kind in KINDS if kind in stage.decisions
    )
    detail = stage.detail if (not stage.ok or stage.detail) else f"answered: {asked or 'nothing'}"
    if detail:
        out += f"        {'':<{NAME_WIDTH}}  {detail}\n"
    return out


def render_stderr(text: str, limit: int | None) -> list[str]:
    """The bot's stderr, indented: its last ``limit`` lines, each ``_cut`` to ``WIDTH``; or
    (``None``, ``--show-stderr``) all of it, every line whole, as the bot wrote it."""
    lines = text.rstrip("\n").splitlines() if text.strip() else []
    if not lines:
        return ["The bot wrote nothing to stderr."]
    if limit is None:
        return ["The bot's stderr:", *(f"  | {line}" for line in lines)]
    shown = lines[-limit:]
    cut = any(len(line) > WIDTH for line in shown)
    left_out = [f"its last {len(shown)} lines"] if len(shown) < len(lines) else []
    if cut:
        left_out.append(f"lines over {WIDTH} characters cut in the middle")
    head = (
        f"The bot's stderr ({'; '.join(left_out)}; --show-stderr shows it all, whole):"
        if left_out
        else "The bot's stderr:"
    )
    return [head, *(f"  | {_cut(line)}" for line in shown)]


def render_footer(report: CheckReport, *, show_stderr: bool = False) -> str:
    out: list[str] = []
    if report.not_run:
        out.append(f"  (not run: {', '.join(report.not_run)})")
    out.append("")
    if report.failure is None:
        out += _passed(report, show_stderr)
    else:
        out += _failed(report.failure, show_stderr)
    return "\n".join(out) + "\n"


def _passed(report: CheckReport, show_stderr: bool) -> list[str]:
    """The footer of a bot that passed: counts, decisions and reply latencies."""
    matches = len([stage for stage in report.stages if stage.name not in LIFECYCLE])
    decisions = report.decisions()
    out = [
        f"PASS: {len(report.stages)} checks, {matches} matches on one process, 0 faults.",
        "Decisions answered: "
        + ", ".join(f"{kind} {n}" for kind, n in decisions.items())
        + f" ({sum(decisions.values())} in all).",
    ]
    summary = latency_summary(report.latencies_ms())
    if summary is not None:
        out.append(
            f"Reply latency: median {summary['median']:.1f} ms, "
            f"95th percentile {summary['p95']:.1f} ms, slowest {summary['max']:.1f} ms "
            f"(the move time is {report.control.move_time_ms} ms)."
        )
    if show_stderr:
        out.extend(["", *render_stderr(report.stderr, None)])
    return out


def _failed(failure: Failure, show_stderr: bool) -> list[str]:
    """The footer of a bot that failed: the transcript around the failing step, its stderr."""
    out: list[str] = []
    if failure.check_bug:
        out.append(
            f"The scenario {failure.stage!r} did not do what it promises: a bug in newmarket "
            "check, not in the bot. Please report it with this output."
        )
    if failure.transcript:
        out.append(
            f"Transcript of {failure.stage!r} (< to the bot, > from the bot, "
            "! the referee's verdict, = a default applied, # a note):"
        )
        out.extend(render_transcript(failure.transcript, failure.step))
        out.append("")
    out.extend(render_stderr(failure.stderr, None if show_stderr else STDERR_LINES))
    out.append("")
    out.append(f"FAIL: {failure.stage}: {failure.summary}")
    if failure.log_path is not None:
        out.append(f"Match log: {failure.log_path}")
    elif failure.stage not in LIFECYCLE:
        out.append("(--log-dir DIR keeps the match logs)")
    return out


STDERR_LINES: Final = 20


def render_report(report: CheckReport) -> str:
    """The whole report as text: what ``newmarket check`` prints, stage by stage."""
    stages = "".join(render_stage(stage) for stage in report.stages)
    return render_header(report.bot, report.control) + "\n" + stages + render_footer(report)
