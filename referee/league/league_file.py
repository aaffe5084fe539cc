"""A league's TOML file, read and checked completely before anything starts.

An overnight league that dies at 3 a.m. on a typo is the failure this module
exists to prevent, so every check that can be made without playing is made
here: unknown keys, types, the preset and every rule option (through
``Rules.with_options``, which names the option), the table size against the
number of bots and the rules' ``end_players``, duplicate bot names, bundled
bots that cannot run here, and programs or scripts that do not exist.  Each
mistake is one ``ConfigError`` line, ``FILE: KEY: PROBLEM``, naming the key as
it is spelled in the file (``bots[2].command``).  Each section is declared
below (or, for those a competition file has too, in ``referee.settings.shared``)
as a struct with its types, defaults and bounds, and decoded with msgspec
(``referee.settings.sections``); the checks that need more than one key follow.

``LeagueConfig.identity()`` is the league as written (with defaults filled
in, paths as text) and is what the results database stores: a database
refuses a league whose identity differs, whatever the file is called or
wherever it moved.  What cannot change a result is not part of it: the
display name, where logs go, ``--jobs`` and ``--db``.

The file's shape (every key is optional unless marked)::

    [league]  name, format ("round_robin" | "bankroll"), seed (the schedule's;
              default: drawn at the first start and kept in the database),
              public_deals (true: the cards follow from the seed, for research;
              default false: from a secret key in the database, ``referee.match.dealkey``),
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
              with a token from ``newmarket tokens``; see ``referee.transport.lobby``)
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
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, NoReturn, cast

import msgspec
from msgspec import Meta

from engine.rules import Rules
from engine.state import MAX_PLAYERS, MIN_PLAYERS
from referee.bots import TRANSPORTS, BotSpec, Transport, resolve_bot
from referee.league.schedule import AUTO, GAUNTLET, SCHEDULE_KINDS
from referee.match.archive import DEFAULT_LOG_FORM, LOG_FORMS, LogForm
from referee.sandbox import DEFAULT_LEVEL, Limits
from referee.sandbox.isolation import ENV_SHARED_DIR
from referee.scoring.duplicate import fixed_hands
from referee.settings.cluster import ClusterSection, ClusterTLS, tls_of
from referee.settings.sections import ConfigError as ConfigError  # the commands' name for it
from referee.settings.sections import Section, decode, fail, kind, one_of
from referee.settings.shared import (
    LIMIT_RANGES as LIMIT_RANGES,  # where the docs and the hostile tests look for them
)
from referee.settings.shared import (
    RemoteSettings,
    RulesSection,
    SandboxSection,
    TimeControlSection,
    parse_toml,
    paths_from,
    read_text,
    rules_of,
    sandbox_of,
    time_control_of,
)
from referee.storage.stderr_files import file_safe
from referee.transport.process import why_cannot_start
from referee.transport.timecontrol import TimeControl

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
MAX_HAND_LIMIT = 100_000


SESSION = "session"  # the rules' own match: elimination, until end_players or the hand limit
FIXED_HANDS = "fixed_hands"  # exactly hand_limit hands, stacks too deep to run out (duplicate)
MATCH_FORMATS = ("auto", SESSION, FIXED_HANDS)

Format = Literal["round_robin", "bankroll"]
FORMATS: tuple[Format, ...] = ("round_robin", "bankroll")


class LeagueSection(Section, frozen=True):
    """[league]; ``None`` is a key the file left out (its default depends on the rest)."""

    name: str | None = None  # default: the file's stem
    format: Annotated[str, one_of(FORMATS)] = "round_robin"
    seed: Annotated[int, Meta(ge=0)] | None = None
    public_deals: bool = False
    table_size: Annotated[int, Meta(ge=MIN_PLAYERS, le=MAX_PLAYERS)] | None = None
    hand_limit: Annotated[int, Meta(ge=1, le=MAX_HAND_LIMIT)] | None = None
    logs: Annotated[str | bool, Meta(extra={"expected": "a directory or false"})] = True
    match: Annotated[str, one_of(MATCH_FORMATS)] = "auto"
    # How each match's log is kept: a compact record, or full JSON lines (match/archive.py).
    match_logs: Annotated[str, one_of(LOG_FORMS)] = DEFAULT_LOG_FORM


class ScheduleSettings(Section, frozen=True):
    """[schedule] (a round robin league's), as the league plays it."""

    kind: Annotated[str, one_of(SCHEDULE_KINDS)] = AUTO
    # The seat rotations of a table share one deal seed (default: unless a bot is remote).
    duplicate: bool = True
    # the whole schedule is played this many times, with fresh seeds
    cycles: Annotated[int, Meta(ge=1, le=1000)] = 1
    # balanced: every pair of bots shares at least this many tables
    meetings: Annotated[int, Meta(ge=1, le=100)] = 1
    # auto: round robin up to this many tables, else balanced
    round_robin_limit: Annotated[int, Meta(ge=1)] = 500
    # gauntlet: the first N bots play the rest (the field), never each other
    candidates: Annotated[int, Meta(ge=0, le=1000)] = 0


class BankrollSettings(Section, frozen=True):
    """[bankroll] (a bankroll league's)."""

    max_rounds: Annotated[int, Meta(ge=1, le=100_000)] = 100  # in case the bots never go broke


# A bot's command: a bundled bot's name or a command line, or its argv as a list.
CommandLine = Annotated[
    str | list[str], Meta(extra={"expected": "a string or a non-empty list of strings"})
]


class BotEntry(Section, frozen=True):
    """One [[bots]] table; ``None`` is a key the file left out."""

    name: str | None = None  # default: the bundled bot's or the program's name
    command: CommandLine | None = None
    cwd: str | None = None
    env: Annotated[dict[str, Any], Meta(extra={"expected": "a table of strings"})] | None = None
    transport: Annotated[str, one_of(TRANSPORTS)] | None = None
    remote: bool = False


class LeagueFile(Section, frozen=True):
    """A league file: its sections, in the order ``unknown key`` lists them."""

    league: LeagueSection = LeagueSection()
    schedule: ScheduleSettings | None = None  # None: absent
    bankroll: BankrollSettings | None = None  # None: absent
    rules: RulesSection = RulesSection()
    time_control: TimeControlSection = TimeControlSection()
    bots: (
        Annotated[list[BotEntry], Meta(extra={"expected": "an array of tables ([[bots]])"})] | None
    ) = None
    remote: RemoteSettings = RemoteSettings()
    sandbox: SandboxSection = SandboxSection()
    cluster: ClusterSection | None = None  # --cluster over TLS (referee.settings.cluster)


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
    remote: RemoteSettings = dataclasses.field(
        default_factory=RemoteSettings
    )  # not in identity: cannot change a result
    sandbox_level: str = DEFAULT_LEVEL
    sandbox_limits: Limits = dataclasses.field(default_factory=Limits)
    public_deals: bool = False  # the cards follow from the seed (research), not a secret key
    cluster: ClusterTLS | None = None  # [cluster]: TLS certificates; not in identity
    match_logs: LogForm = DEFAULT_LOG_FORM  # not in identity: how logs are kept, not a result

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
                for key, value in msgspec.structs.asdict(self.schedule).items()
                if key != "candidates" or value
            },
            "bankroll": msgspec.structs.asdict(self.bankroll),
            "rules": self.rules.to_dict(),
            "time_control": self.time_control.to_json(),
            "bots": [dict(bot) for bot in self.raw_bots],
        }


