"""A competition's TOML file, read and checked whole before the server starts.

Every mistake is one ``ConfigError`` line, ``FILE: KEY: PROBLEM``, as for a
league file.  The shape (every key optional unless marked)::

    [competition]  name (required), seed, data (directory for the database,
                   uploads and logs; default: "<file stem>-data" beside the file),
                   self_registration (bool), runtimes (list of RUNTIMES),
                   house_bots (bundled bots that always play, e.g. ["tracker"])
    [server]       host, port, jobs (tables played at once), secure_cookies (bool)
    [tables]       players (seats per table, 3..8), hand_limit
    [rules]        preset, options = { option = value, ... }
    [time_control] move_time, time_bank, startup_time, margin, max_faults
    [uploads]      max_kb (one upload), max_files (in an archive), max_unpacked_kb,
                   per_hour (uploads per participant per hour)
    [scheduler]    max_share (the largest fraction of recent table seats one
                   participant may hold while others wait; 0 < x <= 1)
    [sandbox]      level, cpu_seconds, memory_mb, processes, open_files, file_size_mb,
                   compile_seconds

Relative paths are taken from the directory holding the file.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any, NoReturn

from engine import RulesError, preset
from engine.presets import DEFAULT_PRESET
from engine.rules import Rules
from engine.state import MAX_PLAYERS, MIN_PLAYERS
from referee.sandbox import DEFAULT_LEVEL, LEVELS, MIB, Limits
from referee.timecontrol import TimeControl

RUNTIMES: tuple[str, ...] = ("python3", "node", "java", "c", "binary")
KIB = 1024


class ConfigError(ValueError):
    """A competition file that cannot be used; the message is one line naming the key."""


@dataclasses.dataclass(frozen=True)
class UploadLimits:
    max_bytes: int = 1024 * KIB  # one upload, as sent
    max_files: int = 200  # files in an archive
    max_unpacked_bytes: int = 16 * MIB  # an archive's files together, unpacked
    per_hour: int = 30  # uploads per participant in any hour


@dataclasses.dataclass(frozen=True)
class CompetitionConfig:
    path: Path
    name: str
    seed: int
    data: Path
    self_registration: bool
    runtimes: tuple[str, ...]
    house_bots: tuple[str, ...]
    host: str
    port: int
    jobs: int
    secure_cookies: bool
    registrations_per_hour: int
    players: int
    rules: Rules
    time_control: TimeControl
    uploads: UploadLimits
    max_share: float
    sandbox_level: str
    sandbox_limits: Limits
    compile_seconds: int

    @property
    def database(self) -> Path:
        return self.data / "competition.sqlite"

    @property
    def uploads_dir(self) -> Path:
        return self.data / "versions"

    @property
    def logs_dir(self) -> Path:
        return self.data / "logs"


def load_config(path: Path) -> CompetitionConfig:
    """Read and check ``path``; raises ``ConfigError`` with one line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    return _Reader(path).read(data)


