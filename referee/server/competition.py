"""The running competition: config, store, the latest leaderboard, and what changed.

The web side and the background loops share this one object.  Everything in
it lives on the server's trio thread except the bootstrap, which runs in a
worker thread on a snapshot of the seat rows (``refresh_board``), so a page
never waits for it: pages read ``board``, the latest finished computation.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import trio

from referee.bots import resolve_bot
from referee.server.config import CompetitionConfig
from referee.server.scoring import Score, score_versions
from referee.server.store import CompetitionStore, Version

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
            if not self.store.versions(participant.id):
                spec = resolve_bot(name, who)
                version = self.store.add_version(participant.id, "bundled", name, "", 0)
                self.store.decide(version.id, "admitted", "a bundled bot", "", spec.to_json())

    def is_house(self, version: Version) -> bool:
        return version.participant_name.startswith(HOUSE_PREFIX)

    async def refresh_board(self) -> None:
        """Recompute the leaderboard if results arrived since the last one."""
        count = self.store.match_count()
        admitted = [v.id for v in self.store.versions(status="admitted")]
        if count == self.board.matches and set(admitted) == set(self.board.scores):
            return
        scores = await trio.to_thread.run_sync(_scores, self.store.path, admitted)
        self.board = Board(scores, count, time.time())


def _scores(path: Path, admitted: list[int]) -> dict[int, Score]:
    """In a worker thread, on its own connection: reading every seat is not the pages' wait."""
    reader = CompetitionStore.reader(path)
    try:
        return score_versions(reader.seat_rows(), admitted)
    finally:
        reader.close()
