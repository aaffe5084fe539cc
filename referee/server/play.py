"""The loops that never stop: admission of pending versions, and tables playing groups.

* ``admission_loop`` takes pending versions one at a time, participants in
  turn and each one's oldest first (those left pending by a crash too), and
  admits or rejects each (``referee.server.admission``).
* ``table_loop`` (one per ``--jobs``) owns one table worker process and plays
  one duplicate rotation group after another: first the groups a previous
  run began and did not finish (their missing rotations only), then groups
  chosen by ``referee.server.scheduler.choose_table``.  Each finished match is
  recorded at once, in one transaction.  While paused, no new group starts
  (a group in progress finishes: its rotations belong together).

While the data directory's disk is low (``referee.server.quotas``) nothing
starts: no version is admitted, no group planned and no match begun (a group
in progress waits between two matches); the status line says so, and all
resumes by itself when there is room.  A table whose worker fails is judged
by ``referee.server.failures``: the platform's failures are never charged to
a bot (the group waits and is played again, not given up); the others count
towards a suspension.
"""

from __future__ import annotations

import random
import sys
import traceback
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Protocol

import trio

from engine.rules import Rules
from referee.bots import BotSpec, spec_from_json
from referee.match.archive import stored_path
from referee.match.key import MatchKey, derive_seed, rotations
from referee.match.result import MatchResult
from referee.server.admission import PlatformFailedError, admit
from referee.server.busy import written
from referee.server.competition import Competition
from referee.server.competition_db import Group, Version, match_id
from referee.server.competition_file import REMOTE
from referee.server.contest_db import households
from referee.server.events import record_match
from referee.server.failures import Suspicions, platform_cause, watch_faults
from referee.server.operations import log_operation
from referee.server.organiser import new_replacements, replacements
from referee.server.quotas import public_text
from referee.server.sandboxing import sandbox_setting
from referee.server.scheduler import SHARE_WINDOW, Candidate, choose_table
from referee.server.unpack import StorageError, UnpackError
from referee.server.uploads import unpack_version
from referee.server.worker_table import WorkerError, WorkerTable
from referee.storage.private_files import private_dir

POLL = 1.0  # seconds between looks at the pause flag, the disk and the roster when idle
RESTART_DELAY = 5.0  # after a table worker failed
PLATFORM_DELAY_MAX = 300.0  # the longest wait after the platform's failures in a row (doubling)
GROUP_ATTEMPTS = 2  # a group whose table worker dies this often (charged) is given up
STORAGE_WAIT = 60.0  # seconds before admission tries again after the server's disk was full


async def wait_for_room(competition: Competition) -> None:
    """Return once the data directory's disk has the room kept free; the status says why not."""
    while competition.disk.low():
        competition.status = competition.disk.status()
        with trio.move_on_after(POLL):
            await competition.changed.wait()


async def admission_loop(competition: Competition) -> None:
    """Admit pending versions one at a time, participants in turn.

    Each version costs up to its build time plus the check's five minutes, and a
    participant may upload many an hour: oldest first, one participant's burst
    would hold everybody else's versions for hours.  So the next version is the
    oldest of the participant served longest ago (never served first).
    """
    served: dict[int, int] = {}  # participant -> the turn it was last served at
    turn = 0
    while True:
        # A remote version is admitted by its first connection (referee.server.remote), and
        # one still being unpacked by its upload request when that request is done.
        pending = [
            v
            for v in competition.store.versions(status="pending")
            if v.runtime != REMOTE and v.id not in competition.unpacking
        ]
        if not pending:
            with trio.move_on_after(POLL):
                await competition.changed.wait()
            continue
        if competition.disk.low():
            # Unpacking, building and the check's matches all write under the data directory.
            await wait_for_room(competition)
            continue
        version = min(pending, key=lambda v: (served.get(v.participant, -1), v.id))
        served[version.participant] = turn
        turn += 1
        if not await _admit_one(competition, version):
            await trio.sleep(STORAGE_WAIT)


