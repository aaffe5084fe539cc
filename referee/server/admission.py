"""Admission: a pending version is built, then must pass ``newmarket check`` before it plays.

The check runs in a child process (``python -m referee.server.admission``),
not on the server's loop: it referees real matches in Python, which would
cost the web pages their latency, and a bug it trips over stays in the
child.  The child receives the version's ``BotSpec``, the competition's time
control and sandbox setting as one JSON line on stdin and answers with one
JSON line: ``{"ok": bool, "detail": "...", "transcript": "..."}`` (the
transcript is ``newmarket check``'s own text report, shown to the owner).

The check runs under the competition's sandbox (``run_check(sandbox=...)``),
like every table the version will play.

Versions are admitted one at a time, oldest first; a restart takes up the
pending ones again (the decision is written only when it is made).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import trio

from referee.server.build import BuildError, build
from referee.server.config import CompetitionConfig
from referee.server.store import CompetitionStore, Version
from referee.timecontrol import TimeControl

CHECK_SECONDS = 300.0  # the whole check of one version, wall clock


def version_dir(config: CompetitionConfig, version: Version) -> Path:
    return config.uploads_dir / f"{version.id:06d}" / "files"


async def admit(config: CompetitionConfig, store: CompetitionStore, version: Version) -> bool:
    """Build and check ``version``; write the decision. True if admitted."""
    from referee.server.sandboxing import competition_sandbox

    root = version_dir(config, version)
    files = sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file())
    name = f"{version.participant_name}-v{version.number}"
    try:
        built = await build(
            version.runtime,
            root,
            files,
            name,
            competition_sandbox(config),
            config.compile_seconds,
        )
    except BuildError as error:
        store.decide(version.id, "rejected", f"build: {error}", error.transcript)
        return False
    verdict = await run_check_process(config, built.spec.to_json())
    transcript = (built.transcript + "\n" if built.transcript else "") + verdict["transcript"]
    if verdict["ok"]:
        store.decide(version.id, "admitted", verdict["detail"], transcript, built.spec.to_json())
        return True
    store.decide(version.id, "rejected", f"check: {verdict['detail']}", transcript)
    return False


async def run_check_process(config: CompetitionConfig, spec: dict[str, Any]) -> dict[str, Any]:
    """``newmarket check`` on ``spec`` in a child process; its verdict."""
    from referee.sandbox import setting_to_env

    request = {
        "spec": spec,
        "time_control": config.time_control.to_json(),
        "sandbox": setting_to_env(config.sandbox_level, config.sandbox_limits),
    }
    with trio.move_on_after(CHECK_SECONDS) as scope:
        done = await trio.run_process(
            [sys.executable, "-m", "referee.server.admission"],
            stdin=json.dumps(request).encode(),
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    if scope.cancelled_caught:
        return {
            "ok": False,
            "detail": f"the check ran longer than {CHECK_SECONDS:g} s",
            "transcript": "",
        }
    try:
        verdict: dict[str, Any] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = done.stderr.decode(errors="replace")[-2000:]
        return {
            "ok": False,
            "detail": "the check itself failed (a server bug, not yours)",
            "transcript": tail,
        }
    return verdict


# ---------------------------------------------------------------- the child process


def _check_in_sandbox(request: dict[str, Any]) -> dict[str, Any]:
    from referee import check
    from referee.league.worker import spec_from_json
    from referee.sandbox import resolve, setting_from_env

    spec = spec_from_json(request["spec"])
    control = TimeControl(**request["time_control"])
    sandbox = resolve(*setting_from_env(request["sandbox"]))
    logs = Path(tempfile.mkdtemp(prefix="newmarket-admit-"))
    try:
        report = trio.run(lambda: check.run_check(spec, control, log_dir=logs, sandbox=sandbox))
        # The match log's path is the server's, and deleted below: not for the participant.
        lines = check.render_report(report).splitlines()
        text = "\n".join(line for line in lines if not line.startswith("Match log: ")) + "\n"
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    if report.ok:
        passed = [line for line in text.splitlines() if line.startswith("PASS")]
        return {"ok": True, "detail": passed[0] if passed else "PASS", "transcript": text}
    failure = report.failure
    assert failure is not None
    return {"ok": False, "detail": f"{failure.stage}: {failure.summary}", "transcript": text}


def main() -> None:
    request = json.loads(sys.stdin.readline())
    verdict = _check_in_sandbox(request)
    sys.stdout.write(json.dumps(verdict) + "\n")


if __name__ == "__main__":
    main()
