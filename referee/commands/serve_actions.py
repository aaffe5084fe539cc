"""The organiser's management words of ``newmarket serve``, one registered function each.

    newmarket serve ACTION [ARGUMENT] COMPETITION.toml     as git: the word, then its object
    newmarket serve ACTION [ARGUMENT] -c COMPETITION.toml  the same (the older spelling)

Each word writes the competition's database directly (a running server sees it
within a second), so it works whether or not the server runs. A new word is a
function decorated with :func:`action`; ``serve``'s help and its usage errors
are made from this registry, so they cannot disagree with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import typer

from referee.server.competition_db import CompetitionStore, StoreError, Version
from referee.server.competition_file import CompetitionConfig, ConfigError
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


def action(
    name: str, *arguments: str, summary: str
) -> Callable[[Callable[[ManagementCall], None]], Callable[[ManagementCall], None]]:
    """Register a management word of ``newmarket serve``."""

    def register(run: Callable[[ManagementCall], None]) -> Callable[[ManagementCall], None]:
        ACTIONS[name] = Action(name, arguments, summary, run)
        return run

    return register


def actions_epilog() -> str:
    """A line per word for ``newmarket serve --help`` (``\\b`` keeps click from re-wrapping)."""
    width = max(len(entry.usage) for entry in ACTIONS.values())
    lines = (f"  {entry.usage:<{width}}  {entry.summary}" for entry in ACTIONS.values())
    return "\b\nActions (newmarket serve ACTION [ARGUMENT] COMPETITION.toml):\n" + "\n".join(lines)


@action("add-participant", "NAME", summary="add a participant and print its sign-in token")
def _add_participant(call: ManagementCall) -> None:
    participant, token = call.store.add_participant(call.arguments[0])
    typer.echo(f"participant {participant.name!r} added; its sign-in token:", err=True)
    typer.echo(token)


@action("revoke-sessions", "NAME", summary="sign NAME out of every browser")
def _revoke_sessions(call: ManagementCall) -> None:
    who = call.store.participant_by_name(call.arguments[0])
    if who is None:
        raise StoreError(f"no participant named {call.arguments[0]!r} in {call.config.database}")
    ended = call.store.end_sessions(who.id)
    typer.echo(
        f"participant {who.name!r}: {ended} session(s) ended; every browser signed in "
        "as it must sign in again with its token",
        err=True,
    )


@action("pause", summary="no new group starts (groups in progress finish)")
def _pause(call: ManagementCall) -> None:
    call.store.set_paused(True)
    typer.echo(f"competition {call.config.name!r}: paused", err=True)


@action("resume", summary="play again")
def _resume(call: ManagementCall) -> None:
    call.store.set_paused(False)
    typer.echo(f"competition {call.config.name!r}: resumed", err=True)


@action("unsuspend", "VERSION_OR_NAME", summary="a suspended version plays again")
def _unsuspend(call: ManagementCall) -> None:
    for version in _suspended(call.store, call.arguments[0], call.config):
        call.store.unsuspend(version.id, "newmarket serve unsuspend")
        said = f"{version.label} (version {version.id}): admitted again"
        typer.echo(printable(said), err=True)


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


def _suspended(store: CompetitionStore, which: str, config: CompetitionConfig) -> list[Version]:
    """The suspended versions ``which`` names: a version id, or every one of a participant."""
    if which.isdigit():
        found = store.version(int(which))
        if found is None:
            raise ConfigError(f"serve unsuspend: no version {which} in this competition")
        versions = [found]
    else:
        participant = store.participant_by_name(which)
        if participant is None:
            raise ConfigError(
                f"serve unsuspend: {which!r} is neither a version id nor a participant's name"
            )
        versions = store.versions(participant.id)
    suspended = [version for version in versions if version.status == "suspended"]
    if not suspended:
        shown = ", ".join(f"{v.label} {v.status}" for v in versions[-3:]) or "no versions"
        raise ConfigError(
            f"serve unsuspend: nothing of {which!r} is suspended ({shown}); "
            f"newmarket serve flags {config.path} lists what is"
        )
    return suspended