def load_config(path: Path) -> LeagueConfig:
    """Read and check a league file; raises ``ConfigError`` (one line) on the first mistake."""
    return parse_config(read_text(path), path)


def parse_config(text: str, path: Path) -> LeagueConfig:
    """Check the TOML ``text`` of the league file at ``path`` (its directory anchors paths)."""
    return _Reader(path).read(parse_toml(text, path))


class _Reader:
    """Reads a decoded league file into a ``LeagueConfig``, failing with one line naming the key."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.base = path.resolve().parent
        self.allow_loader_env = False

    def fail(self, key: str, problem: str) -> NoReturn:
        fail(self.path, key, problem)

    def read(self, data: dict[str, object]) -> LeagueConfig:
        file = decode(data, LeagueFile, self.path, dec_hook=paths_from(self.base))
        league = file.league
        fmt: Format = "bankroll" if league.format == "bankroll" else "round_robin"
        if league.public_deals and league.seed is None:
            self.fail(
                "league.public_deals",
                "public deals follow from the league's seed: give league.seed too",
            )
        keep_logs, logs = self.logs(league)
        bankroll = self.bankroll(file, fmt)
        options, rules = rules_of(file.rules, league.hand_limit, "league.hand_limit", self.path)
        table_size = league.table_size if league.table_size is not None else 4
        rules = self.match_format(league.match, fmt, file.rules.preset, options, rules, table_size)
        time_control = time_control_of(file.time_control, self.path)
        self.allow_loader_env = file.sandbox.allow_loader_env
        bots, raw_bots = self.bots(file.bots)
        schedule = self.schedule(file, data, fmt, any(bot.remote for bot in bots))
        sandbox_level, sandbox_limits = sandbox_of(file.sandbox, self.path)
        return LeagueConfig(
            path=self.path,
            name=league.name if league.name is not None else self.path.stem,
            format=fmt,
            seed=league.seed,
            table_size=self.table_size(league.table_size, rules, len(bots)),
            rules=rules,
            preset=file.rules.preset,
            options=options,
            time_control=time_control,
            schedule=schedule,
            bankroll=bankroll,
            bots=bots,
            logs=logs,
            keep_logs=keep_logs,
            raw_bots=raw_bots,
            remote=file.remote,
            sandbox_level=sandbox_level,
            sandbox_limits=sandbox_limits,
            public_deals=league.public_deals,
            cluster=tls_of(file.cluster, self.path),
            match_logs=cast(LogForm, league.match_logs),
        )

    def table_size(self, given: int | None, rules: Rules, bots: int) -> int:
        """``league.table_size`` (default 4, or every bot of a smaller league), checked."""
        table_size = given if given is not None else min(4, bots)
        if table_size > bots:
            self.fail(
                "league.table_size",
                f"{table_size} is larger than the number of bots ({bots})",
            )
        if rules.end_players >= table_size:
            self.fail(
                "league.table_size",
                f"a table of {table_size} must seat more players than the rules' end_players "
                f"({rules.end_players}), or no match could be played",
            )
        return table_size

    def logs(self, league: LeagueSection) -> tuple[bool, Path | None]:
        value = league.logs
        if value is True:
            return True, None
        if value is False:
            return False, None
        if not value.strip():
            self.fail("league.logs", f"must be a directory or false, got {kind(value)}")
        return True, self.base / Path(os.path.expanduser(value))

    def schedule(
        self, file: LeagueFile, data: dict[str, object], fmt: str, remote_bots: bool
    ) -> ScheduleSettings:
        if fmt != "round_robin":
            if file.schedule is not None:
                self.fail("schedule", f"only a round_robin league has a schedule, not {fmt!r}")
            return ScheduleSettings()
        settings = file.schedule or ScheduleSettings()
        given = data.get("schedule")
        if not (isinstance(given, dict) and "duplicate" in given):
            # Duplicate deals need bots that forget a deal between rotations; a remote
            # bot runs on its owner's machine and can always remember, so a league with
            # one plays plain deals unless the file opts in (referee/league/deals.py).
            settings = msgspec.structs.replace(settings, duplicate=not remote_bots)
        if (settings.kind == GAUNTLET) != (settings.candidates > 0):
            self.fail(
                "schedule.candidates",
                'a gauntlet (kind = "gauntlet") names how many of the first bots are '
                "candidates, and only a gauntlet does",
            )
        return settings

    def bankroll(self, file: LeagueFile, fmt: str) -> BankrollSettings:
        if fmt != "bankroll":
            if file.bankroll is not None:
                self.fail("bankroll", f"only a bankroll league has this table, not {fmt!r}")
            return BankrollSettings()
        return file.bankroll or BankrollSettings()

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

    def bots(
        self, entries: list[BotEntry] | None
    ) -> tuple[tuple[BotSpec, ...], tuple[Mapping[str, object], ...]]:
        if entries is None:
            self.fail("bots", "no bots: add [[bots]] tables with a name and a command")
        specs: list[BotSpec] = []
        raws: list[Mapping[str, object]] = []
        first_index: dict[str, int] = {}
        by_file: dict[str, int] = {}  # a stderr file's name -> the bot it is for
        for index, entry in enumerate(entries):
            spec, raw = self.bot(index, entry)
            if spec.name in first_index:
                self.fail(
                    f"bots[{index}].name",
                    f"{spec.name!r} is used twice (also bots[{first_index[spec.name]}]); "
                    "every bot needs its own name",
                )
            # Two names, one stderr file ("a b" and "a_b"): one bot's text under the other's name.
            other = by_file.setdefault(file_safe(spec.name), index)
            if other != index:
                self.fail(
                    f"bots[{index}].name",
                    f"{spec.name!r} and {specs[other].name!r} (bots[{other}]) would share the "
                    f"stderr file {file_safe(spec.name)}-N.stderr; rename one",
                )
            first_index[spec.name] = index
            specs.append(spec)
            raws.append(raw)
        if len(specs) < MIN_PLAYERS:
            self.fail("bots", f"a league needs at least {MIN_PLAYERS} bots, got {len(specs)}")
        return tuple(specs), tuple(raws)

    def bot(self, index: int, entry: BotEntry) -> tuple[BotSpec, Mapping[str, object]]:
        where = f"bots[{index}]"
        if entry.name is not None:
            self.check_name(f"{where}.name", entry.name)
        if entry.remote:
            return self.remote_bot(entry, where)
        transport: Transport = "tcp" if entry.transport == "tcp" else "stdio"
        cwd = self.base
        if entry.cwd is not None:
            cwd = self.base / Path(os.path.expanduser(entry.cwd))
            if not cwd.is_dir():
                self.fail(f"{where}.cwd", f"directory {str(cwd)!r} does not exist")
        env = self.env(entry.env, where)
        command = entry.command
        if command is None:
            self.fail(f"{where}.command", "is required: a bundled bot's name or a command line")
        self.check_command_text(f"{where}.command", command)
        spec = self.spec(where, command, entry.name, transport)
        if entry.name is None:
            self.check_name(f"{where}.name", spec.name)
        spec = dataclasses.replace(spec, cwd=cwd, env=env)
        self.check_command(f"{where}.command", spec)
        if entry.cwd is None:
            # It runs in the league file's directory, which is not its own (the database,
            # tokens and logs are there): a sandbox shows it only the files it names.
            spec = dataclasses.replace(spec, env={**env, ENV_SHARED_DIR: "1"})
        raw: dict[str, object] = {
            "name": spec.name,
            "command": command,
            "cwd": entry.cwd,
            "env": dict(env),
            "transport": transport,
        }
        return spec, raw

    def remote_bot(self, entry: BotEntry, where: str) -> tuple[BotSpec, Mapping[str, object]]:
        """A bot that connects by itself with its token: a name and nothing to start."""
        for key in ("command", "cwd", "env"):
            if getattr(entry, key) is not None:
                self.fail(f"{where}.{key}", "a remote bot is started by its owner; remove this key")
        if entry.transport not in (None, "tcp"):
            self.fail(f"{where}.transport", "a remote bot connects over tcp")
        if entry.name is None:
            self.fail(f"{where}.name", "is required for a remote bot (its token is issued by name)")
        return BotSpec(entry.name, (), transport="tcp"), {"name": entry.name, "remote": True}

    def env(self, value: dict[str, object] | None, where: str) -> dict[str, str]:
        if value is None:
            return {}
        env: dict[str, str] = {}
        for key, item in value.items():
            shown = f"{where}.env.{key!r}" if not ENV_NAME.fullmatch(key) else f"{where}.env.{key}"
            if not ENV_NAME.fullmatch(key):
                self.fail(shown, "is not a variable name (letters, digits and _)")
            if not isinstance(item, str):
                self.fail(shown, f"must be a string, got {kind(item)}")
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

    def check_command_text(self, key: str, command: str | list[str]) -> None:
        for part in [command] if isinstance(command, str) else command:
            if CONTROL_CHARACTERS.search(part):
                self.fail(key, f"{part!r} holds control characters")

    def spec(
        self, where: str, command: str | list[str], name: str | None, transport: Transport
    ) -> BotSpec:
        key = f"{where}.command"
        try:
            if isinstance(command, str):
                return resolve_bot(command, name, transport=transport)
            if command:
                return resolve_bot(shlex.join(command), name, transport=transport)
        except ValueError as error:
            self.fail(key, str(error))
        self.fail(key, f"must be a string or a non-empty list of strings, got {kind(command)}")

    def check_command(self, key: str, spec: BotSpec) -> None:
        """The program (and a script it is given) must exist; a bundled bot must be able to run."""
        if spec.unavailable is not None:
            self.fail(key, f"bundled bot cannot run here: {spec.unavailable}")
        if not spec.command:
            return  # a remote TCP bot, started by someone else
        why = why_cannot_start(spec.command, spec.cwd or self.base, spec.env)
        if why is not None:
            self.fail(key, f"{why}, for bot {spec.name!r}")
