"""The leaderboard's summaries saved beside the database, so a restart reads only newer results.

The leaderboard (``referee.server.scoring.Leaderboard``) is fed every stored
result once; without this file a server that starts over a million results
reads and adds every one before its first leaderboard.  Every ``EVERY``
results (and at most once a ``MIN_SECONDS``) the refreshing thread saves the
summaries with the row they reach, and a starting server loads them and reads
only the rows after it: the same additions in the same order, so the same
numbers as a fit of every row.

The file is a pickle, signed with HMAC-SHA256 under the database's own
session-signing secret: only this competition's server can have written a
file it loads (a file from another competition, or altered, is not loaded),
and it is 0600 in the 0700 data directory like the database.  It also keeps
the last result it covers, which must be the database's row at that place:
a database restored from an older copy, which lacks that row, starts the fit
afresh from the first row.  Anything wrong with the file means the same:
the fit from every row, as if it were not there.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import pickle
import time
from collections.abc import Callable
from pathlib import Path

from referee.server.competition_db import CompetitionStore, PlayedMatch
from referee.server.scoring import Leaderboard
from referee.storage.private_files import private_opener

__all__ = ["EVERY", "Checkpoints"]

FILE = "leaderboard.checkpoint"
HEADER = b"newmarket leaderboard checkpoint 1\n"
EVERY = 20_000  # results added since the last save
MIN_SECONDS = 60.0  # between two saves, however fast results come
_MAC = hashlib.sha256().digest_size


class Checkpoints:
    """Loads the saved leaderboard once, and saves it as results accumulate.

    Used from the leaderboard's worker thread only (``Competition._scores``).
    """

    def __init__(
        self, data: Path, every: int = EVERY, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.path = data / FILE
        self.every = every
        self.clock = clock
        self.saved_matches = 0
        self.saved_at: float | None = None

    def resume(self, reader: CompetitionStore, generation: str) -> tuple[Leaderboard, int] | None:
        """The saved leaderboard and the row it reaches, with every later row added;
        None if there is none this database can use (then fit from the first row).

        ``generation`` is the store's ``fit_generation``: a save made before the organiser
        left results out (or asked for a refit) holds them, so it is not used."""
        secret = reader.secret
        try:
            blob = self.path.read_bytes()
        except OSError:
            return None
        if not secret or not blob.startswith(HEADER) or len(blob) < len(HEADER) + _MAC:
            return None
        mac, payload = blob[len(HEADER) : len(HEADER) + _MAC], blob[len(HEADER) + _MAC :]
        if not hmac.compare_digest(mac, _sign(secret, payload)):
            return None
        try:
            board, upto, last, saved_generation = pickle.loads(payload)  # signed by this server
        except Exception:  # a file of an older layout: fit afresh
            return None
        if not isinstance(board, Leaderboard) or not isinstance(last, PlayedMatch):
            return None
        if saved_generation != generation:  # results left out since: fit afresh
            return None
        # Its last row must still be there, as it was: then the rows after it are the new ones.
        newest, played = reader.played_since(upto - 1)
        if not played or played[0] != last:
            return None
        board.extend(played[1:])
        self.saved_matches = board.matches
        return board, newest

    def maybe_save(
        self,
        secret: bytes,
        board: Leaderboard,
        upto: int,
        last: PlayedMatch | None,
        generation: str = "0",
    ) -> bool:
        """Save the leaderboard if enough results came since the last save: it reaches row
        ``upto``, whose result was ``last`` (the last one added)."""
        now = self.clock()
        if board.matches - self.saved_matches < self.every or last is None or not secret:
            return False
        if self.saved_at is not None and now - self.saved_at < MIN_SECONDS:
            return False
        payload = pickle.dumps((board, upto, last, generation), protocol=pickle.HIGHEST_PROTOCOL)
        partial = self.path.with_name(f"{FILE}.{os.getpid()}.partial")
        try:
            with open(partial, "wb", opener=private_opener) as stream:
                stream.write(HEADER + _sign(secret, payload) + payload)
            os.replace(partial, self.path)
        except OSError:  # a full disk: the fit goes on, and the next start reads every row
            with contextlib.suppress(OSError):
                partial.unlink()
            return False
        self.saved_matches, self.saved_at = board.matches, now
        return True


def _sign(secret: bytes, payload: bytes) -> bytes:
    return hmac.new(secret, HEADER + payload, hashlib.sha256).digest()
