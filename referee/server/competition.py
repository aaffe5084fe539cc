"""The running competition: config, store, the latest leaderboard, and what changed.

The web side and the background loops share this one object.  Everything in
it lives on the server's trio thread except the leaderboard's fit, which runs
in a worker thread (``refresh_board``): it reads only the results stored since
the last one it saw, adds them to its summaries (``Leaderboard``) and draws
the bootstrap, so a page never waits for it: pages read ``board``, the latest
finished computation.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

import trio

from referee.bots import BotSpec, resolve_bot
from referee.server.board_checkpoint import Checkpoints
from referee.server.competition_db import CompetitionStore, Version
from referee.server.competition_file import REMOTE, CompetitionConfig
from referee.server.operations import log_operation
from referee.server.pace import Pace, PaceState
from referee.server.quotas import for_config as disk_space
from referee.server.scoring import Leaderboard, Score

if TYPE_CHECKING:  # they import this module: set by the server once it starts
    from referee.server.retention import Retention

HOUSE_PREFIX = "house:"


class Lobby(Protocol):
    """What the competition's users need of its lobby (``referee.server.remote.CompetitionLobby``).

    Declared here so that the competition, which the lobby's module imports, need not
    import it back: the server starts the lobby and sets ``Competition.lobby``.
    """

    busy: set[int]  # versions in a match now
    address: tuple[str, int] | None  # where remote versions connect, once listening
    bots: list[BotSpec]  # by version id

    def connected(self, version_id: int) -> bool: ...

    def register(self, version: Version) -> None:
        """From now on ``version`` may connect with its token."""


@dataclasses.dataclass
class Board:
    """One computed leaderboard: every admitted version's score, as of ``matches`` results."""

    scores: dict[int, Score]
    matches: int
    computed_at: float


