"""What the standings fold in match by match, kept so that ``standings`` reads only newer matches.

``Tally`` holds every per-match sum of the standings (places, chips, faults,
openskill's ratings, the fit's summaries, the head-to-head counts) after the
matches it was given in schedule order.  ``newmarket standings`` saves one
beside the database (``<db>.standings``) covering the longest *finished
prefix* of the schedule that ends at a group's end (``finished_prefix``): no
match before its end can still arrive, so the next call loads it and reads
from the database only the matches after it, and gets what folding every
match gives: the same additions in the same order (the fit's groups, the
ratings' sequence), so the same numbers.

The file is a pickle signed with HMAC-SHA256 under a key derived from the
league's secret deal key, which only the database's holder has: a file
altered or made for another league is ignored, as is one whose prefix the
database no longer holds in full (an older copy restored).  Ignored means
the standings fold every match, as without the file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import hmac
import itertools
import os
import pickle
from collections.abc import Iterator, Sequence
from pathlib import Path

from referee.league.league_db import StoredMatch
from referee.league.schedule import ScheduledMatch
from referee.scoring.duplicate import GroupMatch, forfeit_nets
from referee.scoring.ratings import Rating, rate
from referee.scoring.summary import FitSummary
from referee.storage.private_files import private_opener

__all__ = [
    "EVERY",
    "TALLY_SUFFIX",
    "Tally",
    "finished_prefix",
    "finishes_ahead",
    "fit_match",
    "group_ends",
    "load",
    "order",
    "save",
]

TALLY_SUFFIX = ".standings"  # the file beside the database: ``league.db.standings``
HEADER = b"newmarket standings checkpoint 1\n"
EVERY = 10_000  # matches the finished prefix must have grown by before it is saved again
_MAC = hashlib.sha256().digest_size

Key = tuple[int, int, str]  # (round, ordinal, match id): the schedule order of the standings
Label = tuple[int, tuple[int, ...]]  # a fit group: the deal's seed and its table's bots


def order(match: StoredMatch) -> Key:
    return (match.key.round, match.key.ordinal, match.key.match_id)


@dataclasses.dataclass
class Tally:
    """The standings' per-match sums after ``matches`` matches, the last of them ``last``."""

    names: list[str]
    total: int | None = -1  # the schedule's matches (None: it has none; -1: not known)
    matches: int = 0
    last: Key | None = None
    # per bot: matches, firsts, net, boodle, hands won, faults, disqualifications
    counts: dict[str, list[int]] = dataclasses.field(default_factory=dict)
    place_sum: dict[str, int] = dataclasses.field(default_factory=dict)
    ratings: dict[str, Rating] = dataclasses.field(default_factory=dict)
    summary: FitSummary = dataclasses.field(default_factory=FitSummary)
    groups: set[Label] = dataclasses.field(default_factory=set)
    points: dict[tuple[str, str], float] = dataclasses.field(default_factory=dict)
    met: dict[tuple[str, str], int] = dataclasses.field(default_factory=dict)

    def extend(self, ordered: Sequence[StoredMatch]) -> None:
        """Fold in ``ordered`` (schedule order, every one after ``last``, whole groups).

        Raises ``ValueError`` if a group of them was already folded in (then the
        caller folds every match afresh)."""
        names = self.names
        rated: list[tuple[list[str], list[int]]] = []
        groups: dict[Label, list[GroupMatch[int]]] = {}
        for match in ordered:
            result = match.result
            seat_names = [names[bot] for bot in match.key.bots]
            for seat in result.seats:
                name = seat_names[seat.seat]
                row = self.counts.setdefault(name, [0] * 7)
                row[0] += 1
                row[1] += seat.place == 1
                row[2] += seat.net_chips
                row[3] += seat.boodle_chips
                row[4] += seat.hands_won
                row[5] += len(seat.faults)
                row[6] += seat.status == "disqualified"
                self.place_sum[name] = self.place_sum.get(name, 0) + seat.place
            rated.append((seat_names, [seat.place for seat in result.seats]))
            label, group_match = fit_match(match)
            groups.setdefault(label, []).append(group_match)
            for pair, share in finishes_ahead(names, match):
                self.met[pair] = self.met.get(pair, 0) + 1
                self.points[pair] = self.points.get(pair, 0.0) + share
        if self.groups & groups.keys():
            raise ValueError("a group of these matches was folded in already")
        self.ratings = rate(names, rated, start=self.ratings)
        # Groups in the order of their first match, numbered on from the ones before.
        for label, matches in groups.items():
            self.summary.add_group(label, matches, order=len(self.groups))
            self.groups.add(label)
        self.matches += len(ordered)
        if ordered:
            self.last = order(ordered[-1])


