"""Whose fault a failed table was, who is suspended for it, and who behaves worse than checked.

**A table's failure** (``WorkerError``: its worker died, or reported that it
could not go on) is judged by ``platform_cause``.  It is the **platform's**,
never charged to anyone, when

* the worker could not write (its report names ``ENOSPC``, ``EDQUOT``, ``EIO``
  or ``EROFS``), or the data directory's disk is low right now;
* the worker was killed by a signal, and either the kernel's OOM killer acted
  in the server's cgroup meanwhile, or bots here cannot signal it at all (the
  sandbox's isolation gives each bot its own PID namespace), or it was
  SIGKILL and this machine cannot tell an OOM kill from another.

Anything else may be a bot's doing: a worker that crashed on what a bot sent
(a referee bug that its bytes trip, exit status 1 with a traceback), that a
bot killed (without isolation a bot runs as the server's user), or that
stopped speaking its protocol.  Those are **charged**: the group is retried
once, then given up, and a version seated at ``SUSPECT_FAILURES`` charged
failures in a row, with no good group between, is suspended with the
failures as evidence (the matches, and what each worker did).  Innocent
versions at those tables also play elsewhere and clear their count; the one
that kills its tables never does.  House bots are never suspended.  The
organiser lifts a suspension with ``newmarket serve unsuspend``.

**The watch** (``watch_faults``): a version whose last ``watch_matches``
real matches have faults far more often than the matches its admission
check played as a table (``referee.server.admission``) is flagged for the
organiser, once: a row (``newmarket serve flags``) and a line in the
server's log.  "Far more" is a one-sided binomial test at ``FLAG_P`` against
the check's rate estimated as ``(faulty + 1) / (matches + 2)``: with a
three-match check that had no fault, at least 8 of 12 matches with a fault.
A flag is a question for the organiser, not a verdict: nothing else
happens to the version.
"""

from __future__ import annotations

import errno
import math
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

from referee.server.competition import Competition
from referee.server.quotas import public_text
from referee.server.worker_table import WorkerError

SUSPECT_FAILURES = 3  # a version at this many charged failures in a row is suspended
FLAG_P = 0.001  # the watch's one-sided test: how unlikely the faults must be under the check

STORAGE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS)
_STORAGE_WORDS = tuple(os.strerror(number) for number in STORAGE_ERRNOS)


def platform_cause(error: WorkerError, disk_low: bool, bots_can_signal: bool) -> str | None:
    """Why a table's failure is the platform's (one public line), or None: maybe a bot's."""
    text = error.text
    for number, words in zip(STORAGE_ERRNOS, _STORAGE_WORDS, strict=True):
        if words in text or f"[Errno {number}]" in text:
            return f"the server could not write its files ({words.lower()})"
    if disk_low:
        return "the server is low on disk space"
    status = error.returncode
    if status is not None and status < 0:
        if error.oom:
            return "its referee process ran out of memory"
        if not bots_can_signal:
            return "its referee process was killed (bots here cannot signal it)"
        if error.oom is None and -status == signal.SIGKILL:
            return "its referee process was killed, and this machine cannot say by whom"
    return None


class Suspicions:
    """Charged table failures per version, in a row, and the suspensions they lead to."""

    def __init__(self, competition: Competition) -> None:
        self.competition = competition
        self.evidence: dict[int, list[dict[str, Any]]] = {}  # version -> failures in a row

    def cleared(self, versions: Sequence[int]) -> None:
        """A group played to its end: its versions' counts start again."""
        for version in versions:
            self.evidence.pop(version, None)

    def charged(
        self, versions: Sequence[int], error: WorkerError
    ) -> list[tuple[int, str, list[dict[str, Any]]]]:
        """Count a charged failure against each version; the suspensions now due.

        Each is ``(version, why, evidence)``; the caller writes them (``store.suspend``).
        """
        what = public_text(error.text)
        due = []
        for version in versions:
            entries = self.evidence.setdefault(version, [])
            entries.append({"match": error.match_id, "what": what})
            del entries[:-SUSPECT_FAILURES]  # a house bot's count never ends in a suspension
            found = self.competition.store.version(version)
            if (
                len(entries) >= SUSPECT_FAILURES
                and found is not None
                and found.status == "admitted"
                and not self.competition.is_house(found)
            ):
                why = (
                    f"its table's referee process failed {len(entries)} times in a row while it "
                    "played, with no good group between (a bot that attacks its referee?); "
                    "the organiser can admit it again"
                )
                due.append((version, why, list(entries)))
                self.evidence.pop(version, None)  # an unsuspended version starts again
        return due


def binomial_tail(successes: int, trials: int, rate: float) -> float:
    """P(X >= successes) for X ~ Binomial(trials, rate)."""
    return sum(
        math.comb(trials, k) * rate**k * (1 - rate) ** (trials - k)
        for k in range(successes, trials + 1)
    )


def watch_faults(competition: Competition, versions: Sequence[int]) -> list[int]:
    """Flag each of ``versions`` whose recent matches fault far above its check's; the new flags.

    Called after each recorded match with its versions (cheap: one indexed
    query each).  Versions without a check of this kind (admitted before it
    existed, house bots, remote bots) are not watched.
    """
    store = competition.store
    window = competition.config.admission.watch_matches
    flagged = []
    for version in versions:
        checked = store.check_play(version)
        if checked is None or not checked or store.flagged(version):
            continue
        recent = store.recent_seat_faults(version, window)
        if len(recent) < window:
            continue
        faulty = sum(1 for _mid, faults in recent if faults)
        checked_faulty = sum(1 for match in checked if match["faults"])
        rate = (checked_faulty + 1) / (len(checked) + 2)
        if faulty / window <= rate or binomial_tail(faulty, window, rate) >= FLAG_P:
            continue
        found = store.version(version)
        label = found.label if found is not None else f"version {version}"
        detail = (
            f"{label} faulted in {faulty} of its last {window} matches, but in "
            f"{checked_faulty} of the {len(checked)} its admission check played as a table"
        )
        evidence = [{"match": mid, "faults": faults} for mid, faults in recent]
        if store.flag(version, detail, evidence):
            flagged.append(version)
            matches = ", ".join(mid for mid, faults in recent if faults)
            print(
                f"newmarket serve: flagged version {version} for the organiser: {detail} "
                f"(faulty: {matches}; check: {', '.join(m['match'] for m in checked)})",
                file=sys.stderr,
                flush=True,
            )
    return flagged
