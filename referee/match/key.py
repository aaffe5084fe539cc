"""Where a match sits: its key, the seed drawn from its place, the seat rotations of its table.

A league and the competition server both place matches this way, and the
table pools (``referee.tables``) play them by key, so the key lives here,
beside the match, rather than in either of its clients.  Seeds are derived
with SHA-256 from a seed and the match's place, never from ``random`` or
``hash()``, so the same place gives the same seed on every machine and after
every resume (``referee.league.schedule`` says how a league uses them).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence

SEED_BITS = 48
"""Deal seeds stay below 2**48 so that every JSON reader keeps them exact."""


@dataclasses.dataclass(frozen=True, slots=True)
class MatchKey:
    """Where a match sits in its league; ``bots[i]`` (bot indices) held seat i."""

    match_id: str
    ordinal: int
    round: int
    table: int
    rotation: int
    seed: int  # the match's public identity (the schedule's seed): stored, shown
    bots: tuple[int, ...]
    start_chips: tuple[int, ...]
    # The engine's seed: ``DealKey.deal_seed(seed)``, secret unless the league's deals are
    # public; sent to the table worker, never stored in a column or shown.
    deal_seed: int


def derive_seed(league_seed: int, *labels: object) -> int:
    """A deal seed for a place in the schedule; stable everywhere, independent per label."""
    text = "/".join(["newmarket/league", str(league_seed), *map(str, labels)])
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def rotations(table: Sequence[int]) -> list[tuple[int, ...]]:
    """The cyclic rotations of a seating: in rotation r, seat i holds ``table[(i + r) % k]``."""
    k = len(table)
    return [tuple(table[(i + r) % k] for i in range(k)) for r in range(k)]
