"""A league's TOML file, read and checked completely before anything starts.

An overnight league that dies at 3 a.m. on a typo is the failure this module
exists to prevent, so every check that can be made without playing is made
here: unknown keys, types, the preset and every rule option (through
``Rules.with_options``, which names the option), the table size against the
number of bots and the rules' ``end_players``, duplicate bot names, bundled
bots that cannot run here, and programs or scripts that do not exist.  Each
mistake is one ``ConfigError`` line, ``FILE: KEY: PROBLEM``, naming the key as
it is spelled in the file (``bots[2].command``).

``LeagueConfig.identity()`` is the league as written (with defaults filled
in, paths as text) and is what the results database stores: a database
refuses a league whose identity differs, whatever the file is called or
wherever it moved.  What cannot change a result is not part of it: the
display name, where logs go, ``--jobs`` and ``--db``.

The file's shape (every key is optional unless marked)::

    [league]  name, format ("round_robin" | "bankroll"), seed (the schedule's;
              default: drawn at the first start and kept in the database),
              public_deals (true: the cards follow from the seed, for research;
              default false: from a secret key in the database, ``referee.dealkey``),
              table_size (3..8; default 4, or every bot if fewer), hand_limit,
              logs (a directory, or false; default: beside the database),
              match ("session" | "fixed_hands" | "auto": fixed_hands for the
              newmarket preset, else session)
    [schedule]  kind ("auto" | "round_robin" | "balanced" | "gauntlet"), duplicate,
                cycles, meetings, round_robin_limit, candidates (gauntlet: the first N
                bots play the others)                       (round_robin only)
    [bankroll]  max_rounds                                    (bankroll only)
    [rules]  preset, options = { option = value, ... }
    [time_control]  move_time, time_bank, startup_time, margin, max_faults
    [[bots]]  name, command (required: a bundled name, a command line or an
              argv list), cwd, env = { KEY = "value" }, transport ("stdio" | "tcp"),
              remote = true (instead of a command: the bot connects by itself
              with a token from ``newmarket tokens``; see ``referee.remote``)
    [remote]  host, port, wait (seconds a registered bot may be absent before its
              matches are played without it), tokens (file; default
              ``<league file stem>.tokens.json`` beside the league file)
    [sandbox]  level ("none" | "basic" | "strict" | "auto"), cpu_seconds,
               open_files, file_size_mb, processes, memory_mb, address_space_mb,
               scratch_mb (each a whole number in its range, ``LIMIT_RANGES``, or
               false for no limit; docs/hardening.md), allow_loader_env (true lets
               a bot's ``env`` set loader variables such as LD_PRELOAD).
               Not part of the identity: like --jobs, it is the host's
               protection, and a league may resume on another machine.

Relative paths (``cwd``, ``logs``, a command's program or script) are taken
from the directory holding the TOML file, so a league file and its bots can
move together.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, NoReturn

from engine import RulesError, preset
from engine.presets import DEFAULT_PRESET
from engine.rules import Rules
from engine.state import MAX_PLAYERS, MIN_PLAYERS
from referee.bots import TRANSPORTS, BotSpec, Transport, resolve_bot
from referee.league.schedule import AUTO, GAUNTLET, SCHEDULE_KINDS
from referee.process import why_cannot_start
from referee.sandbox import DEFAULT_LEVEL, LEVELS, MIB, Limits
from referee.sandbox.isolation import ENV_SHARED_DIR
from referee.scoring.duplicate import fixed_hands
from referee.timecontrol import TimeControl

# What a bot's name, command and environment may hold: a name becomes a file name (its
# stderr log) and a report page, so no path separators, no "..", no control characters.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Variables that make a loader or runtime run other code, or find it elsewhere: a league
# file sets them for a bot only if the organiser says so ([sandbox] allow_loader_env).
LOADER_ENV = frozenset(
    {
        "PATH",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONSTARTUP",
        "PYTHONUSERBASE",
        "NODE_OPTIONS",
        "NODE_PATH",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "CLASSPATH",
        "PERL5LIB",
        "PERL5OPT",
        "RUBYOPT",
        "RUBYLIB",
        "BASH_ENV",
        "ENV",
        "GCONV_PATH",
    }
)
LOADER_PREFIXES = ("LD_", "DYLD_")

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
MAX_HAND_LIMIT = 100_000


SESSION = "session"  # the rules' own match: elimination, until end_players or the hand limit
FIXED_HANDS = "fixed_hands"  # exactly hand_limit hands, stacks too deep to run out (duplicate)
MATCH_FORMATS = ("auto", SESSION, FIXED_HANDS)

Format = Literal["round_robin", "bankroll"]
FORMATS: tuple[Format, ...] = ("round_robin", "bankroll")


class ConfigError(ValueError):
    """One mistake in a league file: ``FILE: KEY: PROBLEM`` on one line."""


@dataclasses.dataclass(frozen=True)
class ScheduleSettings:
    kind: str = AUTO
    # The seat rotations of a table share one deal seed (default: unless a bot is remote).
    duplicate: bool = True
    cycles: int = 1  # the whole schedule is played this many times, with fresh seeds
    meetings: int = 1  # balanced: every pair of bots shares at least this many tables
    round_robin_limit: int = 500  # auto: round robin up to this many tables, else balanced
    candidates: int = 0  # gauntlet: the first N bots play the rest (the field), never each other


@dataclasses.dataclass(frozen=True)
class BankrollSettings:
    max_rounds: int = 100  # a bound, in case the bots never go broke


@dataclasses.dataclass(frozen=True)
class RemoteSettings:
    """Where a league with remote bots listens, and how long it waits for an absent one."""

    host: str = "127.0.0.1"
    port: int = 7464
    wait: float = 300.0  # seconds from the start (or from a drop) before playing without it
    tokens: Path | None = None  # None: ``<league file stem>.tokens.json`` beside the file


@dataclasses.dataclass(frozen=True)
class LeagueConfig:
    """A checked league file. ``bots[i]`` is bot number i everywhere (schedule, database)."""

    path: Path
    name: str
    format: Format
    seed: int | None  # None: drawn when the database is created, and kept there
    table_size: int
    rules: Rules  # the preset, the options and the hand limit
    preset: str
    options: Mapping[str, object]
    time_control: TimeControl
    schedule: ScheduleSettings
    bankroll: BankrollSettings
    bots: tuple[BotSpec, ...]
    logs: Path | None  # None: beside the database (``log_dir``)
    keep_logs: bool
    raw_bots: tuple[Mapping[str, object], ...]  # as written, for the identity
    remote: RemoteSettings = RemoteSettings()  # not in the identity: cannot change a result
    sandbox_level: str = DEFAULT_LEVEL
    sandbox_limits: Limits = dataclasses.field(default_factory=Limits)
    public_deals: bool = False  # the cards follow from the seed (research), not a secret key

    def log_dir(self, db: Path) -> Path | None:
        """Where match logs go: ``league.logs``, else ``<db name>-logs`` beside the database."""
        if not self.keep_logs:
            return None
        return self.logs if self.logs is not None else db.with_name(f"{db.stem}-logs")

    @property
    def tokens_path(self) -> Path:
        """Where ``newmarket tokens`` keeps the remote bots' tokens for this league."""
        if self.remote.tokens is not None:
            return self.remote.tokens
        return self.path.resolve().parent / f"{self.path.stem}.tokens.json"

    @property
    def bot_names(self) -> list[str]:
        return [bot.name for bot in self.bots]

    def identity(self) -> dict[str, object]:
        """The league as written, defaults filled in: what a database must match to resume."""
        league: dict[str, object] = {
            "format": self.format,
            "seed": self.seed,
            "table_size": self.table_size,
            "hand_limit": self.rules.hand_limit,
        }
        if self.public_deals:  # only when set, so leagues stored before it existed still resume
            league["public_deals"] = True
        return {
            "league": league,
            # candidates only when set, so leagues stored before it existed still resume
            "schedule": {
                key: value
                for key, value in dataclasses.asdict(self.schedule).items()
                if key != "candidates" or value
            },
            "bankroll": dataclasses.asdict(self.bankroll),
            "rules": self.rules.to_dict(),
            "time_control": self.time_control.to_json(),
            "bots": [dict(bot) for bot in self.raw_bots],
        }


