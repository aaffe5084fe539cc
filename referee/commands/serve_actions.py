"""The organiser's management words of ``newmarket serve``, one registered function each.

    newmarket serve ACTION [ARGUMENT] COMPETITION.toml     as git: the word, then its object
    newmarket serve ACTION [ARGUMENT] -c COMPETITION.toml  the same (the older spelling)

Each word writes the competition's database directly (a running server sees it
within a second), so it works whether or not the server runs. A new word is a
function decorated with :func:`action`; ``serve``'s help and its usage errors
are made from this registry, so they cannot disagree with it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass

import typer

from referee.server import organiser
from referee.server.competition_db import CompetitionStore, StoreError
from referee.server.competition_file import CompetitionConfig, ConfigError
from referee.server.organiser_auth import new_organiser_token
from referee.text.printing import printable


@dataclass(frozen=True)
class ManagementCall:
    """What a management word gets: the open store, the loaded file, its words."""

    store: CompetitionStore
    config: CompetitionConfig
    arguments: tuple[str, ...]


@dataclass(frozen=True)
class Action:
    name: str
    arguments: tuple[str, ...]  # metavars, in order (NAME, VERSION_OR_NAME, ...)
    summary: str  # what it does, for the help's table
    run: Callable[[ManagementCall], None]

    @property
    def usage(self) -> str:
        return " ".join((self.name, *self.arguments))


ACTIONS: dict[str, Action] = {}
HELP_WIDTH = 80  # the help's columns (docs/cli.md)
EPILOG_INDENT = "  "  # click indents an epilog by two spaces


def action(
    name: str, *arguments: str, summary: str
) -> Callable[[Callable[[ManagementCall], None]], Callable[[ManagementCall], None]]:
    """Register a management word of ``newmarket serve``."""

    def register(run: Callable[[ManagementCall], None]) -> Callable[[ManagementCall], None]:
        ACTIONS[name] = Action(name, arguments, summary, run)
        return run

    return register


def actions_epilog() -> str:
    """A line per word for ``newmarket serve --help`` (``\\b`` keeps click from re-wrapping),
    each summary wrapped under itself so the help fits 80 columns."""
    width = max(len(entry.usage) for entry in ACTIONS.values())
    room = HELP_WIDTH - len(EPILOG_INDENT) - 2 - width - 2
    lines = []
    for entry in ACTIONS.values():
        wrapped = textwrap.wrap(entry.summary, room, break_on_hyphens=False) or [""]
        lines.append(f"  {entry.usage:<{width}}  {wrapped[0]}")
        lines.extend(f"  {'':<{width}}  {more}" for more in wrapped[1:])
    heading = "Actions (newmarket serve ACTION [ARGUMENT] COMPETITION.toml):"
    return "\b\n" + heading + "\n" + "\n".join(lines)


@action("add-participant", "NAME", summary="add a participant and print its sign-in token")
def _add_participant(call: ManagementCall) -> None:
    participant, token = call.store.add_participant(call.arguments[0])
    organiser.record(call.store, organiser.SHELL, "add-participant", participant.name, "added")
    typer.echo(f"participant {participant.name!r} added; its sign-in token:", err=True)
    typer.echo(token)


@action("revoke-sessions", "NAME", summary="sign NAME out of every browser")
def _revoke_sessions(call: ManagementCall) -> None:
    who = call.store.participant_by_name(call.arguments[0])
    if who is None:
        raise StoreError(f"no participant named {call.arguments[0]!r} in {call.config.database}")
    ended = call.store.end_sessions(who.id)
    organiser.record(call.store, organiser.SHELL, "revoke-sessions", who.name, f"{ended} ended")
    typer.echo(
        f"participant {who.name!r}: {ended} session(s) ended; every browser signed in "
        "as it must sign in again with its token",
        err=True,
    )


@action("pause", summary="no new group starts (groups in progress finish)")
def _pause(call: ManagementCall) -> None:
    call.store.set_paused(True)
    organiser.record(call.store, organiser.SHELL, "pause", call.config.name, "paused")
    typer.echo(f"competition {call.config.name!r}: paused", err=True)


@action("resume", summary="play again")
def _resume(call: ManagementCall) -> None:
    call.store.set_paused(False)
    organiser.record(call.store, organiser.SHELL, "resume", call.config.name, "resumed")
    typer.echo(f"competition {call.config.name!r}: resumed", err=True)


@action("unsuspend", "VERSION_OR_NAME", summary="a suspended version plays again")
def _unsuspend(call: ManagementCall) -> None:
    try:
        done = organiser.unsuspend(call.store, organiser.SHELL, call.arguments[0])
    except organiser.NothingSuspendedError as error:
        raise ConfigError(
            f"serve unsuspend: {error}; newmarket serve flags {call.config.path} lists what is"
        ) from None
    except organiser.OrganiserError as error:
        raise ConfigError(f"serve unsuspend: {error}") from None
    for line in done.said.splitlines():
        typer.echo(printable(line), err=True)


@action("flags", summary="suspended and flagged versions, with the evidence")
def _flags(call: ManagementCall) -> None:
    lines: list[str] = []
    store = call.store
    for version in store.versions(status="suspended"):
        lines.append(f"suspended  {version.label} (version {version.id}): {version.detail}")
        for suspension in store.suspensions(version.id)[:1]:
            for entry in suspension["evidence"]:
                lines.append(f"             {entry['match']}: {entry['what']}")
    for flag in store.flags():
        found = store.version(flag["version"])
        label = found.label if found is not None else "?"
        lines.append(f"flagged    {label} (version {flag['version']}): {flag['detail']}")
        faulty = [str(entry["match"]) for entry in flag["evidence"] if entry["faults"]]
        lines.append(f"             matches with faults: {', '.join(faulty)}")
    for line in lines or ["nothing suspended or flagged"]:
        typer.echo(printable(line))


# The organiser in control (``referee.server.organiser``): the same actions as the
# organiser's page and API, each with its row in the audit log (who: shell).


def _organiser_word(
    name: str, *arguments: str, summary: str, run: Callable[[ManagementCall], organiser.Done]
) -> None:
    """Register ``name``: its refusals one line (``serve NAME: why``), a new token on stdout."""

    def word(call: ManagementCall) -> None:
        try:
            done = run(call)
        except organiser.OrganiserError as error:
            raise ConfigError(f"serve {name}: {error}") from None
        typer.echo(printable(done.said), err=True)
        if done.token is not None:
            typer.echo(done.token)

    action(name, *arguments, summary=summary)(word)


_organiser_word(
    "rotate-token",
    "NAME",
    summary="print a new token for NAME; the old one and its sessions end",
    run=lambda call: organiser.rotate_token(call.store, organiser.SHELL, call.arguments[0]),
)
_organiser_word(
    "revoke-token",
    "NAME",
    summary="NAME cannot sign in (sessions end) until rotate-token",
    run=lambda call: organiser.revoke_token(call.store, organiser.SHELL, call.arguments[0]),
)
_organiser_word(
    "disable",
    "NAME",
    summary="NAME's versions leave the tables and leaderboard; no uploads",
    run=lambda call: organiser.disable(call.store, organiser.SHELL, call.arguments[0]),
)
_organiser_word(
    "enable",
    "NAME",
    summary="lift a disable or a ban",
    run=lambda call: organiser.enable(call.store, organiser.SHELL, call.arguments[0]),
)
_organiser_word(
    "ban",
    "NAME",
    "RESULTS",
    summary="disabled for good: no sign-in, upload or name; RESULTS: keep or exclude",
    run=lambda call: organiser.ban(call.store, organiser.SHELL, *call.arguments),
)
_organiser_word(
    "withdraw",
    "VERSION",
    "RESULTS",
    summary="a version leaves the tables; RESULTS: keep or exclude (from the fit)",
    run=lambda call: organiser.withdraw(call.store, organiser.SHELL, *call.arguments),
)
_organiser_word(
    "rerun",
    "GROUP_OR_WINDOW",
    summary="play a group (g12) or a window's failed groups (FROM..TO) again",
    run=lambda call: organiser.rerun(
        call.store, organiser.SHELL, call.arguments[0], call.config.seed
    ),
)
_organiser_word(
    "rerate",
    summary="refit the leaderboard from every result not excluded",
    run=lambda call: organiser.rerate(call.store, organiser.SHELL),
)


@action("organiser-token", summary="print a new organiser token for /organiser; the old one ends")
def _organiser_token(call: ManagementCall) -> None:
    token = new_organiser_token(call.store)
    organiser.record(call.store, organiser.SHELL, "organiser-token", "organiser", "new token")
    typer.echo(
        "the organiser's token (sign in with it at /signin; the old one and its sessions ended):",
        err=True,
    )
    typer.echo(token)


@action("audit", summary="the organiser's actions, newest first: who, when, what")
def _audit(call: ManagementCall) -> None:
    rows = organiser.audit_log(call.store)
    for row in rows:
        line = f"{row['when']}  {row['who']} ({row['via']})  {row['action']} {row['target']}"
        typer.echo(printable(f"{line}: {row['detail']}"))
    if not rows:
        typer.echo("no organiser action yet", err=True)


# ---------------------------------------------------------------- a contest's words
# Phases, fair tables and finals (docs/server.md "Phases", "Fair tables", "Finals").


@action(
    "move-phase",
    "PHASE",
    "WHEN",
    summary="move a date: opens, freeze, finals or ends, to an ISO 8601 time with its zone",
)
def _move_phase(call: ManagementCall) -> None:
    from referee.server.phases import move_date

    phase, when = call.arguments
    try:
        at = move_date(call.config, call.store, phase, when)
    except ValueError as error:
        raise ConfigError(f"serve move-phase: {error}") from None
    typer.echo(f"competition {call.config.name!r}: {phase} is now {at.isoformat()}", err=True)


@action("phases", summary="the contest's dates, the phase now and the next date")
def _phases(call: ManagementCall) -> None:
    from datetime import UTC, datetime

    from referee.server.competition_file import PHASE_NAMES
    from referee.server.phases import dates_of, phase_at

    given = dates_of(call.config, call.store)
    for name in PHASE_NAMES:
        at = getattr(given, name)
        typer.echo(f"{name:<7} {'-' if at is None else at.isoformat()}")
    phase = phase_at(given, datetime.now(UTC))
    typer.echo(f"now     {phase.label}" + (f"; {phase.countdown}" if phase.countdown else ""))


@action("link-accounts", "NAME", "NAME", summary="keep two participants apart at every table")
def _link_accounts(call: ManagementCall) -> None:
    from referee.server.contest_db import link_accounts

    found = []
    for name in call.arguments:
        who = call.store.participant_by_name(name)
        if who is None:
            raise ConfigError(f"serve link-accounts: no participant named {name!r}")
        found.append(who)
    first, second = found
    if first.id == second.id:
        raise ConfigError("serve link-accounts: name two different participants")
    new = link_accounts(call.store, first.id, second.id)
    said = "linked" if new else "were linked already"
    typer.echo(
        printable(f"{first.name!r} and {second.name!r} {said}: they never share a table"),
        err=True,
    )


@action("collusion", summary="pairs whose chips flowed beyond what their scores predict")
def _collusion(call: ManagementCall) -> None:
    from referee.server.collusion import collusion_report

    for line in collusion_report(call.config, call.store).lines():
        typer.echo(printable(line))


@action("finals-rerun", summary="play the finals again from their record; compare the ranking")
def _finals_rerun(call: ManagementCall) -> None:
    from referee.server.finals import rerun_finals

    for line in rerun_finals(call.config, call.store):
        typer.echo(printable(line))