class _Section:
    def __init__(self, reader: _Reader, data: object, where: str) -> None:
        if not isinstance(data, dict):
            reader.fail(where, "must be a table")
        self.reader = reader
        self.data: dict[str, Any] = data
        self.where = where

    def fail(self, name: str, problem: str) -> NoReturn:
        self.reader.fail(f"{self.where}.{name}", problem)

    def integer(self, name: str, default: int, low: int, high: int | None = None) -> int:
        value = self.data.get(name, default)
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(name, f"must be a whole number, got {type(value).__name__}")
        if value < low or (high is not None and value > high):
            bound = f"{low}..{high}" if high is not None else f"at least {low}"
            self.fail(name, f"must be {bound}, got {value}")
        return value

    def number(self, name: str, default: float, low: float = 0.0, high: float = 1e9) -> float:
        value = self.data.get(name, default)
        if not isinstance(value, int | float) or isinstance(value, bool):
            self.fail(name, f"must be a number, got {type(value).__name__}")
        if not low <= value <= high:
            self.fail(name, f"must be between {low:g} and {high:g}, got {value}")
        return float(value)

    def boolean(self, name: str, default: bool) -> bool:
        value = self.data.get(name, default)
        if not isinstance(value, bool):
            self.fail(name, "must be true or false")
        return value

    def text(self, name: str, default: str | None, choices: tuple[str, ...] = ()) -> str:
        value = self.data.get(name, default)
        if value is None:
            self.fail(name, "is required")
        if not isinstance(value, str) or not value.strip():
            self.fail(name, "must be a non-empty string")
        if choices and value not in choices:
            self.fail(name, f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    def finish(self, known: tuple[str, ...]) -> None:
        for key in self.data:
            if key not in known:
                self.fail(key, f"unknown key (known: {', '.join(known)})")


class _Reader:
    SECTIONS = (
        "competition",
        "server",
        "tables",
        "rules",
        "time_control",
        "uploads",
        "scheduler",
        "sandbox",
    )

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, key: str, problem: str) -> NoReturn:
        raise ConfigError(f"{self.path}: {key}: {problem}")

    def section(self, data: dict[str, Any], name: str) -> _Section:
        return _Section(self, data.get(name, {}), name)

    def read(self, data: dict[str, Any]) -> CompetitionConfig:
        for key in data:
            if key not in self.SECTIONS:
                self.fail(key, f"unknown section (known: {', '.join(self.SECTIONS)})")
        if "competition" not in data:
            self.fail("competition", "missing: the file needs [competition] with a name")
        competition = self.section(data, "competition")
        name = competition.text("name", None)
        seed = competition.integer("seed", 1, 0)
        data_text = competition.text("data", f"{self.path.stem}-data")
        self_registration = competition.boolean("self_registration", False)
        runtimes = competition.data.get("runtimes", list(RUNTIMES))
        if not isinstance(runtimes, list) or not runtimes:
            competition.fail("runtimes", "must be a non-empty list")
        for runtime in runtimes:
            if runtime not in RUNTIMES:
                competition.fail("runtimes", f"unknown runtime {runtime!r} (known: {RUNTIMES})")
        house = competition.data.get("house_bots", [])
        if not isinstance(house, list) or not all(isinstance(n, str) for n in house):
            competition.fail("house_bots", "must be a list of bundled bot names")
        try:
            import bots.registry as registry

            for bot_name in house:
                if registry.resolve(bot_name) is None:
                    competition.fail("house_bots", f"{bot_name!r} is not a bundled bot")
        except ImportError:
            pass
        competition.finish(("name", "seed", "data", "self_registration", "runtimes", "house_bots"))

        server = self.section(data, "server")
        host = server.text("host", "127.0.0.1")
        port = server.integer("port", 8000, 0, 65535)
        jobs = server.integer("jobs", 2, 1, 64)
        secure_cookies = server.boolean("secure_cookies", True)
        registrations_per_hour = server.integer("registrations_per_hour", 5, 1)
        server.finish(("host", "port", "jobs", "secure_cookies", "registrations_per_hour"))

        tables = self.section(data, "tables")
        players = tables.integer("players", 3, MIN_PLAYERS, MAX_PLAYERS)
        hand_limit = tables.data.get("hand_limit")
        if hand_limit is not None:
            tables.integer("hand_limit", 1, 1)
        tables.finish(("players", "hand_limit"))

        rules_section = self.section(data, "rules")
        options_section = _Section(self, rules_section.data.get("options", {}), "rules.options")
        preset_name = rules_section.text("preset", DEFAULT_PRESET)
        rules_section.finish(("preset", "options"))
        options = dict(options_section.data)
        if hand_limit is not None:
            options["hand_limit"] = hand_limit
        try:
            rules = preset(preset_name).with_options(options)
        except RulesError as error:
            self.fail("rules", str(error))

        time_section = self.section(data, "time_control")
        defaults = TimeControl()
        values: dict[str, Any] = {
            field: time_section.number(field, getattr(defaults, field), 0.0, 3600.0)
            for field in ("move_time", "time_bank", "startup_time", "margin")
        }
        values["max_faults"] = time_section.integer("max_faults", defaults.max_faults, 1)
        time_section.finish(("move_time", "time_bank", "startup_time", "margin", "max_faults"))
        try:
            control = TimeControl(**values)
        except ValueError as error:
            self.fail("time_control", str(error))

        uploads_section = self.section(data, "uploads")
        base = UploadLimits()
        uploads = UploadLimits(
            max_bytes=uploads_section.integer("max_kb", base.max_bytes // KIB, 1) * KIB,
            max_files=uploads_section.integer("max_files", base.max_files, 1),
            max_unpacked_bytes=uploads_section.integer(
                "max_unpacked_kb", base.max_unpacked_bytes // KIB, 1
            )
            * KIB,
            per_hour=uploads_section.integer("per_hour", base.per_hour, 1),
        )
        uploads_section.finish(("max_kb", "max_files", "max_unpacked_kb", "per_hour"))

        scheduler = self.section(data, "scheduler")
        max_share = scheduler.number("max_share", 1.0, 0.01, 1.0)
        scheduler.finish(("max_share",))

        sandbox = self.section(data, "sandbox")
        level = sandbox.text("level", DEFAULT_LEVEL, LEVELS)
        limits = Limits(
            cpu_seconds=sandbox.integer("cpu_seconds", 3600, 1),
            memory_bytes=sandbox.integer("memory_mb", 1024, 16) * MIB,
            processes=sandbox.integer("processes", 64, 1),
            open_files=sandbox.integer("open_files", 256, 16),
            file_size_bytes=sandbox.integer("file_size_mb", 64, 1) * MIB,
        )
        compile_seconds = sandbox.integer("compile_seconds", 60, 1, 3600)
        sandbox.finish(
            (
                "level",
                "cpu_seconds",
                "memory_mb",
                "processes",
                "open_files",
                "file_size_mb",
                "compile_seconds",
            )
        )
        return CompetitionConfig(
            path=self.path,
            name=name,
            seed=seed,
            data=(self.path.parent / data_text).resolve(),
            self_registration=self_registration,
            runtimes=tuple(runtimes),
            house_bots=tuple(house),
            host=host,
            port=port,
            jobs=jobs,
            secure_cookies=secure_cookies,
            registrations_per_hour=registrations_per_hour,
            players=players,
            rules=rules,
            time_control=control,
            uploads=uploads,
            max_share=max_share,
            sandbox_level=level,
            sandbox_limits=limits,
            compile_seconds=compile_seconds,
        )