def load_config(path: Path) -> LeagueConfig:
    """Read and check a league file; raises ``ConfigError`` (one line) on the first mistake."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the file: {error.strerror or error}") from None
    return parse_config(text, path)


def parse_config(text: str, path: Path) -> LeagueConfig:
    """Check the TOML ``text`` of the league file at ``path`` (its directory anchors paths)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    return ConfigReader(path).read(data)


class Section:
    """One TOML table: typed reads by key, and a final check that no unknown key is left.

    Shared with the competition server's reader for its own sections.
    """

    def __init__(self, reader: ConfigReader, data: object, where: str) -> None:
        self.reader = reader
        self.where = where
        if not isinstance(data, dict):
            reader.fail(where, f"must be a table, got {_kind(data)}")
        self.data: dict[str, Any] = data

    def key(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def has(self, name: str) -> bool:
        return name in self.data

    def raw(self, name: str) -> object:
        return self.data.get(name)

    def integer(self, name: str, default: int | None, low: int, high: int | None = None) -> int:
        value: object = self.data.get(name, default)
        if value is None:
            self.reader.fail(self.key(name), "is required (a whole number)")
        if not isinstance(value, int) or isinstance(value, bool):
            self.reader.fail(self.key(name), f"must be a whole number, got {_kind(value)}")
        if value < low or (high is not None and value > high):
            bound = f"{low} to {high}" if high is not None else f"at least {low}"
            self.reader.fail(self.key(name), f"must be {bound}, got {value}")
        return value

    def number(self, name: str, default: float) -> float:
        value: object = self.data.get(name, default)
        if not isinstance(value, int | float) or isinstance(value, bool):
            self.reader.fail(self.key(name), f"must be a number of seconds, got {_kind(value)}")
        return float(value)

    def boolean(self, name: str, default: bool) -> bool:
        value: object = self.data.get(name, default)
        if not isinstance(value, bool):
            self.reader.fail(self.key(name), f"must be true or false, got {_kind(value)}")
        return value

    def text(self, name: str, default: str | None, choices: tuple[str, ...] = ()) -> str:
        value: object = self.data.get(name, default)
        if value is None:
            self.reader.fail(self.key(name), "is required (a string)")
        if not isinstance(value, str):
            self.reader.fail(self.key(name), f"must be a string, got {_kind(value)}")
        if choices and value not in choices:
            self.reader.fail(
                self.key(name), f"{value!r} is not one of {', '.join(map(repr, choices))}"
            )
        return value

    def finish(self, known: tuple[str, ...]) -> None:
        for name in self.data:
            if name not in known:
                self.reader.fail(
                    self.key(name), f"unknown key; known keys here: {', '.join(known)}"
                )


class ConfigReader:
    """Reads a league file into a ``LeagueConfig``, failing with one line naming the key.

    Public with ``Section``: the competition server's reader (``referee.server.config``)
    subclasses it, so the sections both files have read and fail the same way.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.base = path.resolve().parent
        self.allow_loader_env = False

    def fail(self, key: str, problem: str) -> NoReturn:
        problem = " ".join(problem.split())  # one line, whatever a library said
        raise ConfigError(f"{self.path}: {key}: {problem}")

    def read(self, data: dict[str, Any]) -> LeagueConfig:
        top = Section(self, data, "")
        top.finish(
            ("league", "schedule", "bankroll", "rules", "time_control", "bots", "remote", "sandbox")
        )

        league = Section(self, data.get("league", {}), "league")
        name = league.text("name", self.path.stem)
        fmt = league.text("format", "round_robin", FORMATS)
        seed = league.integer("seed", 0, 0) if league.has("seed") else None
        public_deals = league.boolean("public_deals", False)
        if public_deals and seed is None:
            self.fail(
                "league.public_deals",
                "public deals follow from the league's seed: give league.seed too",
            )
        table_size = league.integer("table_size", 4, MIN_PLAYERS, MAX_PLAYERS)
        hand_limit = None
        if league.has("hand_limit"):
            hand_limit = league.integer("hand_limit", 0, 1, MAX_HAND_LIMIT)
        keep_logs, logs = self.logs(league)
        match = league.text("match", "auto", MATCH_FORMATS)
        league.finish(
            (
                "name",
                "format",
                "seed",
                "public_deals",
                "table_size",
                "hand_limit",
                "logs",
                "match",
            )
        )

        bankroll = self.bankroll(data, fmt)
        preset_name, options, rules = self.rules(data, hand_limit)
        rules = self.match_format(match, fmt, preset_name, options, rules, table_size)
        time_control = self.time_control(data)
        sandbox_table = data.get("sandbox", {})
        self.allow_loader_env = (
            isinstance(sandbox_table, dict) and sandbox_table.get("allow_loader_env") is True
        )
        bots, raw_bots = self.bots(data)
        schedule = self.schedule(data, fmt, any(bot.remote for bot in bots))
        remote = self.remote(data)
        sandbox_level, sandbox_limits = self.sandbox(data)

        if not league.has("table_size"):  # the default seats a league of 3 bots too
            table_size = min(table_size, len(bots))
        if table_size > len(bots):
            self.fail(
                "league.table_size",
                f"{table_size} is larger than the number of bots ({len(bots)})",
            )
        if rules.end_players >= table_size:
            self.fail(
                "league.table_size",
                f"a table of {table_size} must seat more players than the rules' end_players "
                f"({rules.end_players}), or no match could be played",
            )
        return LeagueConfig(
            path=self.path,
            name=name,
            format=fmt,  # type: ignore[arg-type]  # checked against FORMATS above
            seed=seed,
            table_size=table_size,
            rules=rules,
            preset=preset_name,
            options=options,
            time_control=time_control,
            schedule=schedule,
            bankroll=bankroll,
            bots=bots,
            logs=logs,
            keep_logs=keep_logs,
            raw_bots=raw_bots,
            remote=remote,
            sandbox_level=sandbox_level,
            sandbox_limits=sandbox_limits,
            public_deals=public_deals,
        )

    def remote(self, data: dict[str, Any]) -> RemoteSettings:
        section = Section(self, data.get("remote", {}), "remote")
        defaults = RemoteSettings()
        tokens = None
        if section.has("tokens"):
            tokens = self.base / Path(os.path.expanduser(section.text("tokens", None)))
        wait = section.number("wait", defaults.wait)
        if wait <= 0:
            self.fail("remote.wait", f"must be a positive number of seconds, got {wait:g}")
        settings = RemoteSettings(
            host=section.text("host", defaults.host),
            port=section.integer("port", defaults.port, 0, 65535),
            wait=wait,
            tokens=tokens,
        )
        section.finish(("host", "port", "wait", "tokens"))
        return settings

    def logs(self, league: Section) -> tuple[bool, Path | None]:
        value = league.raw("logs")
        if value is None or value is True:
            return True, None
        if value is False:
            return False, None
        if not isinstance(value, str) or not value.strip():
            self.fail("league.logs", f"must be a directory or false, got {_kind(value)}")
        return True, self.base / Path(os.path.expanduser(value))

    def schedule(self, data: dict[str, Any], fmt: str, remote_bots: bool) -> ScheduleSettings:
        if fmt != "round_robin":
            if "schedule" in data:
                self.fail("schedule", f"only a round_robin league has a schedule, not {fmt!r}")
            return ScheduleSettings()
        section = Section(self, data.get("schedule", {}), "schedule")
        settings = ScheduleSettings(
            kind=section.text("kind", AUTO, SCHEDULE_KINDS),
            # Duplicate deals need bots that forget a deal between rotations; a remote
            # bot runs on its owner's machine and can always remember, so a league with
            # one plays plain deals unless the file opts in (referee/league/deals.py).
            duplicate=section.boolean("duplicate", not remote_bots),
            cycles=section.integer("cycles", 1, 1, 1000),
            meetings=section.integer("meetings", 1, 1, 100),
            round_robin_limit=section.integer("round_robin_limit", 500, 1),
            candidates=section.integer("candidates", 0, 0, 1000),
        )
        section.finish(tuple(field.name for field in dataclasses.fields(ScheduleSettings)))
        if (settings.kind == GAUNTLET) != (settings.candidates > 0):
            self.fail(
                "schedule.candidates",
                'a gauntlet (kind = "gauntlet") names how many of the first bots are '
                "candidates, and only a gauntlet does",
            )
        return settings

    def bankroll(self, data: dict[str, Any], fmt: str) -> BankrollSettings:
        if fmt != "bankroll":
            if "bankroll" in data:
                self.fail("bankroll", f"only a bankroll league has this table, not {fmt!r}")
            return BankrollSettings()
        section = Section(self, data.get("bankroll", {}), "bankroll")
        settings = BankrollSettings(max_rounds=section.integer("max_rounds", 100, 1, 100_000))
        section.finish(tuple(field.name for field in dataclasses.fields(BankrollSettings)))
        return settings

    def match_format(
        self,
        match: str,
        fmt: str,
        preset_name: str,
        options: dict[str, object],
        rules: Rules,
        table_size: int,
    ) -> Rules:
        """``league.match``: the rules' session, or fixed hands with deep stacks (duplicate).

        ``auto`` is fixed hands for the ``newmarket`` preset, whose 20 chips and
        stake of 10 end a session after about one hand, and the session otherwise.
        """
        if match == "auto":
            auto = preset_name == "newmarket" and fmt == "round_robin"
            match = FIXED_HANDS if auto else SESSION
        if match == SESSION:
            return rules
        if fmt == "bankroll":
            self.fail("league.match", "a bankroll league carries chips: it plays sessions")
        if "starting_chips" in options:
            self.fail("league.match", "fixed_hands sets deep starting chips itself")
        # default: one round of deals, every seat deals once (docs/fidelity.md)
        hands = rules.hand_limit if "hand_limit" in options else table_size
        return fixed_hands(rules, hands)

    def rules(
        self, data: dict[str, Any], hand_limit: int | None
    ) -> tuple[str, dict[str, object], Rules]:
        section = Section(self, data.get("rules", {}), "rules")
        name = section.text("preset", DEFAULT_PRESET)
        options_section = Section(self, section.raw("options") or {}, "rules.options")
        options: dict[str, object] = dict(options_section.data)
        section.finish(("preset", "options"))
        try:
            base = preset(name)
        except RulesError as error:
            self.fail("rules.preset", str(error))
        if hand_limit is not None:
            if "hand_limit" in options:
                self.fail(
                    "league.hand_limit",
                    "also set as rules.options.hand_limit; give it in one place",
                )
            options["hand_limit"] = hand_limit
        try:
            rules = base.with_options(options)
        except RulesError as error:
            self.fail(*_option_key(str(error), options))
        return name, options, rules

    def sandbox(self, data: dict[str, Any]) -> tuple[str, Limits]:
        section = Section(self, data.get("sandbox", {}), "sandbox")
        level = section.text("level", DEFAULT_LEVEL, LEVELS)
        defaults = Limits()
        values: dict[str, int | None] = {}
        section.boolean("allow_loader_env", False)
        for name, field, unit in (
            ("cpu_seconds", "cpu_seconds", 1),
            ("open_files", "open_files", 1),
            ("file_size_mb", "file_size_bytes", MIB),
            ("processes", "processes", 1),
            ("memory_mb", "memory_bytes", MIB),
            ("address_space_mb", "address_space_bytes", MIB),
            ("scratch_mb", "scratch_bytes", MIB),
        ):
            default: int | None = getattr(defaults, field)
            low, high = LIMIT_RANGES[name]
            if section.raw(name) is False:
                values[field] = None  # false: no limit
            elif section.has(name):
                values[field] = section.integer(name, None, low, high) * unit
            else:
                values[field] = default
        section.finish(
            (
                "level",
                "cpu_seconds",
                "open_files",
                "file_size_mb",
                "processes",
                "memory_mb",
                "address_space_mb",
                "scratch_mb",
                "allow_loader_env",
            )
        )
        return level, Limits(**values)

    def time_control(self, data: dict[str, Any]) -> TimeControl:
        section = Section(self, data.get("time_control", {}), "time_control")
        defaults = TimeControl()
        values: dict[str, Any] = {}
        for field in ("move_time", "time_bank", "startup_time", "margin"):
            values[field] = section.number(field, getattr(defaults, field))
        values["max_faults"] = section.integer("max_faults", defaults.max_faults, 1)
        section.finish(("move_time", "time_bank", "startup_time", "margin", "max_faults"))
        try:
            return TimeControl(**values)
        except ValueError as error:
            message = str(error)
            field, _, problem = message.partition(": ")
            if field in values:
                self.fail(f"time_control.{field}", problem)
            self.fail("time_control", message)

    def bots(
        self, data: dict[str, Any]
    ) -> tuple[tuple[BotSpec, ...], tuple[Mapping[str, object], ...]]:
        entries: object = data.get("bots")
        if entries is None:
            self.fail("bots", "no bots: add [[bots]] tables with a name and a command")
        if not isinstance(entries, list):
            self.fail("bots", f"must be an array of tables ([[bots]]), got {_kind(entries)}")
        specs: list[BotSpec] = []
        raws: list[Mapping[str, object]] = []
        first_index: dict[str, int] = {}
        for index, entry in enumerate(entries):
            spec, raw = self.bot(index, entry)
            if spec.name in first_index:
                self.fail(
                    f"bots[{index}].name",
                    f"{spec.name!r} is used twice (also bots[{first_index[spec.name]}]); "
                    "every bot needs its own name",
                )
            first_index[spec.name] = index
            specs.append(spec)
            raws.append(raw)
        if len(specs) < MIN_PLAYERS:
            self.fail("bots", f"a league needs at least {MIN_PLAYERS} bots, got {len(specs)}")
        return tuple(specs), tuple(raws)

    def bot(self, index: int, entry: object) -> tuple[BotSpec, Mapping[str, object]]:
        where = f"bots[{index}]"
        section = Section(self, entry, where)
        section.finish(("name", "command", "cwd", "env", "transport", "remote"))
        name = section.text("name", "") if section.has("name") else None
        if name is not None:
            self.check_name(f"{where}.name", name)
        if section.boolean("remote", False):
            return self.remote_bot(section, where, name)
        transport: Transport = section.text("transport", "stdio", TRANSPORTS)  # type: ignore[assignment]
        cwd = self.base
        if section.has("cwd"):
            cwd = self.base / Path(os.path.expanduser(section.text("cwd", None)))
            if not cwd.is_dir():
                self.fail(f"{where}.cwd", f"directory {str(cwd)!r} does not exist")
        env = self.env(section, where)
        command = section.raw("command")
        if command is None:
            self.fail(f"{where}.command", "is required: a bundled bot's name or a command line")
        self.check_command_text(f"{where}.command", command)
        spec = self.spec(where, command, name, transport)
        if name is None:
            self.check_name(f"{where}.name", spec.name)
        spec = dataclasses.replace(spec, cwd=cwd, env=env)
        self.check_command(f"{where}.command", spec)
        if not section.has("cwd"):
            # It runs in the league file's directory, which is not its own (the database,
            # tokens and logs are there): a sandbox shows it only the files it names.
            spec = dataclasses.replace(spec, env={**env, ENV_SHARED_DIR: "1"})
        raw: dict[str, object] = {
            "name": spec.name,
            "command": command,
            "cwd": section.raw("cwd"),
            "env": dict(env),
            "transport": transport,
        }
        return spec, raw

    def remote_bot(
        self, section: Section, where: str, name: str | None
    ) -> tuple[BotSpec, Mapping[str, object]]:
        """A bot that connects by itself with its token: a name and nothing to start."""
        for key in ("command", "cwd", "env"):
            if section.has(key):
                self.fail(f"{where}.{key}", "a remote bot is started by its owner; remove this key")
        if section.text("transport", "tcp") != "tcp":
            self.fail(f"{where}.transport", "a remote bot connects over tcp")
        if name is None:
            self.fail(f"{where}.name", "is required for a remote bot (its token is issued by name)")
        return BotSpec(name, (), transport="tcp"), {"name": name, "remote": True}

    def env(self, section: Section, where: str) -> dict[str, str]:
        value = section.raw("env")
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(f"{where}.env", f"must be a table of strings, got {_kind(value)}")
        env: dict[str, str] = {}
        for key, item in value.items():
            shown = f"{where}.env.{key!r}" if not ENV_NAME.fullmatch(key) else f"{where}.env.{key}"
            if not ENV_NAME.fullmatch(key):
                self.fail(shown, "is not a variable name (letters, digits and _)")
            if not isinstance(item, str):
                self.fail(shown, f"must be a string, got {_kind(item)}")
            if "\0" in item or CONTROL_CHARACTERS.search(item):
                self.fail(shown, "must not hold control characters")
            if not self.allow_loader_env and (key in LOADER_ENV or key.startswith(LOADER_PREFIXES)):
                self.fail(
                    shown,
                    "sets where the loader or runtime finds code; refused unless "
                    "[sandbox] allow_loader_env = true",
                )
            env[str(key)] = item
        return env

    def check_name(self, key: str, name: str) -> None:
        """A bot's name becomes file names and report pages: plain text, no paths."""
        if not name.strip():
            self.fail(key, "must not be empty")
        if CONTROL_CHARACTERS.search(name):
            self.fail(key, f"{name!r} holds control characters")
        if "/" in name or "\\" in name or ".." in name:
            self.fail(key, f"{name!r} must not hold '/', '\\' or '..'")
        if len(name) > 64:
            self.fail(key, f"is {len(name)} characters long; at most 64")

    def check_command_text(self, key: str, command: object) -> None:
        parts = [command] if isinstance(command, str) else command
        if isinstance(parts, list):
            for part in parts:
                if isinstance(part, str) and CONTROL_CHARACTERS.search(part):
                    self.fail(key, f"{part!r} holds control characters")

    def spec(self, where: str, command: object, name: str | None, transport: Transport) -> BotSpec:
        key = f"{where}.command"
        try:
            if isinstance(command, str):
                return resolve_bot(command, name, transport=transport)
            if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
                argv = tuple(command)
                return resolve_bot(shlex.join(argv), name, transport=transport)
        except ValueError as error:
            self.fail(key, str(error))
        self.fail(key, f"must be a string or a non-empty list of strings, got {_kind(command)}")

    def check_command(self, key: str, spec: BotSpec) -> None:
        """The program (and a script it is given) must exist; a bundled bot must be able to run."""
        if spec.unavailable is not None:
            self.fail(key, f"bundled bot cannot run here: {spec.unavailable}")
        if not spec.command:
            return  # a remote TCP bot, started by someone else
        why = why_cannot_start(spec.command, spec.cwd or self.base, spec.env)
        if why is not None:
            self.fail(key, f"{why}, for bot {spec.name!r}")


def _option_key(message: str, options: Mapping[str, object]) -> tuple[str, str]:
    """The key of a rule option an engine ``RulesError`` names, and the problem without it."""
    unknown = re.match(r"unknown rule option '([^']*)'(.*)", message)
    if unknown:
        return f"rules.options.{unknown.group(1)}", "unknown rule option" + unknown.group(2)
    option, sep, problem = message.partition(": ")
    if sep and re.fullmatch(r"[a-z_]+", option):
        if option == "hand_limit" and "hand_limit" in options:
            return "league.hand_limit", problem
        if option in options:
            return f"rules.options.{option}", problem
        return f"rules ({option})", problem
    return "rules", message


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"a number ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__
