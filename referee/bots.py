"""What a bot is to the referee: a name and how to start it (``BotSpec``).

A spec is plain data, so a league can read it from TOML, store it, and hand
the same spec to every table; nothing here starts a process.  ``resolve_bot``
is the one place where the text a person types after ``--bot`` becomes a
spec: a bundled bot's name (looked up in ``bots.registry`` when that package
is importable) or any command line, split as a POSIX shell would.  A command
that does not exist is not an error here: starting it fails, and that is the
bot's ``startup`` fault, not the referee's.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
import shlex
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Any, Literal

import msgspec

Transport = Literal["stdio", "tcp"]
TRANSPORTS: tuple[Transport, ...] = ("stdio", "tcp")


@dataclasses.dataclass(frozen=True)
class BotSpec:
    """How to start one bot.

    ``command`` is the argv (no shell); an empty command with ``transport="tcp"``
    is a remote bot the referee does not start, which connects with a token.
    ``env`` is added to a clean environment (see ``referee.transport.process``).
    ``unavailable`` says why a bundled bot cannot run on this machine; its
    session is then dead from the start with that reason as its fault.
    """

    name: str
    command: tuple[str, ...]
    cwd: Path | None = None
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    transport: Transport = "stdio"
    unavailable: str | None = None  # why this bot cannot run here: a start-up fault, not an error

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError("bot name: must be a non-empty string")
        if not isinstance(self.command, tuple) or not all(
            isinstance(part, str) for part in self.command
        ):
            raise ValueError(f"bot {self.name!r}: command must be a tuple of strings")
        if not self.command and self.transport != "tcp":
            raise ValueError(f"bot {self.name!r}: an empty command needs transport 'tcp'")
        if self.transport not in TRANSPORTS:
            raise ValueError(f"bot {self.name!r}: transport {self.transport!r} is not stdio or tcp")

    @property
    def remote(self) -> bool:
        """A bot the referee does not start: it connects over TCP by itself."""
        return not self.command

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "command": list(self.command),
            "cwd": None if self.cwd is None else str(self.cwd),
            "env": dict(self.env),
            "transport": self.transport,
            "unavailable": self.unavailable,
        }


def spec_from_json(data: Mapping[str, object]) -> BotSpec:
    """The spec ``BotSpec.to_json`` gave; ``ValueError`` naming the field if it is not one."""
    try:
        return msgspec.convert(data, BotSpec, dec_hook=_path_hook)
    except msgspec.ValidationError as error:
        raise ValueError(f"bot spec: {error}") from None


def _path_hook(kind: type, value: object) -> object:
    if kind is Path and isinstance(value, str):
        return Path(value)
    raise NotImplementedError(f"a bot spec has no {kind.__name__}")


def resolve_bot(text: str, name: str | None = None, *, transport: Transport = "stdio") -> BotSpec:
    """A bundled bot's name or a command line as a ``BotSpec``.

    Raises ``ValueError`` with one line naming the problem (empty text,
    unbalanced quotes).  The display name is ``name``, else the bundled name,
    else the command's script or program name.
    """
    stripped = text.strip()
    if not stripped:
        raise ValueError("bot: an empty command line")
    bundled = _bundled(stripped)
    if bundled is not None:
        command, unavailable = bundled
        return BotSpec(name or stripped, command, transport=transport, unavailable=unavailable)
    try:
        argv = tuple(shlex.split(stripped))
    except ValueError as error:
        raise ValueError(f"bot {text!r}: {error}") from None
    if not argv:
        raise ValueError(f"bot {text!r}: an empty command line")
    return BotSpec(name or command_name(argv), argv, transport=transport)


def command_name(argv: tuple[str, ...]) -> str:
    """A short display name for a command: its script's stem, else its program's name.

    ``python3 bots/mine.py`` is ``mine``; ``node bot.js`` is ``bot``;
    ``./mybot --fast`` is ``mybot``; ``python -m bots.starters.greedy`` is ``greedy``.
    """
    if len(argv) >= 3 and argv[1] == "-m":
        return argv[2].rsplit(".", 1)[-1]
    for part in argv[1:]:
        if part.startswith("-"):
            continue
        if re.search(r"\.[A-Za-z0-9]+$", part) or "/" in part:
            return PurePath(part).stem or part
        break
    return PurePath(argv[0]).stem or argv[0]


def _bundled(text: str) -> tuple[tuple[str, ...], str | None] | None:
    """The argv of the bundled bot called ``text`` and why it cannot run (None if it can).

    ``bots.registry`` is looked up when it can be imported; a name it does not
    know is a command line.  A bundled bot that cannot run here (no ``node``,
    no C compiler) still resolves: starting it is its ``startup`` fault.
    """
    if any(ch.isspace() for ch in text):
        return None
    try:
        registry: Any = importlib.import_module("bots.registry")
    except ImportError:
        return None
    bundled = registry.resolve(text)
    if bundled is None:
        return None
    try:
        return tuple(str(part) for part in bundled.command()), None
    except registry.BotUnavailableError as error:
        return (text,), str(error)
