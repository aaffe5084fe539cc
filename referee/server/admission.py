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

The child dies with the server as a table worker does: its stdin stays open
after the request, and its closing (the server ended, even by ``kill -9``:
the kernel closes the pipe) cancels the check, which ends the bot's process
tree, and the child exits.  Not ``PR_SET_PDEATHSIG``: trio forks from a
worker thread, and that signal follows the *thread* that forked, which trio
retires after 10 s idle (``referee.process.ChildProcess`` says more); and
not bubblewrap's ``--die-with-parent`` (the same signal), since the child is
the referee, not a bot, and runs outside the sandbox.

Versions are admitted one at a time, oldest first; a restart takes up the
pending ones again (the decision is written only when it is made).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import trio

from referee.server.build import BuildError, build
from referee.server.busy import written
from referee.server.config import CompetitionConfig
from referee.server.store import CompetitionStore, Version
from referee.timecontrol import TimeControl

T = TypeVar("T")

CHECK_SECONDS = 300.0  # the whole check of one version, wall clock
END_GRACE = 10.0  # for the child to end its bots and exit once its stdin closed, then SIGKILL


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
        decision = partial(
            store.decide, version.id, "rejected", f"build: {error}", error.transcript
        )
        await written(f"rejecting version {version.id}", decision)
        return False
    verdict = await run_check_process(config, built.spec.to_json())
    transcript = (built.transcript + "\n" if built.transcript else "") + verdict["transcript"]
    if verdict["ok"]:
        spec = built.spec.to_json()
        decision = partial(
            store.decide, version.id, "admitted", verdict["detail"], transcript, spec
        )
        await written(f"admitting version {version.id}", decision)
        return True
    why = f"check: {verdict['detail']}"
    decision = partial(store.decide, version.id, "rejected", why, transcript)
    await written(f"rejecting version {version.id}", decision)
    return False


async def run_check_process(config: CompetitionConfig, spec: dict[str, Any]) -> dict[str, Any]:
    """``newmarket check`` on ``spec`` in a child process; its verdict."""
    from referee.sandbox import setting_to_env

    request = {
        "spec": spec,
        "time_control": config.time_control.to_json(),
        "sandbox": setting_to_env(config.sandbox_level, config.sandbox_limits),
    }
    stdout, stderr = bytearray(), bytearray()
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "referee.server.admission"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    assert process.stderr is not None
    try:
        with trio.move_on_after(CHECK_SECONDS) as scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_drain, process.stdout, stdout)
                nursery.start_soon(_drain, process.stderr, stderr)
                # The request, and stdin left open: its end is the child's signal to stop.
                with contextlib.suppress(trio.BrokenResourceError):  # it died: stderr says why
                    await process.stdin.send_all(json.dumps(request).encode() + b"\n")
                await process.wait()
                # What it wrote is in the pipes; a grandchild holding them is not waited for.
                nursery.cancel_scope.deadline = trio.current_time() + END_GRACE
    finally:
        with trio.CancelScope(shield=True):
            await _end_child(process)
    if scope.cancelled_caught:
        return {
            "ok": False,
            "detail": f"the check ran longer than {CHECK_SECONDS:g} s",
            "transcript": "",
        }
    try:
        verdict: dict[str, Any] = json.loads(bytes(stdout).decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = bytes(stderr).decode(errors="replace")[-2000:]
        return {
            "ok": False,
            "detail": "the check itself failed (a server bug, not yours)",
            "transcript": tail,
        }
    return verdict


async def _drain(stream: trio.abc.ReceiveStream, into: bytearray) -> None:
    while data := await stream.receive_some():
        into += data


async def _end_child(process: trio.Process) -> None:
    """Close the child's stdin (it cancels its check and ends its bots), then make sure."""
    assert process.stdin is not None
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        await process.stdin.aclose()
    with trio.move_on_after(END_GRACE):
        await process.wait()
    if process.returncode is None:
        process.kill()
        await process.wait()


# ---------------------------------------------------------------- the child process


async def _until_stdin_closes(scope: trio.CancelScope) -> None:
    """Cancel ``scope`` when the server closes our stdin: it has gone (or given up on us)."""
    stdin = trio.lowlevel.FdStream(os.dup(0))
    async with stdin:
        while await stdin.receive_some():
            pass  # the server sends nothing after the request
    scope.cancel()


async def _check_while_wanted(run: Callable[[], Awaitable[T]]) -> T | None:
    """``run()``, or None once the server has closed our stdin (the check then cancelled)."""
    result: T | None = None
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_until_stdin_closes, nursery.cancel_scope)
        result = await run()
        nursery.cancel_scope.cancel()
    return result


def _check_in_sandbox(request: dict[str, Any]) -> dict[str, Any] | None:
    from referee import check
    from referee.league.worker import spec_from_json
    from referee.sandbox import resolve, setting_from_env

    spec = spec_from_json(request["spec"])
    control = TimeControl(**request["time_control"])
    sandbox = resolve(*setting_from_env(request["sandbox"]))
    logs = Path(tempfile.mkdtemp(prefix="newmarket-admit-"))
    try:
        report = trio.run(
            _check_while_wanted,
            lambda: check.run_check(spec, control, log_dir=logs, sandbox=sandbox),
        )
        if report is None:
            return None
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
    # One line from the raw descriptor: a buffered reader could take more than the line,
    # and the rest of stdin is watched on the descriptor itself (its end stops the check).
    line = bytearray()
    while not line.endswith(b"\n") and (byte := os.read(0, 1)):
        line += byte
    verdict = _check_in_sandbox(json.loads(line))
    if verdict is None:
        sys.exit("newmarket check: the server has gone; the check was stopped")
    sys.stdout.write(json.dumps(verdict) + "\n")


if __name__ == "__main__":
    main()