async def _admit_one(competition: Competition, version: Version) -> bool:
    """Admit or reject ``version``; False if the platform failed and it stays pending."""
    competition.admitting = version.id
    try:
        # Unpacked again, if a crash came between the upload and its unpacking.
        others = competition.store.versions(version.participant)
        await trio.to_thread.run_sync(unpack_version, competition, version, others)
        await admit(competition.config, competition.store, version)
    except UnpackError as error:
        rejected = partial(competition.store.decide, version.id, "rejected", f"upload: {error}")
        await written(f"rejecting version {version.id}", rejected)
    except (StorageError, PlatformFailedError) as error:
        # The server's disk, or its check's table, not the version: it stays pending,
        # and is tried again.
        competition.status = f"admission waits: {error.what}"
        log_operation(
            "platform-fault",
            where="admission",
            version=version.id,
            what=error.what,
            retry_in=STORAGE_WAIT,
        )
        return False
    except Exception as error:
        # A bug on this version's path must not end the loop: the version stays
        # pending, so every restart would meet it again and stop the server for
        # good. It is rejected with the error named; the next version goes on.
        # The traceback goes to the operator's stderr: a bug must stay visible.
        traceback.print_exc(file=sys.stderr)
        why = public_text(
            "the server failed while admitting it (a server bug, not yours): "
            f"{type(error).__name__}: {error}"
        )[:500]
        rejected = partial(competition.store.decide, version.id, "rejected", why)
        await written(f"rejecting version {version.id}", rejected)
        competition.status = f"admission of version {version.id}: {type(error).__name__}"
    finally:
        competition.admitting = None
        competition.notify()
    _log_decision(competition, version.id)
    return True


def _log_decision(competition: Competition, version_id: int) -> None:
    """The operations log's line for a version just admitted or rejected."""
    decided = competition.store.version(version_id)
    if decided is None or decided.status not in ("admitted", "rejected"):
        return
    log_operation(
        "admission" if decided.status == "admitted" else "rejection",
        version=decided.id,
        participant=decided.participant_name,
        number=decided.number,
        runtime=decided.runtime,
        why=decided.detail[:300],
    )


class GroupQueue:
    """Hands each table its next group: unfinished ones first, then the scheduler's choice."""

    def __init__(self, competition: Competition) -> None:
        self.competition = competition
        self.resumed = competition.store.unfinished_groups()
        self.rng = random.Random(derive_seed(competition.config.seed, "scheduler"))
        self.attempts: dict[int, int] = {}  # group -> table workers it has cost (charged)
        self.suspicions = Suspicions(competition)
        # The organiser's re-runs (``referee.server.organiser``) not begun are new groups:
        # next_group takes them in when not paused, as those planned later.
        reruns = replacements(competition.store)
        waiting = {group.id for group, done in self.resumed if not done} & reruns
        self.resumed = [(group, done) for group, done in self.resumed if group.id not in waiting]
        self.reruns = reruns - waiting

    def group_played(self, group: Group) -> None:
        self.suspicions.cleared(group.versions)

    async def table_failed(self, group: Group, error: WorkerError, platform: str | None) -> None:
        """A table worker failed mid-group; ``platform`` says why it was the platform's, if so.

        The platform's failure costs nobody anything: the group is played again
        (once there is room), however often.  Any other is charged: the group is
        retried once, then given up (its played rotations still count), and a
        version seated at ``SUSPECT_FAILURES`` charged failures in a row, with no
        good group between, is suspended with them as evidence
        (``referee.server.failures``).
        """
        store = self.competition.store
        if platform is not None:
            self.resumed.insert(0, (group, store.rotations_done(group.id)))
            return
        self.attempts[group.id] = self.attempts.get(group.id, 0) + 1
        if self.attempts[group.id] < GROUP_ATTEMPTS:
            self.resumed.insert(0, (group, store.rotations_done(group.id)))
        else:
            await written(f"giving up group {group.id}", lambda: store.abandon_group(group.id))
        for version, why, evidence in self.suspicions.charged(group.versions, error):
            suspend = partial(store.suspend, version, why, evidence)
            await written(f"suspending version {version}", suspend)
            log_operation(
                "suspension",
                version=version,
                why=why,
                matches=",".join(str(entry["match"]) for entry in evidence),
            )

    def candidates(self, remote: bool) -> list[Candidate]:
        """Who may sit: every playing version, remote ones only at the remote table and
        only while connected and not at another group."""
        competition = self.competition
        linked = households(competition.store)  # kept apart as one owner (scheduler rule 6)
        return [
            Candidate(v.id, v.participant, competition.is_house(v), linked.get(v.participant))
            for v in competition.store.playing_versions()
            if v.runtime != REMOTE or (remote and competition.connected(v.id))
        ]

    def recent_seats(self) -> list[int]:
        store = self.competition.store
        rows = store.recent_group_participants(SHARE_WINDOW)
        return rows

    def _plan(self, versions: Sequence[int], why: str) -> Group:
        """A new group, its seed from the count in the same call: no other table can plan
        one in between (two groups with one seed), even while this one waits on a lock."""
        store = self.competition.store
        seed = derive_seed(self.competition.config.seed, "group", store.group_count())
        return store.plan_group(seed, versions, why)

    async def next_group(self, remote: bool = False) -> tuple[Group, set[int]]:
        """The next group for a local table, or (``remote``) for the remote table."""
        competition = self.competition
        while True:
            if competition.disk.low():
                await wait_for_room(competition)
                continue
            if not competition.store.paused:  # a re-run is a new group: it waits for resume
                self.resumed.extend(new_replacements(competition.store, self.reruns))
            for index, (group, _done) in enumerate(self.resumed):
                if competition.has_remote(group.versions) == remote:
                    return self.resumed.pop(index)
            candidates = self.candidates(remote)
            focus_from = None
            if remote:
                focus_from = {c.version for c in candidates if competition.is_remote(c.version)}
            wait = 0.0 if competition.store.paused else self.pace_wait()
            if competition.store.paused:
                competition.status = "paused by the organiser"
            elif wait > 0:
                competition.status = f"settled: the next group starts in {wait:.0f} s"
            else:
                choice = choose_table(
                    candidates,
                    competition.board.scores,
                    self.recent_seats(),
                    competition.config.players,
                    competition.config.max_share,
                    self.rng,
                    focus_from,
                )
                if choice is not None:
                    competition.pace.started(len(choice.versions))
                    competition.status = "playing"
                    plan = partial(self._plan, choice.versions, choice.why)
                    return await written("planning a group", plan), set()
                if competition.playing_now:
                    competition.status = "playing"  # another table (the remote one) plays
                elif not remote:
                    competition.status = (
                        f"waiting: a table needs {competition.config.players} playing versions"
                    )
            with trio.move_on_after(min(POLL, wait) if wait > 0 else POLL):
                await competition.changed.wait()

    def pace_wait(self) -> float:
        """Seconds before a new group may start, by the pace's rule on the latest leaderboard
        (``referee.server.pace``): 0 at full speed with no cap."""
        competition = self.competition
        playing = [v.id for v in competition.store.playing_versions()]
        competition.pace.update(competition.board.scores, playing)
        return competition.pace.wait()


