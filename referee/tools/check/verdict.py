"""What the check found: each stage's verdict, the first failure, the whole report as data.

``judge`` turns a played scenario's match log into its ``Stage`` (decisions
answered, reply latencies) and, if the bot faulted, was lost, ended or was not
shown what the scenario promised, its ``Failure`` with the transcript.  The
verdict on each reply is the referee's own: the check adds no judge.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from referee.bots import BotSpec
from referee.match.log import read_log
from referee.match.result import MatchResult
from referee.text.faults import fault_line
from referee.tools.check.evidence import Line, build_transcript, seen_of
from referee.tools.check.scenarios import Scenario
from referee.transport.session import (
    BotSession,
)
from referee.transport.timecontrol import TimeControl

KINDS: Final = ("stake", "dead_hand", "bid", "lead")
LIFECYCLE: Final = ("handshake", "shutdown", "end of input")


@dataclasses.dataclass
class Failure:
    """The first thing that went wrong: where, one line why, and the evidence."""

    stage: str
    summary: str
    transcript: list[Line] = dataclasses.field(default_factory=list)
    step: int | None = None  # index into ``transcript`` of the failing step
    stderr: str = ""
    log_path: Path | None = None
    check_bug: bool = False  # the scenario did not do what it promised: not the bot's fault

    def to_json(self) -> dict[str, object]:
        return {
            "stage": self.stage,
            "summary": self.summary,
            "step": None if self.step is None else self.step + 1,
            "transcript": [str(line) for line in self.transcript],
            "stderr": self.stderr,
            "log": None if self.log_path is None else str(self.log_path),
            "check_bug": self.check_bug,
        }


@dataclasses.dataclass
class Stage:
    """One line of the report: the handshake, a scenario, shutdown or end of input."""

    name: str
    about: str
    ok: bool
    detail: str = ""
    decisions: dict[str, int] = dataclasses.field(default_factory=dict)
    latencies_ms: list[float] = dataclasses.field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "about": self.about,
            "ok": self.ok,
            "detail": self.detail,
            "decisions": self.decisions,
            "latency_ms": latency_summary(self.latencies_ms),
        }


@dataclasses.dataclass
class CheckReport:
    """Everything ``newmarket check`` prints, as data (``to_json`` is its ``--json``)."""

    bot: BotSpec
    control: TimeControl
    stages: list[Stage] = dataclasses.field(default_factory=list)
    failure: Failure | None = None
    reported_name: str | None = None
    reported_version: str | None = None
    not_run: list[str] = dataclasses.field(default_factory=list)
    on_stage: Callable[[Stage], None] | None = None  # told each stage as it is judged
    stderr: str = ""  # everything the bot's (first) process wrote to stderr

    def add(self, stage: Stage) -> None:
        self.stages.append(stage)
        if self.on_stage is not None:
            self.on_stage(stage)

    @property
    def ok(self) -> bool:
        return self.failure is None

    def decisions(self) -> dict[str, int]:
        total = dict.fromkeys(KINDS, 0)
        for stage in self.stages:
            for kind, count in stage.decisions.items():
                total[kind] = total.get(kind, 0) + count
        return total

    def latencies_ms(self) -> list[float]:
        return [ms for stage in self.stages for ms in stage.latencies_ms]

    def to_json(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "bot": {
                "name": self.bot.name,
                "command": list(self.bot.command),
                "transport": self.bot.transport,
                "reported_name": self.reported_name,
                "reported_version": self.reported_version,
            },
            "time_control": self.control.to_json(),
            "stages": [stage.to_json() for stage in self.stages],
            "not_run": self.not_run,
            "decisions": self.decisions(),
            "latency_ms": latency_summary(self.latencies_ms()),
            "failure": None if self.failure is None else self.failure.to_json(),
            "stderr": self.stderr,
        }


def latency_summary(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    ordered = sorted(values)

    def at(fraction: float) -> float:
        return ordered[min(len(ordered) - 1, math.ceil(fraction * len(ordered)) - 1)]

    return {"median": at(0.5), "p95": at(0.95), "max": ordered[-1], "count": len(ordered)}


def judge(
    scenario: Scenario, result: MatchResult, sent: list[bytes], path: Path, session: BotSession
) -> tuple[Stage, Failure | None]:
    """A played scenario's line in the report, and its failure (None if the bot passed).

    The bot fails on its first fault, on being lost while told the match's
    end, or on a session that ended; a scenario that did not show the bot
    what it promises is a failure of the check itself (``check_bug``).
    """
    records = [record for _, record in read_log(path)]
    seat = scenario.seat
    kind_of = {
        r["id"]: r["decision"] for r in records if r["type"] == "request" and r["seat"] == seat
    }
    stage = Stage(scenario.name, scenario.about, True)
    for record in records:
        if record["type"] == "reply" and record["seat"] == seat:
            kind = kind_of.get(record["id"], "?")
            stage.decisions[kind] = stage.decisions.get(kind, 0) + 1
            stage.latencies_ms.append(float(record["latency_ms"]))
    faults = result.seats[seat].faults
    lost = [r for r in records if r["type"] == "lost" and r["seat"] == seat]
    missing = [expect.what for expect in scenario.expect if not expect.test(seen_of(sent))]
    if faults:
        why = fault_line(faults[0].kind, faults[0].detail)
    elif lost:
        why = f"lost while told the match's end: {lost[0]['kind']}: {lost[0]['detail']}"
    elif not session.alive:
        why = f"the session ended: {session.death.detail if session.death else 'unknown'}"
    elif missing:
        why = "the scenario did not show the bot " + "; ".join(missing)
    else:
        return stage, None
    stage.ok = False
    stage.detail = why
    transcript, step = build_transcript(sent, records, seat)
    return stage, Failure(
        scenario.name,
        why if step is None else f"step {step + 1}: {why}",
        transcript,
        step,
        session.stderr_text(),
        path,
        check_bug=not faults and not lost and session.alive,
    )
