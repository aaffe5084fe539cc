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
retires after 10 s idle (``referee.transport.process.ChildProcess`` says more); and
not bubblewrap's ``--die-with-parent`` (the same signal), since the child is
the referee, not a bot, and runs outside the sandbox.

Versions are admitted one at a time, oldest first; a restart takes up the
pending ones again (the decision is written only when it is made).

**Then it plays as a table plays** (``play_as_a_table``).  ``newmarket check``'s
scripted matches can be told from real ones by a bot (their match ids, rules,
seat counts and in-process opponents), so a bot could behave there and fault
in play.  So a version that passed plays ``[admission] groups`` duplicate
rotation groups exactly as a table would: on a table worker the server starts
as it starts its tables (the same program, niceness, sandbox, stderr cap and
time control), under the competition's rules and seat count, with match ids
of the real form (``g<group>r<rotation>``, the group number one a table could
be about to play), against opponents drawn from the versions playing now
(other participants' newest and the house bots, named as at a table), the
version's place at the table drawn too.  Nothing a bot is
sent in these matches differs in kind from a real match.  A fault in them
rejects it, with the match and the fault.  Their fault count is kept
(``check_play``): a version whose real matches then fault far more often is
flagged for the organiser (``referee.server.failures.watch_faults``).  The
deal comes from the operating system's randomness (``check_seed``).  A table
failure that is the platform's leaves the version pending, tried again later;
one that may be a bot's is retried with other opponents, then rejects it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import trio

from referee.bots import BotSpec, resolve_bot, spec_from_json
from referee.match.dealkey import fresh_deal_seed
from referee.match.key import MatchKey, rotations
from referee.server.build import BuildError, build
from referee.server.busy import written
from referee.server.competition import HOUSE_PREFIX
from referee.server.competition_db import CompetitionStore, Version, match_id
from referee.server.competition_file import REMOTE, CompetitionConfig
from referee.server.events import decide
from referee.server.quotas import ParticipantStorage
from referee.server.unpack import Room
from referee.transport.timecontrol import TimeControl

if TYPE_CHECKING:
    from referee.server.worker_table import WorkerError

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
    share = ParticipantStorage(config, store)
    left = await trio.to_thread.run_sync(share.room, store.versions(version.participant), 0)
    try:
        built = await build(
            version.runtime,
            root,
            files,
            name,
            competition_sandbox(config),
            config.compile_seconds,
            Room(left, share.over(left)),
        )
    except BuildError as error:
        decision = partial(
            decide, store, version.id, "rejected", f"build: {error}", error.transcript
        )
        await written(f"rejecting version {version.id}", decision)
        return False
    verdict = await run_check_process(config, built.spec.to_json())
    transcript = (built.transcript + "\n" if built.transcript else "") + verdict["transcript"]
    if not verdict["ok"]:
        why = f"check: {verdict['detail']}"
        decision = partial(decide, store, version.id, "rejected", why, transcript)
        await written(f"rejecting version {version.id}", decision)
        return False
    played = await play_as_a_table(config, store, version, built.spec)
    transcript += "\n" + played.transcript
    if played.failure is not None:
        why = f"check: {played.failure}"
        decision = partial(decide, store, version.id, "rejected", why, transcript)
        await written(f"rejecting version {version.id}", decision)
        return False
    # Its check's record first: the watch compares its first real matches with it.
    await written(
        f"recording the check of version {version.id}",
        partial(store.record_check_play, version.id, played.matches),
    )
    spec = built.spec.to_json()
    decision = partial(decide, store, version.id, "admitted", verdict["detail"], transcript, spec)
    await written(f"admitting version {version.id}", decision)
    return True


# ---------------------------------------------------------------- matches as a table plays them

TABLE_ATTEMPTS = 2  # a check whose table fails (maybe a bot's doing) this often rejects it
FALLBACK_BOTS = ("random", "lowest", "longest", "boodle", "tracker")
"""Opponents when too few versions play yet, named as house bots are (``house:NAME``)."""


class PlatformFailedError(Exception):
    """The check's table failed by the platform's fault: the version waits, pending."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what  # one public line: "the server is low on disk space", ...


@dataclasses.dataclass
class TablePlay:
    """What the version did in the matches its check played as a table would."""

    matches: list[dict[str, Any]]  # {"match": id, "faults": its faults there}
    failure: str | None  # one line: its first fault, or why it could not be judged
    transcript: str  # the lines for its owner's page


def check_seed() -> int:
    """The deal of a check's group, from the operating system's randomness.

    128 bits, as a real group's seed from the competition's key (``referee.match.dealkey``)
    is, and not from the key: a real group's would deal a bot a group it may meet later.
    """
    return fresh_deal_seed()


def check_opponents(
    store: CompetitionStore, version: Version, seats: int, draw: random.Random
) -> list[tuple[int, BotSpec]]:
    """``seats`` opponents as a table would seat them with ``version``: the versions playing
    now (one per participant, not its own, no remote one), by roster index and spec."""
    playing = [
        v
        for v in store.playing_versions()
        if v.participant != version.participant and v.runtime != REMOTE and v.spec is not None
    ]
    chosen = draw.sample(playing, min(seats, len(playing)))
    opponents = [(v.id, spec_from_json(v.spec or {})) for v in chosen]
    taken = {spec.name for _index, spec in opponents}
    spare = max([version.id, *(v.id for v in playing)]) + 1
    for name in FALLBACK_BOTS:
        if len(opponents) >= seats:
            break
        if HOUSE_PREFIX + name not in taken:
            opponents.append((spare, resolve_bot(name, HOUSE_PREFIX + name)))
            spare += 1
    return opponents


async def play_as_a_table(
    config: CompetitionConfig, store: CompetitionStore, version: Version, spec: BotSpec
) -> TablePlay:
    """Play ``[admission] groups`` groups with ``version`` as a table worker plays real ones.

    Raises ``PlatformFailedError`` when the platform failed (the version waits).
    """
    draw = random.SystemRandom()
    # Versions are checked one at a time: whatever is here was left by a stop mid-check.
    shutil.rmtree(config.data / "admission", ignore_errors=True)
    logs = config.data / "admission" / f"{version.id:06d}"
    matches: list[dict[str, Any]] = []
    lines = [
        f"Then {config.admission.groups} duplicate group(s) played as a table plays them "
        "(the competition's rules, seats and time control):"
    ]
    try:
        with trio.move_on_after(config.admission.seconds):
            for _group in range(config.admission.groups):
                for attempt in range(1, TABLE_ATTEMPTS + 1):
                    failed = await _check_group(config, store, version, spec, draw, logs, matches)
                    if failed is None:
                        break
                    lines.append(f"  its table failed ({failed}); played again with others")
                    if attempt == TABLE_ATTEMPTS:
                        why = f"play: its table failed {TABLE_ATTEMPTS} times: {failed}"
                        text = "\n".join([*lines, f"FAIL: {why}"]) + "\n"
                        return TablePlay(matches, why, text)
                if any(match["faults"] for match in matches):
                    break
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    for match in matches:
        shown = "ok" if not match["faults"] else f"{match['faults']} fault(s): {match['first']}"
        lines.append(f"  {match['match']}  {shown}")
    faulted = next((m for m in matches if m["faults"]), None)
    if faulted is not None:
        why = f"play: {faulted['match']}: {faulted['first']}"
        return TablePlay(matches, why, "\n".join([*lines, f"FAIL: {why}"]) + "\n")
    if not matches:
        why = f"play: its matches ran longer than {config.admission.seconds} s"
        return TablePlay(matches, why, "\n".join([*lines, f"FAIL: {why}"]) + "\n")
    lines.append(f"PASS: {len(matches)} matches, 0 faults.")
    return TablePlay(matches, None, "\n".join(lines) + "\n")


async def _check_group(
    config: CompetitionConfig,
    store: CompetitionStore,
    version: Version,
    spec: BotSpec,
    draw: random.Random,
    logs: Path,
    matches: list[dict[str, Any]],
) -> str | None:
    """One group on a fresh table worker; its matches added to ``matches``; a charged
    table failure's public line, or None.  Raises ``PlatformFailedError``."""
    from referee.server.sandboxing import sandbox_setting
    from referee.server.worker_table import WorkerError, WorkerTable

    opponents = check_opponents(store, version, config.players - 1, draw)
    specs = {version.id: spec, **dict(opponents)}
    # Its place at the table is drawn: in play it is the focus (first) only while new, and a
    # bot that sees its rotation and seat in every match could tell a fixed place from play.
    table = [index for index, _spec in opponents]
    table.insert(draw.randrange(len(table) + 1), version.id)
    group = store.last_group_id() + 1 + draw.randrange(config.jobs)  # one a table could play
    number = 1 + draw.randrange(config.jobs)
    seed = check_seed()
    worker = await WorkerTable.start(  # its logs are read once and removed: kept full
        config.time_control,
        logs,
        number,
        sandbox_setting(config),
        config.storage.stderr_bytes,
        log_form="full",
    )
    try:
        for rotation, seating in enumerate(rotations(table)):
            key = _check_key(config, group, number, rotation, seating, seed)
            try:
                result = await worker.play(key, config.rules, specs, specs)
            except WorkerError as error:
                error.match_id = key.match_id
                return _lost_table(config, version, key, error)
            faults = [
                fault
                for seat in result.seats
                if seating[seat.seat] == version.id
                for fault in seat.faults
            ]
            first = "" if not faults else f"{faults[0].kind} fault: {faults[0].detail}"
            matches.append({"match": key.match_id, "faults": len(faults), "first": first})
            if faults:
                return None  # judged: the rest would not change the verdict
    finally:
        await worker.aclose()
    return None


def _check_key(
    config: CompetitionConfig,
    group: int,
    number: int,
    rotation: int,
    seating: tuple[int, ...],
    seed: int,
) -> MatchKey:
    """A check's match: in group ``group`` at table ``number``, as a played match is keyed."""
    return MatchKey(
        match_id=match_id(group, rotation),
        ordinal=group * 8 + rotation,
        round=group,
        table=number,
        rotation=rotation,
        seed=seed,
        bots=seating,
        start_chips=(config.rules.starting_chips,) * len(seating),
        deal_seed=seed,
    )


def _lost_table(
    config: CompetitionConfig, version: Version, key: MatchKey, error: WorkerError
) -> str:
    """The public line of a check's table failure charged to the version, which is rejected.

    Raises ``PlatformFailedError`` if the platform failed (its disk, its memory), which
    leaves the version pending; the operator's stderr is told either way.
    """
    from referee.server.failures import platform_cause
    from referee.server.quotas import for_config as disk_space
    from referee.server.quotas import public_text
    from referee.server.sandboxing import competition_sandbox

    disk_low = disk_space(config).low()
    isolated = competition_sandbox(config).isolation is not None
    platform = platform_cause(error, disk_low, not isolated)
    print(
        f"newmarket serve: the check of version {version.id} lost its table in "
        f"{key.match_id}: {error.text} ({platform or 'maybe a bot at it'})",
        file=sys.stderr,
        flush=True,
    )
    if platform is not None:
        raise PlatformFailedError(platform) from None
    return public_text(error.text)


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
    from referee.sandbox import resolve, setting_from_env
    from referee.tools import check

    spec = spec_from_json(request["spec"])
    control = TimeControl(**request["time_control"])
    sandbox = resolve(*setting_from_env(request["sandbox"]))
    logs = Path(tempfile.mkdtemp(prefix="newmarket-admit-"))
    try:
        report = trio.run(
            _check_while_wanted,
            # Dealt from a fresh key: the scenarios' own seeds are in the open-source file.
            lambda: check.run_check(
                spec,
                control,
                log_dir=logs,
                sandbox=sandbox,
                scenarios=check.secret_scenarios(),
            ),
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