def specs(competition: Competition, versions: Sequence[int]) -> dict[int, BotSpec]:
    specs = {}
    for version_id in versions:
        version = competition.store.version(version_id)
        assert version is not None and version.spec is not None
        specs[version_id] = spec_from_json(version.spec)
    return specs


class Table(Protocol):
    """Where a table's matches are played: a local worker process, or a Dask cluster."""

    async def play(
        self, key: MatchKey, rules: Rules, specs: Mapping[int, BotSpec], keep: Iterable[int]
    ) -> MatchResult: ...

    async def aclose(self) -> None: ...


OpenTable = Callable[[int], Awaitable[Table]]
"""Starts table ``number``'s worker (``local_tables`` here, ``referee.server.cluster``)."""


def local_tables(competition: Competition) -> OpenTable:
    """Tables whose worker is a process on this machine (``--jobs``)."""
    config = competition.config

    async def open_table(number: int) -> Table:
        return await WorkerTable.start(
            config.time_control,
            config.logs_dir,
            number,
            sandbox_setting(config),
            config.storage.stderr_bytes,
            config.match_logs,
        )

    return open_table


def rotation_seed(group: Group, rotation: int, remote: bool) -> int:
    """One rotation's deal: the group's, or a deal per rotation when a remote bot sits.

    A remote bot is one process on its owner's machine and could remember a
    deal from one rotation to the next (as a league's remote bots play plain
    deals, ``referee.league.deals``).
    """
    return derive_seed(group.seed, "remote rotation", rotation) if remote else group.seed


