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
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

import trio

from referee.bots import resolve_bot
from referee.server.config import REMOTE, CompetitionConfig
from referee.server.scoring import Leaderboard, Score
from referee.server.storage import for_config as disk_space
from referee.server.store import CompetitionStore, Version

if TYPE_CHECKING:
    from referee.server.remote import CompetitionLobby

HOUSE_PREFIX = "house:"


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
        self.lobby: CompetitionLobby | None = None  # where remote versions connect, if allowed
        # The room kept free under the data directory: play and admission pause below it.
        self.disk = disk_space(config)
        self._bots_can_signal: bool | None = None
        # Every stored result's share of the leaderboard's fit, up to the row ``fitted_upto``;
        # only the worker thread of ``refresh_board`` touches them, one at a time.
        self.leaderboard = Leaderboard()
        self.fitted_upto = 0
        self._refreshing = trio.Lock()

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
        """The organiser's bundled sparring bots, each a participant with one admitted version."""
        for name in names:
            who = HOUSE_PREFIX + name
            participant = self.store.participant_by_name(who)
            if participant is None:
                participant, _token = self.store.add_participant(who)
            versions = self.store.versions(participant.id)
            # Also a version left pending by a kill before its decision: skipped, it was
            # rejected by admission (nothing uploaded) and the house bot lost for good.
            if not versions or versions[-1].status == "pending":
                spec = resolve_bot(name, who)
                version = versions[-1] if versions else None
                if version is None:
                    version = self.store.add_version(participant.id, "bundled", name, "", 0)
                self.store.decide(version.id, "admitted", "a bundled bot", "", spec.to_json())

    def is_house(self, version: Version) -> bool:
        return version.participant_name.startswith(HOUSE_PREFIX)

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
            admitted = [v.id for v in self.store.versions(status="admitted")]
            if count == self.board.matches and set(admitted) == set(self.board.scores):
                return
            scores, matches = await trio.to_thread.run_sync(self._scores, admitted)
            self.board = Board(scores, matches, time.time())

    def _scores(self, admitted: list[int]) -> tuple[dict[int, Score], int]:
        """In a worker thread, on its own connection: the new results, then the scores."""
        reader = CompetitionStore.reader(self.store.path)
        try:
            upto, played = reader.played_since(self.fitted_upto)
        finally:
            reader.close()
        try:
            self.leaderboard.extend(played)
        except BaseException:  # half added: start afresh from the first row next time
            self.leaderboard, self.fitted_upto = Leaderboard(), 0
            raise
        self.fitted_upto = upto
        return self.leaderboard.scores(admitted), self.leaderboard.matches
