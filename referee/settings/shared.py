"""The sections a league file and a competition file both have, so they mean the same in both.

[rules] (a preset and options; the hand limit comes from [league] or [tables]),
[time_control] (SPEC.md 12, checked by ``TimeControl``), [sandbox] (the bots'
limits, docs/hardening.md; a competition has tighter defaults and its
``compile_seconds``) and [remote] (where remote bots connect).  Each is a
``Section``; the functions here turn a decoded one into what the league and
the server run with, failing with the same lines in both files.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from engine.presets import DEFAULT_PRESET
from engine.rules import Rules
from referee.sandbox import DEFAULT_LEVEL, LEVELS, MIB, Limits
from referee.settings.rules import RulesChoiceError, build_rules
from referee.settings.sections import ConfigError, Section, fail, kind, one_of
from referee.transport.timecontrol import TimeControl

DEFAULT_TIME = TimeControl()
Seconds = Annotated[float, Meta(extra={"unit": "seconds"})]

# The allowed range of each [sandbox] limit, in the file's units: below, no real bot
# starts (a JVM needs more than 1 MiB); above, it is no limit at all and should say so
# with false.
LIMIT_RANGES: dict[str, tuple[int, int]] = {
    "cpu_seconds": (1, 7 * 86400),
    "open_files": (16, 65536),
    "file_size_mb": (1, 65536),
    "processes": (4, 4096),
    "memory_mb": (32, 262144),
    "address_space_mb": (64, 1 << 20),
    "scratch_mb": (1, 16384),
}
# Each limit's key in the file, its field of ``Limits`` and the unit that turns one into the other.
LIMIT_FIELDS = (
    ("cpu_seconds", "cpu_seconds", 1),
    ("open_files", "open_files", 1),
    ("file_size_mb", "file_size_bytes", MIB),
    ("processes", "processes", 1),
    ("memory_mb", "memory_bytes", MIB),
    ("address_space_mb", "address_space_bytes", MIB),
    ("scratch_mb", "scratch_bytes", MIB),
)


def limit_range(name: str) -> Meta:
    """The bound of a [sandbox] limit's field (``LIMIT_RANGES``)."""
    low, high = LIMIT_RANGES[name]
    return Meta(ge=low, le=high)


class RulesSection(Section, frozen=True):
    """[rules]: a preset and rule options over it (``newmarket rules`` lists both)."""

    preset: str = DEFAULT_PRESET
    options: dict[str, Any] = msgspec.field(default_factory=dict)


class TimeControlSection(Section, frozen=True):
    """[time_control]: SPEC.md 12's clock, in seconds; ``TimeControl`` checks the values."""

    move_time: Seconds = DEFAULT_TIME.move_time
    time_bank: Seconds = DEFAULT_TIME.time_bank
    startup_time: Seconds = DEFAULT_TIME.startup_time
    margin: Seconds = DEFAULT_TIME.margin
    max_faults: Annotated[int, Meta(ge=1)] = DEFAULT_TIME.max_faults


# A limit: a whole number in its range, false for none, absent for the default (``Limits``).
class SandboxSection(Section, frozen=True):
    """[sandbox]: the bots' isolation level and limits (docs/hardening.md)."""

    level: Annotated[str, one_of(LEVELS)] = DEFAULT_LEVEL
    cpu_seconds: Annotated[int, limit_range("cpu_seconds")] | bool | None = None
    open_files: Annotated[int, limit_range("open_files")] | bool | None = None
    file_size_mb: Annotated[int, limit_range("file_size_mb")] | bool | None = None
    processes: Annotated[int, limit_range("processes")] | bool | None = None
    memory_mb: Annotated[int, limit_range("memory_mb")] | bool | None = None
    address_space_mb: Annotated[int, limit_range("address_space_mb")] | bool | None = None
    scratch_mb: Annotated[int, limit_range("scratch_mb")] | bool | None = None
    # true lets a bot's ``env`` set loader variables (LD_PRELOAD, PYTHONPATH, ...)
    allow_loader_env: bool = False


class RemoteSettings(Section, frozen=True):
    """Where a league with remote bots listens, and how long it waits for an absent one."""

    host: str = "127.0.0.1"
    port: Annotated[int, Meta(ge=0, le=65535)] = 7464
    # seconds from the start (or from a drop) before playing without it
    wait: Annotated[float, Meta(gt=0, extra={"unit": "seconds"})] = 300.0
    tokens: Path | None = None  # None: ``<league file stem>.tokens.json`` beside the file


def read_text(path: Path) -> str:
    """A config file's text, or the ``ConfigError`` line saying why it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None


def parse_toml(text: str, path: Path) -> dict[str, object]:
    """The TOML ``text`` of the file at ``path`` as tables, or its ``ConfigError`` line."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None


def paths_from(base: Path) -> Any:
    """A ``decode`` hook that reads a ``Path`` field as the file wrote it: from ``base``, ``~``."""

    def hook(wanted: type, value: object) -> object:
        if wanted is Path and isinstance(value, str):
            return base / Path(os.path.expanduser(value))
        raise TypeError(f"expected a string, got {kind(value)}")

    return hook


def rules_of(
    section: RulesSection, hand_limit: int | None, hand_limit_key: str, path: Path
) -> tuple[dict[str, object], Rules]:
    """[rules] with the file's hand limit (at ``hand_limit_key``): the options and the rules.

    The options returned hold the hand limit too, as the rules do.
    """
    options = dict(section.options)
    if hand_limit is not None:
        if "hand_limit" in options:
            fail(
                path,
                hand_limit_key,
                "also set as rules.options.hand_limit; give it in one place",
            )
        options["hand_limit"] = hand_limit
    try:
        return options, build_rules(section.preset, options)
    except RulesChoiceError as error:
        if error.part == "preset":
            fail(path, "rules.preset", str(error))
        fail(path, *option_key(str(error), options, hand_limit_key))


def option_key(message: str, options: Mapping[str, object], hand_limit_key: str) -> tuple[str, str]:
    """The key of a rule option an engine ``RulesError`` names, and the problem without it."""
    unknown = re.match(r"unknown rule option '([^']*)'(.*)", message)
    if unknown:
        return f"rules.options.{unknown.group(1)}", "unknown rule option" + unknown.group(2)
    option, sep, problem = message.partition(": ")
    if sep and re.fullmatch(r"[a-z_]+", option):
        if option == "hand_limit" and "hand_limit" in options:
            return hand_limit_key, problem
        if option in options:
            return f"rules.options.{option}", problem
        return f"rules ({option})", problem
    return "rules", message


def time_control_of(section: TimeControlSection, path: Path) -> TimeControl:
    """[time_control] as a ``TimeControl``, its own refusal naming the key."""
    values = msgspec.structs.asdict(section)
    try:
        return TimeControl(**values)
    except ValueError as error:
        message = str(error)
        field, _, problem = message.partition(": ")
        if field in values:
            fail(path, f"time_control.{field}", problem)
        fail(path, "time_control", message)


def sandbox_of(section: SandboxSection, path: Path) -> tuple[str, Limits]:
    """[sandbox]'s level and ``Limits``: false is no limit, absent is ``Limits``' default."""
    defaults = Limits()
    values: dict[str, int | None] = {}
    for name, field, unit in LIMIT_FIELDS:
        value = getattr(section, name)
        if value is True:  # true is no number of anything
            fail(path, f"sandbox.{name}", f"must be a whole number, got {kind(value)}")
        if value is False:
            values[field] = None
        elif value is None:
            values[field] = getattr(defaults, field)
        else:
            values[field] = value * unit
    return section.level, Limits(**values)