def group_matches(
    competition: Competition, group: Group, number: int, done: set[int]
) -> list[MatchKey]:
    """The matches of ``group`` still to play, at table ``number``."""
    config = competition.config
    remote = competition.has_remote(group.versions)
    keys = []
    for rotation, seating in enumerate(rotations(group.versions)):
        if rotation in done:
            continue
        identity = rotation_seed(group, rotation, remote)
        keys.append(
            MatchKey(
                match_id=match_id(group.id, rotation),
                ordinal=group.id * 8 + rotation,
                round=group.id,
                table=number,
                rotation=rotation,
                seed=identity,
                bots=seating,
                start_chips=(config.rules.starting_chips,) * len(seating),
                # The cards' seed from the server's key: a worker is sent this, not the key.
                deal_seed=competition.deals.deal_seed(group.id, identity),
            )
        )
    return keys


async def play_group(
    competition: Competition, table: Table, number: int, group: Group, done: set[int]
) -> None:
    config = competition.config
    keep = [v.id for v in competition.store.playing_versions()]
    for key in group_matches(competition, group, number, done):
        await wait_for_room(competition)  # a log would not fit: the group waits here
        competition.playing_now[number] = key.match_id
        try:
            result = await table.play(
                key, config.rules, specs(competition, key.bots), [*keep, *group.versions]
            )
        except WorkerError as error:
            error.match_id = key.match_id
            raise
        finally:
            competition.playing_now.pop(number, None)
        log = stored_path(config.logs_dir, key.match_id, result)
        # A finished match is never lost: a locked database is waited out, not fatal.
        await written(
            f"recording match {key.match_id}",
            partial(
                record_match,
                competition.store,
                group,
                key.rotation,
                key.bots,
                result,
                log,
                identity=key.seed,
            ),
        )
        await written(
            f"watching the faults of match {key.match_id}",
            partial(watch_faults, competition, sorted(set(key.bots))),
        )
        competition.notify()


async def table_loop(
    competition: Competition, queue: GroupQueue, number: int, open_table: OpenTable
) -> None:
    private_dir(competition.config.logs_dir)
    delay = RESTART_DELAY
    while True:
        await wait_for_room(competition)
        table = await open_table(number)
        try:
            while True:
                group, done = await queue.next_group()
                try:
                    await play_group(competition, table, number, group, done)
                except WorkerError as error:
                    # Ended first: a worker that failed mid-match may still be playing it
                    # (and writing its log) until its stdin closes, and another table would
                    # take the group offered for a retry at once, the same match id and log.
                    await table.aclose()
                    platform = await table_failure(competition, queue, number, group, error)
                    # The platform's failures in a row back off: a failing disk is not
                    # hammered every few seconds.
                    delay = min(delay * 2, PLATFORM_DELAY_MAX) if platform else RESTART_DELAY
                    break
                queue.group_played(group)
                delay = RESTART_DELAY
        finally:
            await table.aclose()
        await trio.sleep(delay)


async def table_failure(
    competition: Competition, queue: GroupQueue, number: int, group: Group, error: WorkerError
) -> bool:
    """Judge table ``number``'s failure, say it (status, log) and count it; True if the
    platform's (``referee.server.failures``)."""
    platform = platform_cause(error, competition.disk.low(), competition.bots_can_signal)
    # The public line never has a path (the data directory is the operator's); the log does.
    if platform is not None:
        competition.status = (
            f"table {number} waits: {platform}; its group is played again, nobody is charged"
        )
    else:
        competition.status = f"table {number} restarts: {public_text(error.text)}"
    if platform is not None:
        log_operation(
            "platform-fault",
            where=f"table {number}",
            match=error.match_id,
            what=platform,
            error=error.text[:300],
        )
    else:
        print(
            f"newmarket serve: table {number} failed in match {error.match_id}: {error.text} "
            f"(charged: maybe a bot at it)",
            file=sys.stderr,
            flush=True,
        )
    await queue.table_failed(group, error, platform)
    return platform is not None


BOARD_SHARE = 0.2  # the most of the server's time the leaderboard's bootstrap may take


async def board_loop(competition: Competition) -> None:
    """Recompute the leaderboard as results land, but never more than ``BOARD_SHARE`` of the time.

    The bootstrap grows with the number of groups, and it holds the GIL that the
    pages need: after a computation of t seconds the next waits at least
    ``t / BOARD_SHARE - t``, so pages keep most of the process however long the
    competition has run.
    """
    while True:
        started = trio.current_time()
        await competition.refresh_board()
        spent = trio.current_time() - started
        await trio.sleep(max(0.0, spent / BOARD_SHARE - spent))
        with trio.move_on_after(POLL):
            await competition.changed.wait()