def fit_match(match: StoredMatch) -> tuple[Label, GroupMatch[int]]:
    """The fit's view of a match: its group (the deal's seed and its table's bots), and each
    seat's holder and net, a disqualified seat's forfeited (``scoring.duplicate``)."""
    result = match.result
    label = (match.key.seed, tuple(sorted(match.key.bots)))
    holders = [match.key.bots[seat.seat] for seat in result.seats]
    nets = forfeit_nets(
        [seat.net_chips for seat in result.seats],
        [seat.status == "disqualified" for seat in result.seats],
    )
    return label, GroupMatch(holders, nets, result.hands)


def finishes_ahead(
    names: Sequence[str], match: StoredMatch
) -> Iterator[tuple[tuple[str, str], float]]:
    """Each ordered pair of the match's bots, and the first's share of finishing ahead of the
    second: 1, 0.5 for a shared place, or 0 (the head-to-head table's sums)."""
    seated = [(names[match.key.bots[seat.seat]], seat.place) for seat in match.result.seats]
    for a, place_a in seated:
        for b, place_b in seated:
            if a != b:
                yield (a, b), 1.0 if place_a < place_b else 0.5 if place_a == place_b else 0.0


def _group(match: ScheduledMatch) -> Label:
    return (match.seed, tuple(sorted(match.bots)))


def _cuts(ordered: Sequence[ScheduledMatch], start: int, stop: int) -> Iterator[int]:
    """Each cut after a position in ``start`` to ``stop`` where every group of those matches
    begun so far has ended: no group has a match on both sides of it."""
    last = {_group(ordered[position]): position for position in range(start, stop)}
    reach = start
    for position in range(start, stop):
        reach = max(reach, last[_group(ordered[position])])
        if reach == position:
            yield position + 1


def finished_prefix(schedule: Sequence[ScheduledMatch], stored: set[str]) -> int:
    """How many of the schedule's first matches (by index) are stored, cut back to where no
    group has a match on both sides: everything before the cut is final."""
    ordered = sorted(schedule, key=lambda match: match.index)
    missing = next(
        (position for position, match in enumerate(ordered) if match.match_id not in stored),
        len(ordered),
    )
    cuts = itertools.takewhile(lambda cut: cut <= missing, _cuts(ordered, 0, len(ordered)))
    return max(cuts, default=0)


def group_ends(ordered: Sequence[ScheduledMatch], start: int, stop: int, size: int) -> list[int]:
    """Where to cut the schedule's matches ``start`` to ``stop`` (by index, both cuts where
    no group has a match on both sides) into runs of about ``size``, each ending where every
    group begun in it has ended: a tally folds one run at a time, so the first standings
    of a large league never hold all its matches at once (4 GB at 10^6)."""
    ends: list[int] = []
    for cut in _cuts(ordered, start, stop):
        if ends and cut - (ends[-2] if len(ends) > 1 else start) <= size:
            ends[-1] = cut  # the run so far still fits: it ends here instead
        else:
            ends.append(cut)
    if not ends or ends[-1] != stop:  # not a cut after all: one run, which extend refuses
        ends.append(stop)
    return ends


def _sign(secret: bytes, payload: bytes) -> bytes:
    return hmac.new(secret, HEADER + payload, hashlib.sha256).digest()


def load(path: Path, secret: bytes, names: Sequence[str]) -> Tally | None:
    """The saved tally, if it is this league's, untouched; else None."""
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    if not blob.startswith(HEADER) or len(blob) < len(HEADER) + _MAC:
        return None
    mac, payload = blob[len(HEADER) : len(HEADER) + _MAC], blob[len(HEADER) + _MAC :]
    if not hmac.compare_digest(mac, _sign(secret, payload)):
        return None
    try:
        tally = pickle.loads(payload)  # signed under this league's secret: written by us
    except Exception:  # an older layout of the file: fold every match
        return None
    if not isinstance(tally, Tally) or tally.names != list(names):
        return None
    return tally


def save(path: Path, secret: bytes, tally: Tally) -> None:
    """Write ``tally`` (0600, whole or not at all); a directory we cannot write: nothing."""
    payload = pickle.dumps(tally, protocol=pickle.HIGHEST_PROTOCOL)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")  # two commands at once
    try:
        with open(partial, "wb", opener=private_opener) as stream:
            stream.write(HEADER + _sign(secret, payload) + payload)
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink()
