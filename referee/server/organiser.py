"""The organiser's actions on a running competition, each written with its audit-log row.

One function per action, shared by the three ways in: the organiser's shell
(``newmarket serve ACTION``, ``referee.commands.serve_actions``), the
organiser's page (``/organiser``) and the API (``/api/organiser/ACTION``),
``referee.server.organiser_web``.  Each writes what it changes and its row of
``audit_log`` (who, by which way, when, what) in one transaction: an action
is never done without its row, nor logged without being done.  A running
server reads the database as it goes, so an action from the shell takes
effect within a second (a re-run's group at the next table free).

What each does to play and to the fit:

* **rotate-token / revoke-token**: the participant's token hash is replaced
  (by a new token's, shown once, or by one no token has) and every session
  ends.  Nothing else changes.
* **disable / enable**: a disabled participant's versions leave the tables
  and the leaderboard (``participant_standing``; results stay in the fit)
  and it cannot upload; ``enable`` lifts it, and lifts a ban too.
* **ban**: disabled, its token revoked, its sessions ended; it cannot sign
  in, upload, or register its name again (the name stays taken).  With
  ``exclude`` every match one of its versions sat in leaves the fit (a
  cheat's matches say nothing true of its opponents either).
* **withdraw**: a version leaves the tables for good (status ``withdrawn``;
  the participant's previous admitted version plays again); with
  ``exclude`` its matches leave the fit.
* **rerun**: a group (``g12``), or every group of a time window that shows a
  failure (a match with a fault, or the group given up), is played again as
  a new group at the same table with **new cards** (its first cards are
  public since it finished, so a bot could read them), and the old group
  leaves the fit: the new one replaces it.  A group is re-run whole, because
  its duplicate comparison is between its rotations.
* **rerate**: the leaderboard is refitted from the first result (every
  action above that changes the fit asks for this itself).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
import re
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from referee.match.key import derive_seed
from referee.server.competition_db import (
    CompetitionStore,
    Group,
    Participant,
    Version,
    hash_token,
)
from referee.server.operations import log_operation
from referee.text.printing import printable

RESULTS = ("keep", "exclude")  # a ban's or a withdrawal's choice for the fit
AUDIT_SHOWN = 200  # the audit log's rows on the organiser's page (the API pages further)


class OrganiserError(Exception):
    """An action refused (an unknown name, a version that cannot be withdrawn): one line."""


class NothingSuspendedError(OrganiserError):
    """``unsuspend`` found nothing suspended (the shell adds where the flags are listed)."""


@dataclasses.dataclass(frozen=True)
class Actor:
    """Who acts: ``organiser`` (the page or the API) or ``shell`` (the command), and how."""

    who: str
    via: str  # page | api | cli

    @property
    def words(self) -> str:
        return {"cli": "newmarket serve", "page": "the organiser's page"}.get(
            self.via, "the organiser's API"
        )


SHELL = Actor("shell", "cli")
PAGE = Actor("organiser", "page")
API = Actor("organiser", "api")


@dataclasses.dataclass(frozen=True)
class Done:
    """What an action did, in one line; ``token`` is a new token, to be shown once."""

    said: str
    token: str | None = None


# ---------------------------------------------------------------------- the audit log


@contextlib.contextmanager
def _transaction(store: CompetitionStore) -> Iterator[sqlite3.Connection]:
    db = store.connection
    with db:
        db.execute("BEGIN IMMEDIATE")
        yield db


def _audit(db: sqlite3.Connection, actor: Actor, action: str, target: str, detail: str) -> None:
    db.execute(
        "INSERT INTO audit_log (at, who, via, action, target, detail) VALUES (?, ?, ?, ?, ?, ?)",
        (time.time(), actor.who, actor.via, action, target, detail),
    )


def record(store: CompetitionStore, actor: Actor, action: str, target: str, detail: str) -> None:
    """An audit row for an action done elsewhere (``pause``, ``add-participant``)."""
    with _transaction(store) as db:
        _audit(db, actor, action, target, detail)
    to_operations_log(actor, action, target, detail)


def to_operations_log(actor: Actor, action: str, target: str, detail: str) -> None:
    """The operations log's line for an organiser's action, from the page, the API or the
    shell (whose command sets a log that writes the competition's file alone)."""
    log_operation("organiser", action=action, target=target, detail=detail, via=actor.via)


def audit_log(
    store: CompetitionStore, limit: int = AUDIT_SHOWN, before: int | None = None
) -> list[dict[str, Any]]:
    """The newest ``limit`` rows (older than row ``before``, if given), newest first."""
    rows = store.connection.execute(
        "SELECT id, at, who, via, action, target, detail FROM audit_log "
        "WHERE id < ? ORDER BY id DESC LIMIT ?",
        (before if before is not None else 2**63 - 1, limit),
    )
    return [
        {
            "id": row[0],
            "at": row[1],
            "when": _utc(row[1]),
            "who": row[2],
            "via": row[3],
            "action": row[4],
            "target": row[5],
            "detail": row[6],
        }
        for row in rows
    ]


def _utc(at: float) -> str:
    return datetime.datetime.fromtimestamp(at, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _refit(db: sqlite3.Connection) -> None:
    """Ask the server's leaderboard for a fit from the first result (``Competition``)."""
    db.execute(
        "INSERT INTO meta (key, value) VALUES ('fit_generation', '1') ON CONFLICT(key) "
        "DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)"
    )


# ---------------------------------------------------------------------- participants


def standing(store: CompetitionStore, participant: int) -> str:
    """``active``, ``disabled`` or ``banned``."""
    row = store.connection.execute(
        "SELECT state FROM participant_standing WHERE participant = ?", (participant,)
    ).fetchone()
    return "active" if row is None else str(row[0])


def refusal(store: CompetitionStore, participant: Participant) -> str | None:
    """Why ``participant`` may not upload now, or None (``referee.server.uploads``)."""
    state = standing(store, participant.id)
    if state == "active":
        return None
    return f"the organiser has {state} this participant: no uploads"


def _participant(store: CompetitionStore, name: str, *, people_only: bool = False) -> Participant:
    found = store.participant_by_name(name)
    if found is None:
        raise OrganiserError(f"no participant named {printable(name)!r}")
    if people_only and found.id in store.house_participants():
        raise OrganiserError(f"{found.name!r} is a house bot: it has no token to sign in with")
    return found


def rotate_token(store: CompetitionStore, actor: Actor, name: str) -> Done:
    who = _participant(store, name, people_only=True)
    if standing(store, who.id) == "banned":
        raise OrganiserError(f"{who.name!r} is banned: enable it first to give it a token")
    token = secrets.token_urlsafe(24)
    with _transaction(store) as db:
        db.execute(
            "UPDATE participants SET token_hash = ? WHERE id = ?", (hash_token(token), who.id)
        )
        ended = _end_sessions(db, who.id)
        _audit(db, actor, "rotate-token", who.name, f"new token; {ended} session(s) ended")
    to_operations_log(actor, "rotate-token", who.name, f"{ended} session(s) ended")
    said = f"participant {who.name!r}: new token (the old one no longer signs in); "
    return Done(said + f"{ended} session(s) ended", token)


def _revoke(db: sqlite3.Connection, participant: int) -> int:
    """The token replaced by a hash no token has; every session ended (how many)."""
    db.execute(
        "UPDATE participants SET token_hash = ? WHERE id = ?",
        ("revoked:" + secrets.token_hex(16), participant),
    )
    return _end_sessions(db, participant)


def _end_sessions(db: sqlite3.Connection, participant: int) -> int:
    (live,) = db.execute(
        "SELECT COUNT(*) FROM sessions WHERE participant = ? AND expires_at >= ?",
        (participant, time.time()),
    ).fetchone()
    db.execute("DELETE FROM sessions WHERE participant = ?", (participant,))
    return int(live)


def revoke_token(store: CompetitionStore, actor: Actor, name: str) -> Done:
    who = _participant(store, name, people_only=True)
    with _transaction(store) as db:
        ended = _revoke(db, who.id)
        _audit(db, actor, "revoke-token", who.name, f"token revoked; {ended} session(s) ended")
    to_operations_log(actor, "revoke-token", who.name, f"{ended} session(s) ended")
    return Done(
        f"participant {who.name!r}: token revoked, {ended} session(s) ended; "
        "it cannot sign in until its token is rotated"
    )


def disable(store: CompetitionStore, actor: Actor, name: str) -> Done:
    who = _participant(store, name)
    state = standing(store, who.id)
    if state != "active":
        raise OrganiserError(f"{who.name!r} is already {state}")
    with _transaction(store) as db:
        db.execute(
            "INSERT INTO participant_standing (participant, state, since) VALUES (?, ?, ?)",
            (who.id, "disabled", time.time()),
        )
        _audit(db, actor, "disable", who.name, "its versions leave the tables; no uploads")
    to_operations_log(actor, "disable", who.name, "its versions leave the tables")
    return Done(
        f"participant {who.name!r}: disabled: its versions leave the tables and the "
        "leaderboard (their results stay in the fit); it cannot upload"
    )


def enable(store: CompetitionStore, actor: Actor, name: str) -> Done:
    who = _participant(store, name)
    state = standing(store, who.id)
    if state == "active":
        raise OrganiserError(f"{who.name!r} is neither disabled nor banned")
    with _transaction(store) as db:
        db.execute("DELETE FROM participant_standing WHERE participant = ?", (who.id,))
        lifted = db.execute(
            "DELETE FROM fit_exclusions WHERE kind = 'version' AND why = 'ban' AND target IN "
            "(SELECT id FROM versions WHERE participant = ?)",
            (who.id,),
        ).rowcount
        if lifted:
            _refit(db)
        detail = f"was {state}" + ("; its results count again" if lifted else "")
        _audit(db, actor, "enable", who.name, detail)
    to_operations_log(actor, "enable", who.name, detail)
    said = f"participant {who.name!r}: enabled ({detail}); its newest admitted version plays"
    if state == "banned":
        said += "; rotate its token for it to sign in"
    return Done(said)


def ban(store: CompetitionStore, actor: Actor, name: str, results: str) -> Done:
    exclude = _results(results)
    who = _participant(store, name, people_only=True)
    if standing(store, who.id) == "banned":
        raise OrganiserError(f"{who.name!r} is already banned")
    now = time.time()
    with _transaction(store) as db:
        db.execute(
            "INSERT OR REPLACE INTO participant_standing (participant, state, since) "
            "VALUES (?, 'banned', ?)",
            (who.id, now),
        )
        ended = _revoke(db, who.id)
        if exclude:
            db.execute(
                "INSERT OR IGNORE INTO fit_exclusions (kind, target, why, at) "
                "SELECT 'version', id, 'ban', ? FROM versions WHERE participant = ?",
                (now, who.id),
            )
            _refit(db)
        fit = "its matches leave the fit" if exclude else "its results stay in the fit"
        detail = f"token revoked, {ended} session(s) ended; {fit}"
        _audit(db, actor, "ban", who.name, detail)
    to_operations_log(actor, "ban", who.name, detail)
    return Done(f"participant {who.name!r}: banned: {detail}")


def _results(results: str) -> bool:
    """True to exclude: the word ``exclude``; ``keep`` keeps them."""
    if results not in RESULTS:
        raise OrganiserError(f"results: say keep or exclude, not {printable(results)!r}")
    return results == "exclude"


def _version(store: CompetitionStore, which: str) -> Version:
    text = which.strip()
    found = store.version(int(text)) if text.isdigit() and len(text) < 19 else None
    if found is None:
        raise OrganiserError(f"no version {printable(which)!r} in this competition")
    return found


def withdraw(store: CompetitionStore, actor: Actor, which: str, results: str) -> Done:
    exclude = _results(results)
    version = _version(store, which)
    if version.status in ("withdrawn", "rejected"):
        raise OrganiserError(f"{version.label} (version {version.id}) is {version.status}")
    if version.status == "pending":
        # Its check would write its verdict over the withdrawal: after the check, then.
        raise OrganiserError(
            f"{version.label} (version {version.id}) is pending its check: withdraw it after"
        )
    now = time.time()
    with _transaction(store) as db:
        db.execute(
            "UPDATE versions SET status = 'withdrawn', detail = ?, decided_at = ? WHERE id = ?",
            (f"withdrawn by the organiser (was {version.status})", now, version.id),
        )
        if exclude:
            # A withdrawal is for good: a ban's exclusion of it, lifted by ``enable``, becomes
            # the withdrawal's, which nothing lifts.
            db.execute(
                "INSERT INTO fit_exclusions (kind, target, why, at) "
                "VALUES ('version', ?, 'withdraw', ?) "
                "ON CONFLICT (kind, target) DO UPDATE SET why = 'withdraw'",
                (version.id, now),
            )
            _refit(db)
        fit = "its matches leave the fit" if exclude else "its results stay in the fit"
        _audit(db, actor, "withdraw", f"{version.label} (version {version.id})", fit)
    to_operations_log(actor, "withdraw", version.label, fit)
    return Done(f"{version.label} (version {version.id}): withdrawn; {fit}")


def unsuspend(store: CompetitionStore, actor: Actor, which: str) -> Done:
    """Admit again the suspended versions ``which`` names: a version id, or a participant's."""
    if which.isdigit():
        found = store.version(int(which)) if len(which) < 19 else None
        if found is None:
            raise OrganiserError(f"no version {which} in this competition")
        versions = [found]
    else:
        participant = store.participant_by_name(which)
        if participant is None:
            raise OrganiserError(
                f"{printable(which)!r} is neither a version id nor a participant's name"
            )
        versions = store.versions(participant.id)
    suspended = [version for version in versions if version.status == "suspended"]
    if not suspended:
        shown = ", ".join(f"{v.label} {v.status}" for v in versions[-3:]) or "no versions"
        raise NothingSuspendedError(f"nothing of {printable(which)!r} is suspended ({shown})")
    lines = []
    for version in suspended:
        lifted_by = "newmarket serve unsuspend" if actor.via == "cli" else actor.words
        store.unsuspend(version.id, lifted_by)
        lines.append(f"{version.label} (version {version.id}): admitted again")
    record(store, actor, "unsuspend", which, "; ".join(lines))
    return Done("\n".join(lines))


# ---------------------------------------------------------------------- re-runs


@dataclasses.dataclass(frozen=True)
class Window:
    start: float
    end: float


def parse_target(text: str) -> int | Window:
    """A group (``g12``, ``12``, or a match of it ``g12r1``) or a window ``FROM..TO``.

    The window's ends are ISO 8601 times (``2026-11-28T10:00``), UTC unless
    they carry an offset.
    """
    text = text.strip()
    found = re.fullmatch(r"g?(\d{1,18})(?:r\d{1,3})?", text)
    if found:
        return int(found.group(1))
    start, dots, end = text.partition("..")
    if not dots:
        raise OrganiserError(
            f"re-run: {printable(text)!r} is neither a group (g12) nor a window "
            "(2026-11-28T10:00..2026-11-28T11:30)"
        )
    window = Window(_when(start), _when(end))
    if window.end <= window.start:
        raise OrganiserError(f"re-run: the window {printable(text)!r} ends before it starts")
    return window


def _when(text: str) -> float:
    try:
        moment = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        raise OrganiserError(
            f"re-run: {printable(text)!r} is not a time (2026-11-28T10:00, UTC)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.timestamp()


def _groups_in(db: sqlite3.Connection, window: Window) -> list[int]:
    """The groups of ``window`` that show a failure: a match with a fault finished in it,
    or the group given up (planned in it).  A match without a fault was not hurt."""
    rows = db.execute(
        "SELECT DISTINCT m.group_id FROM matches m JOIN seats s USING (match_id) "
        "WHERE m.finished_at BETWEEN ? AND ? AND s.faults > 0 "
        "UNION SELECT id FROM groups WHERE abandoned = 1 AND planned_at BETWEEN ? AND ? "
        "ORDER BY 1",
        (window.start, window.end, window.start, window.end),
    )
    return [int(group) for (group,) in rows]


def _why_not(db: sqlite3.Connection, store: CompetitionStore, group: int) -> str | None:
    """Why ``group`` cannot be re-run now, or None."""
    row = db.execute("SELECT versions, abandoned FROM groups WHERE id = ?", (group,)).fetchone()
    if row is None:
        return f"no group {group}"
    if db.execute("SELECT 1 FROM reruns WHERE group_id = ?", (group,)).fetchone():
        return f"group {group} was re-run already"
    table = [int(v) for v in json.loads(row[0])]
    (played,) = db.execute("SELECT COUNT(*) FROM matches WHERE group_id = ?", (group,)).fetchone()
    if not row[1] and played < len(table):
        return f"group {group} is still being played"
    gone = store.versions_without_files()
    for version_id in table:
        version = store.version(version_id)
        if version is None or version.status != "admitted":
            label = version.label if version else f"version {version_id}"
            status = version.status if version else "gone"
            return f"group {group} seats {label}, which is {status}"
        state = standing(store, version.participant)
        if state != "active":
            return f"group {group} seats {version.label}, whose participant is {state}"
        if version_id in gone:  # superseded, and removed: it cannot start, nobody is charged
            return f"group {group} seats {version.label}, whose files were removed (superseded)"
    return None


def rerun(store: CompetitionStore, actor: Actor, target: str, competition_seed: int) -> Done:
    """Play a group, or a window's failed groups, again with new cards; the old leave the fit."""
    chosen = parse_target(target)
    db = store.connection
    groups = [chosen] if isinstance(chosen, int) else _groups_in(db, chosen)
    if not groups:
        raise OrganiserError(f"re-run: no group of {printable(target)!r} shows a failure")
    planned: list[tuple[int, int]] = []
    skipped: list[str] = []
    now = time.time()
    with _transaction(store) as db:
        for group in groups:
            why = _why_not(db, store, group)
            if why is not None:
                skipped.append(why)
                continue
            (versions,) = db.execute(
                "SELECT versions FROM groups WHERE id = ?", (group,)
            ).fetchone()
            # Its own seed, from the competition's and the group's: recorded, and never a seed
            # the scheduler's count gives (a table may plan a group while this runs).
            seed = derive_seed(competition_seed, "rerun", group)
            cursor = db.execute(
                "INSERT INTO groups (seed, versions, why, planned_at) VALUES (?, ?, ?, ?)",
                (seed, versions, f"re-run of group {group} for the organiser", now),
            )
            assert cursor.lastrowid is not None
            db.execute(
                "INSERT INTO reruns (group_id, replacement, at) VALUES (?, ?, ?)",
                (group, cursor.lastrowid, now),
            )
            db.execute(
                "INSERT OR IGNORE INTO fit_exclusions (kind, target, why, at) "
                "VALUES ('group', ?, 'rerun', ?)",
                (group, now),
            )
            planned.append((group, cursor.lastrowid))
        if not planned:
            raise OrganiserError(f"re-run: nothing to play again: {'; '.join(skipped)}")
        _refit(db)
        detail = ", ".join(f"group {old} as group {new}" for old, new in planned)
        if skipped:
            detail += f" (not: {'; '.join(skipped)})"
        _audit(db, actor, "rerun", target, detail)
    to_operations_log(actor, "rerun", target, detail)
    return Done(f"re-run {detail}; the old groups leave the fit")


def replacements(store: CompetitionStore) -> set[int]:
    """Every re-run's new group (``referee.server.play``'s queue plays the unfinished)."""
    return {int(g) for (g,) in store.connection.execute("SELECT replacement FROM reruns")}


def new_replacements(store: CompetitionStore, known: set[int]) -> list[tuple[Group, set[int]]]:
    """The re-runs' groups planned since ``known`` was last updated, unfinished, with the
    rotations already played; ``known`` takes them in.  One small query when none is new."""
    fresh = replacements(store) - known
    if not fresh:
        return []
    known |= fresh
    return [(group, done) for group, done in store.unfinished_groups() if group.id in fresh]


def rerate(store: CompetitionStore, actor: Actor) -> Done:
    with _transaction(store) as db:
        _refit(db)
        (groups,) = db.execute("SELECT COUNT(*) FROM fit_exclusions").fetchone()
        detail = f"a fit from the first result, {groups} exclusion(s) applied"
        _audit(db, actor, "rerate", "leaderboard", detail)
    to_operations_log(actor, "rerate", "leaderboard", detail)
    return Done(f"the leaderboard is refitted: {detail}")


# ---------------------------------------------------------------------- one table for the web


@dataclasses.dataclass(frozen=True)
class WebAction:
    """An action the page's forms and the API's POSTs call by name, with its fields."""

    fields: tuple[str, ...]
    run: Callable[[CompetitionStore, Actor, int, Mapping[str, str]], Done]


WEB_ACTIONS: dict[str, WebAction] = {
    "rotate-token": WebAction(("name",), lambda s, a, _, f: rotate_token(s, a, f["name"])),
    "revoke-token": WebAction(("name",), lambda s, a, _, f: revoke_token(s, a, f["name"])),
    "disable": WebAction(("name",), lambda s, a, _, f: disable(s, a, f["name"])),
    "enable": WebAction(("name",), lambda s, a, _, f: enable(s, a, f["name"])),
    "ban": WebAction(("name", "results"), lambda s, a, _, f: ban(s, a, f["name"], f["results"])),
    "withdraw": WebAction(
        ("version", "results"), lambda s, a, _, f: withdraw(s, a, f["version"], f["results"])
    ),
    "unsuspend": WebAction(("version",), lambda s, a, _, f: unsuspend(s, a, f["version"])),
    "rerun": WebAction(("target",), lambda s, a, seed, f: rerun(s, a, f["target"], seed)),
    "rerate": WebAction((), lambda s, a, _, f: rerate(s, a)),
}