class Competition:
    def __init__(self, config: CompetitionConfig, store: CompetitionStore) -> None:
        self.config = config
        self.store = store
        self.board = Board({}, -1, 0.0)
        self.changed = trio.Event()  # set (and replaced) whenever a result or decision lands
        self.status = "starting"  # what the scheduler is doing, one line, for the status page
        self.playing_now: dict[int, str] = {}  # table number -> match id in progress
        self.admitting: int | None = None
        # Versions whose upload request is still unpacking them: admission waits for it.
        # Both unpack the same directory (admission again after a crash), and two at once
        # deleted each other's files: a 500 for the participant, a half-built version.
        self.unpacking: set[int] = set()
        self.lobby: Lobby | None = None  # where remote versions connect, if allowed
        # Where every group's cards come from (a StoreError if the file's public_deals
        # differs from the first start's); the key stays in this process.
        self.deals = store.group_deals(config.public_deals)
        self._reader: CompetitionStore | None = None  # the leaderboard's, in a worker thread
        self._house: set[int] | None = None  # the house bots' participants, once read
        # The room kept free under the data directory: play and admission pause below it.
        self.disk = disk_space(config)
        self._bots_can_signal: bool | None = None
        # Every stored result's share of the leaderboard's fit, up to the row ``fitted_upto``;
        # only the worker thread of ``refresh_board`` touches them, one at a time.
        self.leaderboard = Leaderboard()
        self.fitted_upto = 0
        self._fit_generation = "0"  # the store's ``fit_generation`` the fit was made at
        self._stored_seen = -1  # the matches stored when the board was last computed
        # Saved now and then, so that a restart reads only the results stored since.
        self.checkpoints = Checkpoints(config.data)
        self._refreshing = trio.Lock()
        self.retention: Retention | None = None  # the record pruning, once the server runs
        # Whether a new group starts now: full speed, or settled (``referee.server.pace``).
        self.pace = Pace(config.pace, trio.current_time, _pace_changed)
        self.fit_seconds: float | None = None  # the last leaderboard's computation
        # The wall clock the contest's phases are read by (``referee.server.phases``),
        # replaced in tests: a freeze is tested by moving time, not by waiting.
        self.clock: Callable[[], float] = time.time

    @property
    def bots_can_signal(self) -> bool:
        """Whether a bot could signal its table's referee (no PID namespace of its own)."""
        if self._bots_can_signal is None:
            from referee.sandbox import SandboxError
            from referee.server.sandboxing import competition_sandbox

            try:
                self._bots_can_signal = competition_sandbox(self.config).isolation is None
            except SandboxError:
                self._bots_can_signal = True
        return self._bots_can_signal

    def notify(self) -> None:
        self.changed.set()
        self.changed = trio.Event()

    def ensure_house_bots(self, names: tuple[str, ...]) -> None:
        """The organiser's bundled sparring bots, each a participant with one admitted version.

        A house bot is marked as such in the database (``house_participants``): its
        name alone makes nobody one (a participant cannot register a ``house:`` name).
        """
        house = self.store.house_participants()
        for name in names:
            who = HOUSE_PREFIX + name
            participant = self.store.participant_by_name(who)
            if participant is None:
                participant, _token = self.store.add_participant(who, house=True)
            elif participant.id not in house:
                # A database from before the mark: the name is the house bot's if all its
                # versions are the bundled bot the server gave it; else somebody took it.
                versions = self.store.versions(participant.id)
                if any(v.runtime != "bundled" for v in versions):
                    print(
                        f"newmarket serve: house bot {name!r} not added: a participant "
                        f"registered the name {who!r} and uploaded to it",
                        file=sys.stderr,
                        flush=True,
                    )
                    continue
                self.store.mark_house(participant.id)
            versions = self.store.versions(participant.id)
            # Also a version left pending by a kill before its decision: skipped, it was
            # rejected by admission (nothing uploaded) and the house bot lost for good.
            if not versions or versions[-1].status == "pending":
                spec = resolve_bot(name, who)
                version = versions[-1] if versions else None
                if version is None:
                    version = self.store.add_version(participant.id, "bundled", name, "", 0)
                self.store.decide(version.id, "admitted", "a bundled bot", "", spec.to_json())
        self._house = None  # read again at the next look

    def is_house(self, version: Version) -> bool:
        """One of the organiser's house bots (marked by ``ensure_house_bots``, not by name)."""
        if self._house is None:  # marked only at the start: read once
            self._house = self.store.house_participants()
        return version.participant in self._house

    def is_remote(self, version_id: int) -> bool:
        version = self.store.version(version_id)
        return version is not None and version.runtime == REMOTE

    def has_remote(self, versions: Iterable[int]) -> bool:
        return any(self.is_remote(version) for version in versions)

    def connected(self, version_id: int) -> bool:
        """A remote version connected now and not seated at a group."""
        lobby = self.lobby
        return lobby is not None and lobby.connected(version_id) and version_id not in lobby.busy

    async def refresh_board(self) -> None:
        """Recompute the leaderboard if results arrived since the last one."""
        async with self._refreshing:
            count = self.store.match_count()
            admitted = [v.id for v in self.store.ranked_versions()]
            # The organiser left results out of the fit, or asked for a refit: from the start.
            generation = self.store.meta("fit_generation") or "0"
            refit = generation != self._fit_generation
            if refit:
                self.leaderboard, self.fitted_upto = Leaderboard(), 0
                self._fit_generation = generation
            elif count == self._stored_seen and set(admitted) == set(self.board.scores):
                return
            # One reading connection for the server's life, opened at the first refresh:
            # opened anew each time, it was the first thing to fail when clients had taken
            # every descriptor, and its StoreError ended the server.
            if self._reader is None:
                self._reader = CompetitionStore.reader(self.store.path)
            started = time.perf_counter()
            scores, matches = await trio.to_thread.run_sync(self._scores, self._reader, admitted)
            self.fit_seconds = time.perf_counter() - started  # the status page's and /metrics'
            self.board = Board(scores, matches, time.time())
            self._stored_seen = count  # the fit's count may be lower: what it left out

    def _scores(
        self, reader: CompetitionStore, admitted: list[int]
    ) -> tuple[dict[int, Score], int]:
        """In a worker thread, on its own connection: the new results, then the scores."""
        if not self.fitted_upto:  # the first: from the saved summaries, if they are good
            resumed = self.checkpoints.resume(reader, self._fit_generation)
            if resumed is not None:
                self.leaderboard, self.fitted_upto = resumed
        upto, played = reader.played_since(self.fitted_upto)
        try:
            self.leaderboard.extend(played)
        except BaseException:  # half added: start afresh from the first row next time
            self.leaderboard, self.fitted_upto = Leaderboard(), 0
            raise
        self.fitted_upto = upto
        self.checkpoints.maybe_save(
            reader.secret,
            self.leaderboard,
            upto,
            played[-1] if played else None,
            self._fit_generation,
        )
        return self.leaderboard.scores(admitted), self.leaderboard.matches

    def close(self) -> None:
        """Close what the competition opened beside its store (the leaderboard's reader)."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None


def _pace_changed(state: PaceState) -> None:
    log_operation("pace", state=state.state, why=state.why)
